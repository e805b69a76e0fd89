#ifndef ORDO_PLATFORM_X86_HALF_CONVERSION_HPP
#define ORDO_PLATFORM_X86_HALF_CONVERSION_HPP

// Host-only (x86-64 with g++ or clang): half -> float for a run of values with F16C's
// vcvtph2ps, 8 values per instruction, where widen_half_bits (platform/storage_conversion.hpp)
// takes about a dozen integer and float operations per value. Used where the AVX2 kernels run
// (host_capability() is avx2, so ORDO_CPU_CAPABILITY=baseline turns it off too) and the CPU
// reports F16C (every AVX2 CPU so far does, but it is a separate CPUID bit). The values are the
// same: the conversion is exact either way; only a signaling NaN comes out quieted, and ordo's
// kernels give the canonical NaN for any NaN input.

#include <ordo/core/config.hpp>
#include <ordo/core/float16.hpp>
#include <ordo/platform/storage_conversion.hpp>
#include <ordo/platform/x86/cpu_dispatch.hpp>

#include <cstdint>
#include <type_traits>

#if defined(ORDO_IMPL_AVX2_FUNCTION)
#include <cpuid.h>
#include <immintrin.h>
#define ORDO_IMPL_F16C_FUNCTION __attribute__((target("avx2,f16c")))
#endif

namespace ordo::detail {

static_assert(sizeof(half) == 2 && std::is_trivially_copyable_v<half>, "half is its 16 bits");

#if defined(ORDO_IMPL_F16C_FUNCTION)
// CPUID leaf 1, ECX bit 29 (clang 14's __builtin_cpu_supports does not know "f16c").
inline bool cpu_has_f16c() {
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  }();
  return has;
}

ORDO_IMPL_F16C_FUNCTION inline void widen_half_run_f16c(const half* x, float* out, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    // Unaligned 16-byte load of 8 halves; the intrinsic's access may alias any type.
    const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(bits));
  }
  for (; i < n; ++i) out[i] = widen_half_bits(x[i].bits());
}
#endif

// Whether widen_half_run uses F16C in this process (for tests and benchmarks).
inline bool widen_half_uses_f16c() {
#if defined(ORDO_IMPL_F16C_FUNCTION)
#if defined(__AVX2__)
  return cpu_has_f16c();
#else
  return host_capability() >= cpu_capability::avx2 && cpu_has_f16c();
#endif
#else
  return false;
#endif
}

// out[i] = float(x[i]) for i < n.
inline void widen_half_run(const half* x, float* out, std::int64_t n) {
#if defined(ORDO_IMPL_F16C_FUNCTION)
  if (widen_half_uses_f16c()) {
    widen_half_run_f16c(x, out, n);
    return;
  }
#endif
  for (std::int64_t i = 0; i < n; ++i) out[i] = widen_half_bits(x[i].bits());
}

}  // namespace ordo::detail

#endif
