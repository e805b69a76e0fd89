#ifndef ORDO_PLATFORM_CALL_WORKSPACE_HPP
#define ORDO_PLATFORM_CALL_WORKSPACE_HPP

// Temporary memory for the kernels that one call enqueues on an execution space instance, freed
// when the call returns. On Kokkos::Cuda with device memory it is stream-ordered: allocated and
// freed on the instance's stream (cudaMallocFromPoolAsync, cudaFreeAsync) from a memory pool of
// ordo's that keeps up to cuda_workspace_pool_bytes between calls. Kokkos' CudaSpace allocates with
// cudaMalloc and frees with cudaFree, which waits for the whole device; on the H200 of the third
// GPU run a chain of six products near 1000 x 1000 took 340 us through ordo::evaluate against
// 237 us for the same cuBLAS calls into temporaries allocated once (docs/gpu.md). Elsewhere, and
// where a device has no memory pools, the workspace is a Kokkos View. Either way Kokkos Tools see
// the allocation under its label, with the bytes a View of the same values would report.

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <type_traits>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace ordo::detail {

#if defined(KOKKOS_ENABLE_CUDA)
// Device memory ordo's pools keep between calls (per device); a larger workspace goes back to the
// device when the stream next synchronizes.
inline constexpr std::uint64_t cuda_workspace_pool_bytes = std::uint64_t{256} << 20;

// ordo's memory pool on `device`, created on first use and destroyed by a Kokkos finalize hook;
// nullptr where the device or driver has no memory pools.
inline cudaMemPool_t cuda_workspace_pool(int device) {
  constexpr int max_devices = 64;
  struct registry {
    std::mutex mutex;
    cudaMemPool_t pools[max_devices] = {};
    bool tried[max_devices] = {};
    bool hook_installed = false;
  };
  static registry* const r = new registry;  // never destroyed: the finalize hook empties it
  if (device < 0 || device >= max_devices) return nullptr;
  const std::lock_guard<std::mutex> lock(r->mutex);
  if (!r->tried[device]) {
    r->tried[device] = true;
    int supported = 0;
    if (cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device) == cudaSuccess && supported) {
      cudaMemPoolProps props = {};
      props.allocType = cudaMemAllocationTypePinned;
      props.handleTypes = cudaMemHandleTypeNone;
      props.location.type = cudaMemLocationTypeDevice;
      props.location.id = device;
      cudaMemPool_t pool = nullptr;
      if (cudaMemPoolCreate(&pool, &props) == cudaSuccess) {
        std::uint64_t keep = cuda_workspace_pool_bytes;
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
        r->pools[device] = pool;
      }
    }
    (void)cudaGetLastError();  // a refusal above is not the caller's error
    if (!r->hook_installed) {
      Kokkos::push_finalize_hook([] {
        const std::lock_guard<std::mutex> guard(r->mutex);
        for (int d = 0; d < max_devices; ++d) {
          if (r->pools[d] != nullptr) cudaMemPoolDestroy(r->pools[d]);
          r->pools[d] = nullptr;
          r->tried[d] = false;
        }
        r->hook_installed = false;
      });
      r->hook_installed = true;
    }
  }
  return r->pools[device];
}
#endif

template <class T, class ExecutionSpace, class MemorySpace>
class call_workspace {
 public:
  call_workspace(const ExecutionSpace& space, const char* label, std::size_t count) : space_(space), label_(label) {
    if (count == 0) return;
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<ExecutionSpace, Kokkos::Cuda> && std::is_same_v<MemorySpace, Kokkos::CudaSpace>) {
      if (cudaMemPool_t pool = cuda_workspace_pool(space.cuda_device())) {
        void* p = nullptr;
        if (cudaMallocFromPoolAsync(&p, count * sizeof(T), pool, space.cuda_stream()) == cudaSuccess) {
          data_ = static_cast<T*>(p);
          bytes_ = count * sizeof(T);
          Kokkos::Tools::allocateData(Kokkos::Tools::make_space_handle(MemorySpace::name()), label_, data_,
                                      reported_bytes());
          return;
        }
        (void)cudaGetLastError();  // out of pool memory: the View below reports what is wrong
      }
    }
#endif
    view_ = Kokkos::View<T*, MemorySpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, label_), count);
    data_ = view_.data();
  }
  call_workspace(const call_workspace&) = delete;
  call_workspace& operator=(const call_workspace&) = delete;

  ~call_workspace() {
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<ExecutionSpace, Kokkos::Cuda> && std::is_same_v<MemorySpace, Kokkos::CudaSpace>) {
      if (bytes_ > 0) {
        Kokkos::Tools::deallocateData(Kokkos::Tools::make_space_handle(MemorySpace::name()), label_, data_,
                                      reported_bytes());
        cudaFreeAsync(data_, space_.cuda_stream());  // after the kernels enqueued before it
      }
    }
#endif
  }

  // Valid until the destructor; a View workspace must not be destroyed while kernels still use
  // it (its caller fences first), a stream-ordered one is freed after them.
  T* data() const { return data_; }

 private:
  // What a View of the same values reports: its span rounded up to 8 bytes.
  std::uint64_t reported_bytes() const { return (std::uint64_t{bytes_} + 7) / 8 * 8; }

  ExecutionSpace space_;
  std::string label_;
  Kokkos::View<T*, MemorySpace> view_;
  T* data_ = nullptr;
  std::size_t bytes_ = 0;  // of the stream-ordered allocation, 0 for a View
};

}  // namespace ordo::detail

#endif
