#ifndef ORDO_KERNELS_DETAIL_CUDA_LIBRARY_HANDLES_HPP
#define ORDO_KERNELS_DETAIL_CUDA_LIBRARY_HANDLES_HPP

// The handles ordo creates for a CUDA library (cuBLAS, cuSOLVER), one per host thread that calls
// it. They must be destroyed while CUDA is still up: a thread_local holder would outlive
// Kokkos::finalize (and the CUDA context with it) on the main thread. Kokkos::finalize runs a hook
// first that destroys every handle of the library and starts a new generation, so that a later
// Kokkos::initialize gets new ones. Each call binds the handle to its execution space's stream.

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace ordo::detail {

template <class Handle>
struct cuda_handle_registry {
  std::mutex mutex;
  std::vector<Handle> handles;
  std::uint64_t generation = 1;
  bool hook_installed = false;
};

// One registry per library: Create and Destroy name it (cublasCreate, cusolverDnCreate, ...).
template <class Handle, auto Create, auto Destroy>
cuda_handle_registry<Handle>& cuda_handles() {
  static cuda_handle_registry<Handle> registry;
  return registry;
}

template <class Handle, auto Create, auto Destroy>
void destroy_cuda_handles() {
  cuda_handle_registry<Handle>& registry = cuda_handles<Handle, Create, Destroy>();
  const std::lock_guard<std::mutex> lock(registry.mutex);
  for (Handle handle : registry.handles) Destroy(handle);
  registry.handles.clear();
  ++registry.generation;
  registry.hook_installed = false;
}

// This host thread's handle, created on first use in each Kokkos session. `what` names the
// creating call in the error: "ordo::gemm: cublasCreate".
template <class Handle, auto Create, auto Destroy>
Handle cuda_library_handle(const char* what) {
  thread_local Handle handle = nullptr;
  thread_local std::uint64_t generation = 0;
  cuda_handle_registry<Handle>& registry = cuda_handles<Handle, Create, Destroy>();
  const std::lock_guard<std::mutex> lock(registry.mutex);
  if (handle != nullptr && generation == registry.generation) return handle;
  const auto status = Create(&handle);
  if (static_cast<int>(status) != 0) {  // CUBLAS_STATUS_SUCCESS and CUSOLVER_STATUS_SUCCESS are 0
    handle = nullptr;
    throw std::runtime_error(std::string(what) + " failed with status " + std::to_string(static_cast<int>(status)));
  }
  registry.handles.push_back(handle);
  generation = registry.generation;
  if (!registry.hook_installed) {
    Kokkos::push_finalize_hook(destroy_cuda_handles<Handle, Create, Destroy>);
    registry.hook_installed = true;
  }
  return handle;
}

}  // namespace ordo::detail

#endif
