#ifndef ORDO_PLATFORM_X86_CPU_DISPATCH_HPP
#define ORDO_PLATFORM_X86_CPU_DISPATCH_HPP

// Host kernels that are compiled twice, for the build's instruction set and for AVX2, and chosen
// at run time, as PyTorch's ATen chooses its CPU kernels: a plain x86-64 build (SSE2) then runs
// AVX2 code on CPUs that have it. Only where it can matter: x86-64 with g++ or clang, not under
// nvcc, and not when the build targets AVX2 already.
//
// ORDO_CPU_CAPABILITY=baseline in the environment keeps the build's own code (like PyTorch's
// ATEN_CPU_CAPABILITY=default); tests switch with set_host_capability().
//
// The AVX2 variants are compiled without FMA, so that they round exactly like the baseline code:
// kernels that fix their order of operations (ordo's do) give the same bits either way.

// Whether this build dispatches (ORDO_IMPL_DISPATCH_AVX2) is decided in core/config.hpp.

#include <ordo/core/config.hpp>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace ordo::detail {

enum class cpu_capability { baseline, avx2 };

// The instruction-set levels a dispatched host kernel is compiled for, as types: a kernel's body
// is a template on one (run<Isa>), so each level is an instantiation of its own, and
// run_for_host_isa (platform/host_dispatched.hpp) is the one place that chooses among them. A new
// level (AVX-512) is one more type here and one more branch there.
namespace isa {
struct baseline {
  static constexpr cpu_capability level = cpu_capability::baseline;
};
struct avx2 {
  static constexpr cpu_capability level = cpu_capability::avx2;
};
}  // namespace isa

inline cpu_capability detected_host_capability() {
#if defined(ORDO_IMPL_DISPATCH_AVX2)
  const char* requested = std::getenv("ORDO_CPU_CAPABILITY");
  if (requested != nullptr && std::strcmp(requested, "baseline") == 0) return cpu_capability::baseline;
  __builtin_cpu_init();  // needed when this runs from a static initializer
  return __builtin_cpu_supports("avx2") ? cpu_capability::avx2 : cpu_capability::baseline;
#else
  return cpu_capability::baseline;
#endif
}

inline std::atomic<cpu_capability>& host_capability_state() {
  static std::atomic<cpu_capability> state{detected_host_capability()};
  return state;
}

// What the dispatching kernels run on the host.
inline cpu_capability host_capability() { return host_capability_state().load(std::memory_order_relaxed); }

// For tests and benchmarks: requests a capability; AVX2 only if this build can dispatch to it and
// the CPU has it. Returns the capability now in use.
inline cpu_capability set_host_capability(cpu_capability requested) {
  cpu_capability granted = cpu_capability::baseline;
#if defined(ORDO_IMPL_DISPATCH_AVX2)
  if (requested == cpu_capability::avx2 && __builtin_cpu_supports("avx2")) granted = cpu_capability::avx2;
#else
  (void)requested;
#endif
  host_capability_state().store(granted, std::memory_order_relaxed);
  return granted;
}

}  // namespace ordo::detail

#endif
