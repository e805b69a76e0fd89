#ifndef ORDO_PLATFORM_X86_HALF_CONVERSION_HPP
#define ORDO_PLATFORM_X86_HALF_CONVERSION_HPP

// Host-only (x86-64 with g++ or clang): half <-> float with F16C's vcvtph2ps and vcvtps2ph, 8
// values per instruction, where widen_half_bits and narrow_half_bits (platform/storage_conversion.hpp)
// take about a dozen integer and float operations per value. Used where the AVX2 or AVX-512
// kernels run (they include F16C, platform/x86/cpu_dispatch.hpp; ORDO_CPU_CAPABILITY=baseline
// turns it off too). The values are the same: widening is exact either way, and both narrowings
// round to nearest-even with the same overflow, subnormal and NaN results (tests/reduce_test.cpp
// checks both ways over every class of input). Written with the compilers' builtins and vector
// types rather than <immintrin.h>, which costs a translation unit about 0.3 s to parse.

#include <ordo/core/config.hpp>
#include <ordo/core/float16.hpp>
#include <ordo/platform/storage_conversion.hpp>
#include <ordo/platform/x86/cpu_dispatch.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(ORDO_IMPL_AVX2_FUNCTION)
#define ORDO_IMPL_F16C_FUNCTION __attribute__((target("avx2,f16c")))
// Not always_inline: g++ would refuse it inside a helper of default target that the twins inline;
// the twins (flattened, compiled with F16C) inline it themselves, as twin_isa.* checks.
#define ORDO_IMPL_F16C_INLINE __attribute__((target("avx2,f16c"))) inline
#endif

namespace ordo::detail {

static_assert(sizeof(half) == 2 && std::is_trivially_copyable_v<half>, "half is its 16 bits");

#if defined(ORDO_IMPL_F16C_FUNCTION)
typedef short half_bits8 __attribute__((vector_size(16)));
typedef float float_lanes8 __attribute__((vector_size(32)));

// Eight halves from p as floats, exactly.
ORDO_IMPL_F16C_INLINE void widen8_f16c(const half* p, float* out) {
  half_bits8 bits;
  std::memcpy(&bits, p, sizeof bits);
  const float_lanes8 values = __builtin_ia32_vcvtph2ps256(bits);
  std::memcpy(out, &values, sizeof values);
}

// One half as a float, exactly (vcvtph2ps on the low lane): for code that converts values one at
// a time, such as the portable GEMM's packing of a strided column.
ORDO_IMPL_F16C_INLINE float widen1_f16c(half value) {
  typedef short half_bits8_lanes __attribute__((vector_size(16)));
  typedef float float_lanes4 __attribute__((vector_size(16)));
  const half_bits8_lanes bits = {static_cast<short>(value.bits()), 0, 0, 0, 0, 0, 0, 0};
  const float_lanes4 wide = __builtin_ia32_vcvtph2ps(bits);
  return wide[0];
}

// Eight halves from p as doubles, exactly, converted as one vector: a caller that adds them to
// eight double accumulators then keeps them in vector registers too (through a float array,
// g++ 12 extracted each lane and added it in scalar code).
typedef double double_lanes8 __attribute__((vector_size(64)));
ORDO_IMPL_F16C_INLINE void widen8_f16c_to_double(const half* p, double* out) {
  half_bits8 bits;
  std::memcpy(&bits, p, sizeof bits);
  const double_lanes8 wide = __builtin_convertvector(__builtin_ia32_vcvtph2ps256(bits), double_lanes8);
  std::memcpy(out, &wide, sizeof wide);
}

// Eight floats rounded to half, nearest-even (immediate 0), into p.
ORDO_IMPL_F16C_INLINE void narrow8_f16c(const float* in, half* p) {
  float_lanes8 values;
  std::memcpy(&values, in, sizeof values);
  const half_bits8 bits = __builtin_ia32_vcvtps2ph256(values, 0);
  std::memcpy(static_cast<void*>(p), &bits, sizeof bits);  // half is its 16 bits (static_assert above)
}

ORDO_IMPL_F16C_FUNCTION inline void widen_half_run_f16c(const half* x, float* out, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) widen8_f16c(x + i, out + i);
  for (; i < n; ++i) out[i] = widen_half_bits(x[i].bits());
}
#endif

// Whether widen_half_run uses F16C in this process (for tests and benchmarks).
inline bool widen_half_uses_f16c() {
#if defined(ORDO_IMPL_F16C_FUNCTION)
#if defined(__AVX2__)
  return cpu_has_f16c();
#else
  return host_capability() >= cpu_capability::avx2;
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
