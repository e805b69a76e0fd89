#ifndef ORDO_KERNELS_DETAIL_HOST_DISPATCHED_HPP
#define ORDO_KERNELS_DETAIL_HOST_DISPATCHED_HPP

// Runs a kernel's body through the build's instruction set or its AVX2 twin, chosen at run time
// on x86-64 hosts (core/detail/x86/cpu_dispatch.hpp); elsewhere, and in device code, the body
// as compiled.

#include <ordo/core/config.hpp>
#include <ordo/core/detail/x86/cpu_dispatch.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace ordo::detail {

// Streaming kernels run through this wrapper: on the host it picks their AVX2 build
// when the CPU has AVX2 (core/detail/x86/cpu_dispatch.hpp). Their bodies and helpers are force-inlined so
// that all of the item's work is compiled for the chosen instruction set. The variants give the
// same bits: the kernels fix their order of additions in explicit lanes, and no FMA is enabled.
template <class Kernel>
struct host_dispatched {
  Kernel kernel;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t item) const {
#if defined(ORDO_IMPL_DISPATCH_AVX2) && !ORDO_DEVICE_COMPILE
    if (host_capability() == cpu_capability::avx2) {
      run_avx2(kernel, item);
      return;
    }
#endif
    kernel.run(item);
  }

#if defined(ORDO_IMPL_DISPATCH_AVX2)
  ORDO_IMPL_AVX2_FUNCTION static void run_avx2(const Kernel& k, std::int64_t item) { k.run(item); }
#endif
};

template <class Kernel>
host_dispatched<Kernel> dispatched(const Kernel& kernel) {
  return {kernel};
}

}  // namespace ordo::detail

#endif
