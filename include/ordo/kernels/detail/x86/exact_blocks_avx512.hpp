#ifndef ORDO_KERNELS_DETAIL_X86_EXACT_BLOCKS_AVX512_HPP
#define ORDO_KERNELS_DETAIL_X86_EXACT_BLOCKS_AVX512_HPP

// Host-only: the AVX2 kernels' steps on 64-byte vectors, compiled for AVX-512 (F, BW, DQ, VL)
// whatever the build's flags and chosen at run time. Included by exact_blocks.hpp when
// ORDO_IMPL_EXACT_AVX512 is set. Generic vector types rather than <immintrin.h>, as in
// exact_blocks_avx2.hpp (which says why).
//
// A block has exact_block_lanes = 8 lanes, one zmm register of doubles: lane l of a sum register
// adds the same elements in the same order as lane l of the AVX2 kernels' registers, so the lane
// sums are the AVX2 kernels' bits (and those are exact by construction: exact_block_sums.hpp).
// The ranges are maxima and minima, which no order changes.

#include <ordo/platform/x86/cpu_dispatch.hpp>
#include <ordo/kernels/detail/exact_block_sums.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace ordo::detail {

// AVX-512 kernels when the build targets AVX-512, or when the CPU has it and ORDO_CPU_CAPABILITY
// does not ask for less (platform/x86/cpu_dispatch.hpp).
inline bool exact_blocks_use_avx512() {
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
  return true;
#else
  return host_capability() >= cpu_capability::avx512;
#endif
}

typedef float float_x16 __attribute__((vector_size(64)));
typedef float float_x8_512 __attribute__((vector_size(32)));
typedef double double_x8 __attribute__((vector_size(64)));

template <class V, class T>
ORDO_IMPL_AVX512_FUNCTION inline V load_avx512(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// vcvtps2pd zmm, ymm: g++ 12 splits __builtin_convertvector of eight floats in two; its builtin
// (all lanes, the current rounding, which a widening never uses) is the instruction.
ORDO_IMPL_AVX512_FUNCTION inline double_x8 load_as_doubles_avx512(const float* p) {
#if defined(__clang__)
  return __builtin_convertvector(load_avx512<float_x8_512>(p), double_x8);
#else
  return __builtin_ia32_cvtps2pd512_mask(load_avx512<float_x8_512>(p), double_x8{}, static_cast<char>(-1), 4);
#endif
}
ORDO_IMPL_AVX512_FUNCTION inline double_x8 load_as_doubles_avx512(const double* p) { return load_avx512<double_x8>(p); }

// vmaxps/vminps (pd): the second operand when one is NaN or both are zeros. Written as a > b ? a : b
// (that rule), g++ 12 makes a compare and a masked load of its own (21-86 % slower sums): the
// builtins are the instructions. V is float_x16 or double_x8.
template <bool Largest, class V>
ORDO_IMPL_AVX512_FUNCTION inline V extremum_avx512(V a, V b) {
  constexpr bool floats = std::is_same_v<V, float_x16>;
#if defined(__clang__)
  if constexpr (floats) {
    return Largest ? __builtin_ia32_maxps512(a, b, 4) : __builtin_ia32_minps512(a, b, 4);
  } else {
    return Largest ? __builtin_ia32_maxpd512(a, b, 4) : __builtin_ia32_minpd512(a, b, 4);
  }
#else
  if constexpr (floats) {
    return Largest ? __builtin_ia32_maxps512_mask(a, b, a, static_cast<short>(-1), 4)
                   : __builtin_ia32_minps512_mask(a, b, a, static_cast<short>(-1), 4);
  } else {
    return Largest ? __builtin_ia32_maxpd512_mask(a, b, a, static_cast<char>(-1), 4)
                   : __builtin_ia32_minpd512_mask(a, b, a, static_cast<char>(-1), 4);
  }
#endif
}

// max and min return their second operand when one is NaN, as the AVX2 kernels' do: a NaN never
// enters the range (the flags catch it). |v| clears the sign bits; zeros count as +Inf for the
// smallest magnitude with zeros_as_infinity. V is float_x16 or double_x8.
template <bool zeros_as_infinity, class V>
ORDO_IMPL_AVX512_FUNCTION inline void magnitude_range_avx512(V v, V& high, V& low) {
  using bits = decltype(v < v);  // the lanes' signed integers of the same width
  using element = std::remove_cvref_t<decltype(v[0])>;
  using bits_element = std::remove_cvref_t<decltype(bits{}[0])>;
  const V magnitude =
      __builtin_bit_cast(V, __builtin_bit_cast(bits, v) & std::numeric_limits<bits_element>::max());
  high = extremum_avx512<true>(magnitude, high);
  if constexpr (zeros_as_infinity) {
    const V candidate = magnitude == element(0) ? V{} + std::numeric_limits<element>::infinity() : magnitude;
    low = extremum_avx512<false>(candidate, low);
  } else {
    low = extremum_avx512<false>(magnitude, low);
  }
}

template <class T, class V, int N>
ORDO_IMPL_AVX512_FUNCTION inline void horizontal_range_avx512(const V (&high)[N], const V (&low)[N], T& largest,
                                                            T& smallest) {
  constexpr int width = static_cast<int>(sizeof(V) / sizeof(T));
  T h[N * width], l[N * width];
  std::memcpy(h, high, sizeof h);
  std::memcpy(l, low, sizeof l);
  for (int k = 0; k < N * width; ++k) {
    largest = h[k] > largest ? h[k] : largest;
    smallest = l[k] < smallest ? l[k] : smallest;
  }
}

// The range of x[begin, end) into largest and smallest (which start at 0 and +Inf).
template <bool zeros_as_infinity>
ORDO_IMPL_AVX512_FUNCTION inline void magnitude_range_avx512(const float* x, std::int64_t begin, std::int64_t end,
                                                           float& largest, float& smallest) {
  float_x16 high[2] = {float_x16{} + largest, float_x16{} + largest};
  float_x16 low[2] = {float_x16{} + smallest, float_x16{} + smallest};
  std::int64_t i = begin;
  for (; i + 32 <= end; i += 32) {
    for (int k = 0; k < 2; ++k) magnitude_range_avx512<zeros_as_infinity>(load_avx512<float_x16>(x + i + 16 * k), high[k], low[k]);
  }
  horizontal_range_avx512(high, low, largest, smallest);
  for (; i < end; ++i) magnitude_range_step(x[i], largest, smallest);
}
template <bool zeros_as_infinity>
ORDO_IMPL_AVX512_FUNCTION inline void magnitude_range_avx512(const double* x, std::int64_t begin, std::int64_t end,
                                                           double& largest, double& smallest) {
  double_x8 high[2] = {double_x8{} + largest, double_x8{} + largest};
  double_x8 low[2] = {double_x8{} + smallest, double_x8{} + smallest};
  std::int64_t i = begin;
  for (; i + 16 <= end; i += 16) {
    for (int k = 0; k < 2; ++k) magnitude_range_avx512<zeros_as_infinity>(load_avx512<double_x8>(x + i + 8 * k), high[k], low[k]);
  }
  horizontal_range_avx512(high, low, largest, smallest);
  for (; i < end; ++i) magnitude_range_step(x[i], largest, smallest);
}

// Float blocks: the range and the level-0 sums in one pass. Returns where the sums stopped.
// Elements 0-7 of each 16 go to sum[0] and 8-15 to sum[1], lane i mod 8, as in the AVX2 kernel.
ORDO_IMPL_AVX512_FUNCTION inline std::int64_t magnitude_range_and_sums_avx512(const float* x, std::int64_t begin,
                                                                            std::int64_t end, float& largest,
                                                                            float& smallest,
                                                                            double (&s)[1][exact_block_lanes]) {
  float_x16 high[1] = {float_x16{}};  // 16 floats a step: one register holds them
  float_x16 low[1] = {float_x16{} + smallest};
  double_x8 sum[2] = {double_x8{}, double_x8{}};
  std::int64_t i = begin;
  for (; i + 2 * exact_block_lanes <= end; i += 2 * exact_block_lanes) {
    magnitude_range_avx512<false>(load_avx512<float_x16>(x + i), high[0], low[0]);
    sum[0] = sum[0] + load_as_doubles_avx512(x + i);  // from L1: the line was just read
    sum[1] = sum[1] + load_as_doubles_avx512(x + i + exact_block_lanes);
  }
  horizontal_range_avx512(high, low, largest, smallest);
  double part[2][exact_block_lanes];
  std::memcpy(part, sum, sizeof part);
  for (int l = 0; l < exact_block_lanes; ++l) s[0][l] += part[0][l] + part[1][l];
  return i;
}

template <int levels, class T>
ORDO_IMPL_AVX512_FUNCTION inline void exact_lane_sums_avx512(const T* x, std::int64_t begin, std::int64_t end,
                                                           const double* sigma,
                                                           double (&s)[levels + 1][exact_block_lanes]) {
  double_x8 sum[levels + 1], sig[levels > 0 ? levels : 1];
  for (int j = 0; j <= levels; ++j) sum[j] = double_x8{};
  for (int j = 0; j < levels; ++j) sig[j] = double_x8{} + sigma[j];
  std::int64_t i = begin;
  for (; i + exact_block_lanes <= end; i += exact_block_lanes) {
    double_x8 r = load_as_doubles_avx512(x + i);
    // The level pass reads the block from L1; meanwhile, fetch the next block from memory
    // (prefetcht0).
    __builtin_prefetch(x + i + 2048, 0, 3);
    for (int j = 0; j < levels; ++j) {
      const double_x8 h = (sig[j] + r) - sig[j];
      r = r - h;
      sum[j] = sum[j] + h;
    }
    sum[levels] = sum[levels] + r;
  }
  for (int j = 0; j <= levels; ++j) std::memcpy(s[j], &sum[j], sizeof sum[j]);
  exact_lane_sums<levels, T>(x, begin, i, end, sigma, s);
}

}  // namespace ordo::detail

#endif
