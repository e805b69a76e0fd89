#ifndef ORDO_KERNELS_DETAIL_X86_EXACT_BLOCKS_AVX2_HPP
#define ORDO_KERNELS_DETAIL_X86_EXACT_BLOCKS_AVX2_HPP

// Host-only: the SSE2 kernels' steps on 32-byte vectors, compiled for AVX2 whatever the build's
// flags and chosen at run time. Included by exact_blocks.hpp when ORDO_IMPL_EXACT_AVX2 is set
// (g++ or clang on x86-64). Written with the compilers' generic vector types, as
// platform/x86/half_conversion.hpp is, rather than <immintrin.h>, which costs every translation
// unit that includes ordo's kernels about 0.37 s to parse (docs/compile_time.md); each operation
// is the instruction the intrinsic gave (a > b ? a : b is vmaxps's own rule, NaN and zeros alike).

#include <ordo/platform/x86/cpu_dispatch.hpp>
#include <ordo/kernels/detail/exact_block_sums.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace ordo::detail {

// AVX2 kernels when the build targets AVX2, or when the CPU has AVX2 and ORDO_CPU_CAPABILITY does
// not ask for the baseline (the choice batch norm's kernels make too, platform/x86/cpu_dispatch.hpp).
inline bool exact_blocks_use_avx2() {
#if defined(__AVX2__)
  return true;
#else
  return host_capability() >= cpu_capability::avx2;
#endif
}

typedef float float_x8 __attribute__((vector_size(32)));
typedef float float_x4 __attribute__((vector_size(16)));
typedef double double_x4 __attribute__((vector_size(32)));

template <class V, class T>
ORDO_IMPL_AVX2_FUNCTION inline V load_avx2(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T, class V>
ORDO_IMPL_AVX2_FUNCTION inline void store_avx2(T* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

// vcvtps2pd ymm, xmm. g++ 12 splits __builtin_convertvector of four floats into two 2-wide
// conversions and an insert; its builtin is the instruction (clang's conversion already is).
ORDO_IMPL_AVX2_FUNCTION inline double_x4 widen_avx2(float_x4 f) {
#if defined(__clang__)
  return __builtin_convertvector(f, double_x4);
#else
  return __builtin_ia32_cvtps2pd256(f);
#endif
}

ORDO_IMPL_AVX2_FUNCTION inline void load_as_doubles_avx2(const float* p, double_x4 (&d)[2]) {
  d[0] = widen_avx2(load_avx2<float_x4>(p));
  d[1] = widen_avx2(load_avx2<float_x4>(p + 4));
}
ORDO_IMPL_AVX2_FUNCTION inline void load_as_doubles_avx2(const double* p, double_x4 (&d)[2]) {
  d[0] = load_avx2<double_x4>(p);
  d[1] = load_avx2<double_x4>(p + 4);
}

// |v| by clearing the sign bits; max and min as vmaxps/vminps: the second operand when one is
// NaN (a NaN element never enters the range) or both are zeros. Zeros count as +Inf for the
// smallest magnitude with zeros_as_infinity. V is float_x8 or double_x4.
template <bool zeros_as_infinity, class V>
ORDO_IMPL_AVX2_FUNCTION inline void magnitude_range_avx2(V v, V& high, V& low) {
  using bits = decltype(v < v);  // the lanes' signed integers of the same width
  using element = std::remove_cvref_t<decltype(v[0])>;
  using bits_element = std::remove_cvref_t<decltype(bits{}[0])>;
  const V magnitude =
      __builtin_bit_cast(V, __builtin_bit_cast(bits, v) & std::numeric_limits<bits_element>::max());
  high = magnitude > high ? magnitude : high;
  if constexpr (zeros_as_infinity) {
    const bits infinity = __builtin_bit_cast(bits, V{} + std::numeric_limits<element>::infinity());
    const V candidate = __builtin_bit_cast(V, __builtin_bit_cast(bits, magnitude) | ((magnitude == element(0)) & infinity));
    low = candidate < low ? candidate : low;
  } else {
    low = magnitude < low ? magnitude : low;
  }
}

template <class T, class V>
ORDO_IMPL_AVX2_FUNCTION inline void horizontal_range_avx2(const V (&high)[2], const V (&low)[2], T& largest, T& smallest) {
  constexpr int width = static_cast<int>(sizeof(V) / sizeof(T));
  T h[2 * width], l[2 * width];
  std::memcpy(h, high, sizeof h);
  std::memcpy(l, low, sizeof l);
  for (int k = 0; k < 2 * width; ++k) {
    largest = h[k] > largest ? h[k] : largest;
    smallest = l[k] < smallest ? l[k] : smallest;
  }
}

// The range of x[begin, end) into largest and smallest (which start at 0 and +Inf).
template <bool zeros_as_infinity>
ORDO_IMPL_AVX2_FUNCTION inline void magnitude_range_avx2(const float* x, std::int64_t begin, std::int64_t end,
                                                       float& largest, float& smallest) {
  float_x8 high[2] = {float_x8{} + largest, float_x8{} + largest};
  float_x8 low[2] = {float_x8{} + smallest, float_x8{} + smallest};
  std::int64_t i = begin;
  for (; i + 16 <= end; i += 16) {
    for (int k = 0; k < 2; ++k) magnitude_range_avx2<zeros_as_infinity>(load_avx2<float_x8>(x + i + 8 * k), high[k], low[k]);
  }
  horizontal_range_avx2(high, low, largest, smallest);
  for (; i < end; ++i) magnitude_range_step(x[i], largest, smallest);
}
template <bool zeros_as_infinity>
ORDO_IMPL_AVX2_FUNCTION inline void magnitude_range_avx2(const double* x, std::int64_t begin, std::int64_t end,
                                                       double& largest, double& smallest) {
  double_x4 high[2] = {double_x4{} + largest, double_x4{} + largest};
  double_x4 low[2] = {double_x4{} + smallest, double_x4{} + smallest};
  std::int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    for (int k = 0; k < 2; ++k) magnitude_range_avx2<zeros_as_infinity>(load_avx2<double_x4>(x + i + 4 * k), high[k], low[k]);
  }
  horizontal_range_avx2(high, low, largest, smallest);
  for (; i < end; ++i) magnitude_range_step(x[i], largest, smallest);
}

// Float blocks: the range and the level-0 sums in one pass. Returns where the sums stopped.
ORDO_IMPL_AVX2_FUNCTION inline std::int64_t magnitude_range_and_sums_avx2(const float* x, std::int64_t begin,
                                                                        std::int64_t end, float& largest,
                                                                        float& smallest,
                                                                        double (&s)[1][exact_block_lanes]) {
  float_x8 high[2] = {float_x8{}, float_x8{}};
  float_x8 low[2] = {float_x8{} + smallest, float_x8{} + smallest};
  double_x4 sum[4] = {double_x4{}, double_x4{}, double_x4{}, double_x4{}};
  std::int64_t i = begin;
  for (; i + 2 * exact_block_lanes <= end; i += 2 * exact_block_lanes) {
    for (int k = 0; k < 2; ++k) {
      magnitude_range_avx2<false>(load_avx2<float_x8>(x + i + 8 * k), high[k], low[k]);
      sum[2 * k] += widen_avx2(load_avx2<float_x4>(x + i + 8 * k));  // from L1: the line was just read
      sum[2 * k + 1] += widen_avx2(load_avx2<float_x4>(x + i + 8 * k + 4));
    }
  }
  horizontal_range_avx2(high, low, largest, smallest);
  // Elements 8k..8k+7 of each 16 went to sum[2k] and sum[2k + 1]: lane i mod 8 either way.
  double part[4][4];
  for (int k = 0; k < 4; ++k) store_avx2(part[k], sum[k]);
  for (int l = 0; l < 4; ++l) {
    s[0][l] += part[0][l] + part[2][l];
    s[0][l + 4] += part[1][l] + part[3][l];
  }
  return i;
}

template <int levels, class T>
ORDO_IMPL_AVX2_FUNCTION inline void exact_lane_sums_avx2(const T* x, std::int64_t begin, std::int64_t end,
                                                       const double* sigma, double (&s)[levels + 1][exact_block_lanes]) {
  double_x4 sum[levels + 1][2], sig[levels > 0 ? levels : 1];
  for (int j = 0; j <= levels; ++j) {
    for (int k = 0; k < 2; ++k) sum[j][k] = double_x4{};
  }
  for (int j = 0; j < levels; ++j) sig[j] = double_x4{} + sigma[j];
  std::int64_t i = begin;
  for (; i + exact_block_lanes <= end; i += exact_block_lanes) {
    double_x4 r[2];
    load_as_doubles_avx2(x + i, r);
    // The level pass reads the block from L1; meanwhile, fetch the next block from memory
    // (prefetcht0).
    __builtin_prefetch(x + i + 2048, 0, 3);
    for (int j = 0; j < levels; ++j) {
      for (int k = 0; k < 2; ++k) {
        const double_x4 h = (sig[j] + r[k]) - sig[j];
        r[k] = r[k] - h;
        sum[j][k] = sum[j][k] + h;
      }
    }
    for (int k = 0; k < 2; ++k) sum[levels][k] = sum[levels][k] + r[k];
  }
  for (int j = 0; j <= levels; ++j) {
    for (int k = 0; k < 2; ++k) store_avx2(&s[j][4 * k], sum[j][k]);
  }
  exact_lane_sums<levels, T>(x, begin, i, end, sigma, s);
}

}  // namespace ordo::detail

#endif
