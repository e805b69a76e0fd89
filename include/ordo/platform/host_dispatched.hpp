#ifndef ORDO_PLATFORM_HOST_DISPATCHED_HPP
#define ORDO_PLATFORM_HOST_DISPATCHED_HPP

// Runs a kernel's body through the build's instruction set or its AVX2 or AVX-512 twin, chosen at
// run time on x86-64 hosts (platform/x86/cpu_dispatch.hpp); elsewhere, and in device code, the
// body as compiled.

#include <ordo/core/config.hpp>
#include <ordo/platform/x86/cpu_dispatch.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

namespace ordo::detail {

#if defined(ORDO_IMPL_DISPATCH_AVX2)
// The AVX2 twin of a kernel's body: compiled with AVX2 enabled, calling the body's AVX2
// instantiation. flatten inlines every call of the twin's whole call tree into it, so that all of
// it is compiled for AVX2: without it, a helper g++ chose not to inline (a lambda the body passes
// to a row visitor) was compiled once, out of line, for the baseline, and the "AVX2" softmax ran
// SSE2 code in some programs and not in others (issue 29; docs/softmax.md has the measurement).
// Item: a work item's index, or a team member (the portable GEMM's teams).
template <class Kernel, class Item>
ORDO_IMPL_AVX2_FUNCTION __attribute__((flatten)) void run_avx2_twin(const Kernel& kernel, Item item) {
  kernel.template run<isa::avx2>(item);
}
#endif

#if defined(ORDO_IMPL_DISPATCH_AVX512)
// The AVX-512 twin, flattened for the same reason; its body may use 64-byte vectors
// (wide_vectors_for_v).
template <class Kernel, class Item>
ORDO_IMPL_AVX512_FUNCTION __attribute__((flatten)) void run_avx512_twin(const Kernel& kernel, Item item) {
  kernel.template run<isa::avx512>(item);
}
#endif

// Whether the body compiled for Isa works on 64-byte vectors (16 floats): the AVX-512 twin, and
// the build's own code when the build targets AVX-512.
template <class Isa>
inline constexpr bool wide_vectors_for_v = std::is_same_v<Isa, isa::avx512>
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
                                           || std::is_same_v<Isa, isa::baseline>
#endif
    ;

// Whether the body compiled for Isa may convert half with F16C (platform/x86/half_conversion.hpp):
// the AVX2 and AVX-512 twins, and the build's own code when the build targets F16C.
template <class Isa>
inline constexpr bool f16c_for_v =
#if defined(ORDO_IMPL_AVX2_FUNCTION) && !ORDO_DEVICE_COMPILE
    Isa::level >= cpu_capability::avx2
#if defined(__F16C__)
    || std::is_same_v<Isa, isa::baseline>
#endif
#else
    false
#endif
    ;

// kernel.run<Isa>(item) through Isa's twin (the body itself for the baseline).
template <class Isa, class Kernel, class Item>
KOKKOS_FORCEINLINE_FUNCTION void run_for_isa(const Kernel& kernel, const Item& item) {
#if defined(ORDO_IMPL_DISPATCH_AVX512) && !ORDO_DEVICE_COMPILE
  if constexpr (std::is_same_v<Isa, isa::avx512>) {
    run_avx512_twin(kernel, item);
    return;
  }
#endif
#if defined(ORDO_IMPL_DISPATCH_AVX2) && !ORDO_DEVICE_COMPILE
  if constexpr (std::is_same_v<Isa, isa::avx2>) {
    run_avx2_twin(kernel, item);
    return;
  }
#endif
  if constexpr (std::is_same_v<Isa, isa::baseline>) kernel.template run<isa::baseline>(item);
}

// f(Isa{}) for the instruction set chosen at run time on the host: the one place that chooses it
// (run_for_host_isa per item, the portable GEMM per launch, whose tile sizes depend on it). Host
// code only.
template <class F>
void with_host_isa(F&& f) {
#if defined(ORDO_IMPL_DISPATCH_AVX512)
  if (host_capability() == cpu_capability::avx512) {
    f(isa::avx512{});
    return;
  }
#endif
#if defined(ORDO_IMPL_DISPATCH_AVX2)
  if (host_capability() >= cpu_capability::avx2) {
    f(isa::avx2{});
    return;
  }
#endif
  f(isa::baseline{});
}

// Runs kernel.run<Isa>(item) for the instruction set chosen at run time on the host
// (platform/x86/cpu_dispatch.hpp: the CPU's, or ORDO_CPU_CAPABILITY); in device code and where the
// build does not dispatch, the baseline instantiation. Every dispatched host kernel goes through
// here. Bodies and their helpers are force-inlined so that all of an item's work is compiled for
// the chosen instruction set. The levels give the same bits: the kernels fix their order of
// additions in explicit lanes, and no level fuses multiply-adds.
template <class Kernel>
KOKKOS_FORCEINLINE_FUNCTION void run_for_host_isa(const Kernel& kernel, std::int64_t item) {
#if !ORDO_DEVICE_COMPILE
  with_host_isa([&](auto isa) { run_for_isa<decltype(isa)>(kernel, item); });
#else
  kernel.template run<isa::baseline>(item);
#endif
}

// A kernel with a body run<Isa>(item) as a Kokkos functor that dispatches each item.
template <class Kernel>
struct host_dispatched {
  Kernel kernel;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t item) const { run_for_host_isa(kernel, item); }
};

template <class Kernel>
host_dispatched<Kernel> dispatched(const Kernel& kernel) {
  return {kernel};
}

}  // namespace ordo::detail

#endif
