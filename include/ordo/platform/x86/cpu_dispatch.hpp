#ifndef ORDO_PLATFORM_X86_CPU_DISPATCH_HPP
#define ORDO_PLATFORM_X86_CPU_DISPATCH_HPP

// Host kernels that are compiled up to three times, for the build's instruction set, for AVX2 and
// for AVX-512, and chosen at run time, as PyTorch's ATen chooses its CPU kernels: a plain x86-64
// build (SSE2) then runs AVX2 or AVX-512 code on CPUs that have it. Only where it can matter:
// x86-64 with g++ or clang, not under nvcc, and not for a level the build targets already.
//
// ORDO_CPU_CAPABILITY in the environment caps the level: baseline keeps the build's own code (like
// PyTorch's ATEN_CPU_CAPABILITY=default), avx2 stops below AVX-512, avx512 (or nothing) takes the
// best the CPU has; tests switch with set_host_capability().
//
// Every level gives the same bits (docs/precision.md, "One set of bits on every CPU"): the
// kernels fix their order of operations in explicit lanes, and no level fuses a multiply and an
// add (the AVX2 twin is compiled without FMA, the AVX-512 twin with contraction off).

// Whether this build dispatches (ORDO_IMPL_DISPATCH_AVX2) is decided in core/config.hpp.

#include <ordo/core/config.hpp>

#include <atomic>
#include <cstdlib>
#include <cstring>

#if defined(ORDO_IMPL_AVX2_FUNCTION)
#include <cpuid.h>
#endif

namespace ordo::detail {

// Ordered: each level runs on the CPUs of the levels above it too.
enum class cpu_capability { baseline, avx2, avx512 };

// The instruction-set levels a dispatched host kernel is compiled for, as types: a kernel's body
// is a template on one (run<Isa>), so each level is an instantiation of its own, and
// run_for_host_isa (platform/host_dispatched.hpp) is the one place that chooses among them.
namespace isa {
struct baseline {
  static constexpr cpu_capability level = cpu_capability::baseline;
};
struct avx2 {
  static constexpr cpu_capability level = cpu_capability::avx2;
};
// AVX-512 F, BW, DQ and VL: what every AVX-512 CPU since Skylake-SP has.
struct avx512 {
  static constexpr cpu_capability level = cpu_capability::avx512;
};
}  // namespace isa

#if defined(ORDO_IMPL_AVX2_FUNCTION)
// CPUID leaf 1, ECX bit 29 (clang 14's __builtin_cpu_supports does not know "f16c").
inline bool cpu_has_f16c() {
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  }();
  return has;
}
#endif

// Whether this build has kernels compiled for the level and the CPU can run them. The baseline
// is the build's own code, always there. The AVX2 and AVX-512 levels include F16C (half <->
// float conversions), which every CPU with AVX2 has.
inline bool host_can_run(cpu_capability level) {
  switch (level) {
    case cpu_capability::baseline: return true;
    case cpu_capability::avx2:
#if defined(ORDO_IMPL_DISPATCH_AVX2)
      __builtin_cpu_init();  // needed when this runs from a static initializer
      return __builtin_cpu_supports("avx2") && cpu_has_f16c();
#else
      return false;
#endif
    case cpu_capability::avx512:
#if defined(ORDO_IMPL_DISPATCH_AVX512)
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") && cpu_has_f16c();
#else
      return false;
#endif
  }
  return false;
}

// The highest level at most `cap` that this build and CPU can run.
inline cpu_capability best_host_level(cpu_capability cap) {
  for (cpu_capability level : {cpu_capability::avx512, cpu_capability::avx2}) {
    if (level <= cap && host_can_run(level)) return level;
  }
  return cpu_capability::baseline;
}

inline cpu_capability detected_host_capability() {
  cpu_capability cap = cpu_capability::avx512;
  if (const char* requested = std::getenv("ORDO_CPU_CAPABILITY")) {
    if (std::strcmp(requested, "baseline") == 0) cap = cpu_capability::baseline;
    if (std::strcmp(requested, "avx2") == 0) cap = cpu_capability::avx2;
  }
  return best_host_level(cap);
}

inline std::atomic<cpu_capability>& host_capability_state() {
  static std::atomic<cpu_capability> state{detected_host_capability()};
  return state;
}

// What the dispatching kernels run on the host.
inline cpu_capability host_capability() { return host_capability_state().load(std::memory_order_relaxed); }

// For tests and benchmarks: requests a level; granted is the highest at most that one which this
// build can dispatch to and the CPU has. Returns the level now in use.
inline cpu_capability set_host_capability(cpu_capability requested) {
  const cpu_capability granted = best_host_level(requested);
  host_capability_state().store(granted, std::memory_order_relaxed);
  return granted;
}

constexpr const char* to_string(cpu_capability level) noexcept {
  switch (level) {
    case cpu_capability::avx2: return "avx2";
    case cpu_capability::avx512: return "avx512";
    default: return "baseline";
  }
}

}  // namespace ordo::detail

#endif
