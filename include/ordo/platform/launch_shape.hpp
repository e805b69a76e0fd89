#ifndef ORDO_PLATFORM_LAUNCH_SHAPE_HPP
#define ORDO_PLATFORM_LAUNCH_SHAPE_HPP

// How a kernel cuts its work. A host space has a few threads that want long contiguous runs
// (caches, SIMD); a GPU wants thousands of threads whose neighbours touch neighbouring
// addresses (coalescing) and little state per thread. Each kernel picks its shape per execution
// space; both shapes are plain Kokkos and run on every space, so tests run the device shape on
// the host and check it against the host shape (docs/gpu.md).

#include <ordo/platform/execution.hpp>

#include <Kokkos_Core.hpp>

namespace ordo::detail {

enum class launch_shape { host, device };

template <class ExecutionSpace>
inline constexpr launch_shape default_launch_shape_v =
    is_host_space_v<ExecutionSpace> ? launch_shape::host : launch_shape::device;

// A team of `wanted` threads, or as many as the kernel's registers and scratch allow where that is
// fewer. `policy` carries the kernel's scratch; its own team size does not matter.
template <class Policy, class Functor>
int team_size_at_most(const Policy& policy, const Functor& functor, int wanted) {
  const int most = policy.team_size_max(functor, Kokkos::ParallelForTag());
  return most < wanted ? most : wanted;
}

}  // namespace ordo::detail

#endif
