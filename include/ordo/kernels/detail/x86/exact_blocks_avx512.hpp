#ifndef ORDO_KERNELS_DETAIL_X86_EXACT_BLOCKS_AVX512_HPP
#define ORDO_KERNELS_DETAIL_X86_EXACT_BLOCKS_AVX512_HPP

// Host-only: the AVX2 kernels' steps with AVX-512 (F, BW, DQ, VL) intrinsics, compiled for AVX-512
// whatever the build's flags and chosen at run time. Included by exact_blocks.hpp when
// ORDO_IMPL_EXACT_AVX512 is set.
//
// A block has exact_block_lanes = 8 lanes, one zmm register of doubles: lane l of a sum register
// adds the same elements in the same order as lane l of the AVX2 kernels' registers, so the lane
// sums are the AVX2 kernels' bits (and those are exact by construction: exact_block_sums.hpp).
// The ranges are maxima and minima, which no order changes.
//
// Conversions, maxima and minima are the zero-masked forms with every lane selected (the same
// instructions): g++ 12 writes the plain forms with _mm512_undefined_*(), which
// -Wmaybe-uninitialized reports in every caller.

#include <ordo/platform/x86/cpu_dispatch.hpp>
#include <ordo/kernels/detail/exact_block_sums.hpp>

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <limits>

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

inline constexpr __mmask8 all_doubles_avx512 = 0xff;
inline constexpr __mmask16 all_floats_avx512 = 0xffff;

ORDO_IMPL_AVX512_FUNCTION inline __m512d load_as_doubles_avx512(const float* p) {
  return _mm512_maskz_cvtps_pd(all_doubles_avx512, _mm256_loadu_ps(p));
}
ORDO_IMPL_AVX512_FUNCTION inline __m512d load_as_doubles_avx512(const double* p) { return _mm512_loadu_pd(p); }

// max and min return their second operand when one is NaN, as the AVX2 kernels' do: a NaN never
// enters the range (the flags catch it).
template <bool zeros_as_infinity>
ORDO_IMPL_AVX512_FUNCTION inline void magnitude_range_avx512(__m512 v, __m512& high, __m512& low) {
  const __m512 magnitude = _mm512_abs_ps(v);
  high = _mm512_maskz_max_ps(all_floats_avx512, magnitude, high);
  if constexpr (zeros_as_infinity) {
    const __mmask16 zero = _mm512_cmp_ps_mask(magnitude, _mm512_setzero_ps(), _CMP_EQ_OQ);
    low = _mm512_maskz_min_ps(all_floats_avx512,
                              _mm512_mask_blend_ps(zero, magnitude, _mm512_set1_ps(std::numeric_limits<float>::infinity())),
                              low);
  } else {
    low = _mm512_maskz_min_ps(all_floats_avx512, magnitude, low);
  }
}
template <bool zeros_as_infinity>
ORDO_IMPL_AVX512_FUNCTION inline void magnitude_range_avx512(__m512d v, __m512d& high, __m512d& low) {
  const __m512d magnitude = _mm512_abs_pd(v);
  high = _mm512_maskz_max_pd(all_doubles_avx512, magnitude, high);
  if constexpr (zeros_as_infinity) {
    const __mmask8 zero = _mm512_cmp_pd_mask(magnitude, _mm512_setzero_pd(), _CMP_EQ_OQ);
    low = _mm512_maskz_min_pd(all_doubles_avx512,
                              _mm512_mask_blend_pd(zero, magnitude, _mm512_set1_pd(std::numeric_limits<double>::infinity())),
                              low);
  } else {
    low = _mm512_maskz_min_pd(all_doubles_avx512, magnitude, low);
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
  __m512 high[2] = {_mm512_set1_ps(largest), _mm512_set1_ps(largest)};
  __m512 low[2] = {_mm512_set1_ps(smallest), _mm512_set1_ps(smallest)};
  std::int64_t i = begin;
  for (; i + 32 <= end; i += 32) {
    for (int k = 0; k < 2; ++k) magnitude_range_avx512<zeros_as_infinity>(_mm512_loadu_ps(x + i + 16 * k), high[k], low[k]);
  }
  horizontal_range_avx512(high, low, largest, smallest);
  for (; i < end; ++i) magnitude_range_step(x[i], largest, smallest);
}
template <bool zeros_as_infinity>
ORDO_IMPL_AVX512_FUNCTION inline void magnitude_range_avx512(const double* x, std::int64_t begin, std::int64_t end,
                                                           double& largest, double& smallest) {
  __m512d high[2] = {_mm512_set1_pd(largest), _mm512_set1_pd(largest)};
  __m512d low[2] = {_mm512_set1_pd(smallest), _mm512_set1_pd(smallest)};
  std::int64_t i = begin;
  for (; i + 16 <= end; i += 16) {
    for (int k = 0; k < 2; ++k) magnitude_range_avx512<zeros_as_infinity>(_mm512_loadu_pd(x + i + 8 * k), high[k], low[k]);
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
  __m512 high[1] = {_mm512_setzero_ps()};  // 16 floats a step: one register holds them
  __m512 low[1] = {_mm512_set1_ps(smallest)};
  __m512d sum[2] = {_mm512_setzero_pd(), _mm512_setzero_pd()};
  std::int64_t i = begin;
  for (; i + 2 * exact_block_lanes <= end; i += 2 * exact_block_lanes) {
    magnitude_range_avx512<false>(_mm512_loadu_ps(x + i), high[0], low[0]);
    sum[0] = _mm512_add_pd(sum[0], load_as_doubles_avx512(x + i));  // from L1: the line was just read
    sum[1] = _mm512_add_pd(sum[1], load_as_doubles_avx512(x + i + exact_block_lanes));
  }
  horizontal_range_avx512(high, low, largest, smallest);
  double part[2][exact_block_lanes];
  for (int k = 0; k < 2; ++k) _mm512_storeu_pd(part[k], sum[k]);
  for (int l = 0; l < exact_block_lanes; ++l) s[0][l] += part[0][l] + part[1][l];
  return i;
}

template <int levels, class T>
ORDO_IMPL_AVX512_FUNCTION inline void exact_lane_sums_avx512(const T* x, std::int64_t begin, std::int64_t end,
                                                           const double* sigma,
                                                           double (&s)[levels + 1][exact_block_lanes]) {
  __m512d sum[levels + 1], sig[levels > 0 ? levels : 1];
  for (int j = 0; j <= levels; ++j) sum[j] = _mm512_setzero_pd();
  for (int j = 0; j < levels; ++j) sig[j] = _mm512_set1_pd(sigma[j]);
  std::int64_t i = begin;
  for (; i + exact_block_lanes <= end; i += exact_block_lanes) {
    __m512d r = load_as_doubles_avx512(x + i);
    // The level pass reads the block from L1; meanwhile, fetch the next block from memory.
    _mm_prefetch(reinterpret_cast<const char*>(x + i + 2048), _MM_HINT_T0);
    for (int j = 0; j < levels; ++j) {
      const __m512d h = _mm512_sub_pd(_mm512_add_pd(sig[j], r), sig[j]);
      r = _mm512_sub_pd(r, h);
      sum[j] = _mm512_add_pd(sum[j], h);
    }
    sum[levels] = _mm512_add_pd(sum[levels], r);
  }
  for (int j = 0; j <= levels; ++j) _mm512_storeu_pd(s[j], sum[j]);
  exact_lane_sums<levels, T>(x, begin, i, end, sigma, s);
}

}  // namespace ordo::detail

#endif
