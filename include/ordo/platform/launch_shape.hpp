#ifndef ORDO_PLATFORM_LAUNCH_SHAPE_HPP
#define ORDO_PLATFORM_LAUNCH_SHAPE_HPP

// How a kernel cuts its work. A host space has a few threads that want long contiguous runs
// (caches, SIMD); a GPU wants thousands of threads whose neighbours touch neighbouring
// addresses (coalescing) and little state per thread. Each kernel picks its shape per execution
// space; both shapes are plain Kokkos and run on every space, so tests run the device shape on
// the host and check it against the host shape (docs/gpu.md).

#include <ordo/platform/execution.hpp>

namespace ordo::detail {

enum class launch_shape { host, device };

template <class ExecutionSpace>
inline constexpr launch_shape default_launch_shape_v =
    is_host_space_v<ExecutionSpace> ? launch_shape::host : launch_shape::device;

}  // namespace ordo::detail

#endif
