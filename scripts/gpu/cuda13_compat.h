// Pre-included (nvcc -include) into every translation unit of a Kokkos build by scripts/gpu-check.
//
// CUDA 13 changed the signatures of three runtime calls that Kokkos 4.6's CUDA backend makes
// (core/src/Cuda/Kokkos_Cuda_Instance.hpp; the develop snapshot 4.6.99 makes the first two, the
// 4.6.01 release all three):
//   cudaGraphAddDependencies(graph, from, to, count)          gained an edge-data argument before count;
//   cudaMemPrefetchAsync(ptr, count, device, stream)          takes a cudaMemLocation and a flags word;
//   cudaMemAdvise(ptr, count, advice, device)                 takes a cudaMemLocation.
// These overloads give the old signatures their CUDA 12 meaning on top of the new calls, so that
// an unmodified Kokkos source builds with CUDA 13. They are ordo's own code and change nothing for
// a Kokkos that already calls the new signatures (the overloads are then simply unused), nor for
// CUDA before 13 (they are not declared).
#ifndef ORDO_GPU_CUDA13_COMPAT_H
#define ORDO_GPU_CUDA13_COMPAT_H

#if defined(__cplusplus) && defined(__CUDACC__)
#include <cuda_runtime_api.h>

#if defined(CUDART_VERSION) && CUDART_VERSION >= 13000
inline cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from,
                                            const cudaGraphNode_t* to, size_t count) {
  return cudaGraphAddDependencies(graph, from, to, nullptr, count);
}

// A device number as CUDA 12 read it: cudaCpuDeviceId is the host.
inline cudaMemLocation ordo_gpu_compat_location(int device) {
  cudaMemLocation location{};
  location.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  location.id = device == cudaCpuDeviceId ? 0 : device;
  return location;
}

inline cudaError_t cudaMemAdvise(const void* pointer, size_t count, cudaMemoryAdvise advice, int device) {
  return cudaMemAdvise(pointer, count, advice, ordo_gpu_compat_location(device));
}

inline cudaError_t cudaMemPrefetchAsync(const void* pointer, size_t count, int device, cudaStream_t stream = 0) {
  return cudaMemPrefetchAsync(pointer, count, ordo_gpu_compat_location(device), 0u, stream);
}
#endif
#endif

#endif
