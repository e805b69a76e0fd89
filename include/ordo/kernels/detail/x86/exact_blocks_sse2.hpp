#ifndef ORDO_KERNELS_DETAIL_X86_EXACT_BLOCKS_SSE2_HPP
#define ORDO_KERNELS_DETAIL_X86_EXACT_BLOCKS_SSE2_HPP

// Host-only: exact block sums with SSE2 intrinsics (the x86-64 baseline). Included by
// exact_blocks.hpp when ORDO_IMPL_EXACT_SSE2 is set (core/config.hpp decides the target).

#include <ordo/kernels/detail/exact_block_sums.hpp>

#include <emmintrin.h>

#include <cstdint>

namespace ordo::detail {

// The same steps with SSE2 intrinsics, 8 elements (4 pairs of doubles) at a time: compilers do
// not vectorize the portable loops' selects and lane-wise sums well.
inline void load_as_doubles(const float* p, __m128d (&d)[4]) {
  const __m128 a = _mm_loadu_ps(p), b = _mm_loadu_ps(p + 4);
  d[0] = _mm_cvtps_pd(a);
  d[1] = _mm_cvtps_pd(_mm_movehl_ps(a, a));
  d[2] = _mm_cvtps_pd(b);
  d[3] = _mm_cvtps_pd(_mm_movehl_ps(b, b));
}
inline void load_as_doubles(const double* p, __m128d (&d)[4]) {
  for (int k = 0; k < 4; ++k) d[k] = _mm_loadu_pd(p + 2 * k);
}

// _mm_max/_mm_min return their second operand when one is NaN: a NaN element is skipped here.
// Zeros count as +Inf only with zeros_as_infinity, which costs three more instructions a vector:
// blocks are first scanned without, and again with it only if their smallest magnitude is 0.
template <bool zeros_as_infinity>
inline void magnitude_range_sse2(__m128 v, __m128& high, __m128& low) {
  const __m128 magnitude = _mm_and_ps(v, _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff)));
  high = _mm_max_ps(magnitude, high);
  if constexpr (zeros_as_infinity) {
    const __m128 zero_to_infinity =
        _mm_and_ps(_mm_cmpeq_ps(magnitude, _mm_setzero_ps()), _mm_castsi128_ps(_mm_set1_epi32(0x7f800000)));
    low = _mm_min_ps(_mm_or_ps(magnitude, zero_to_infinity), low);
  } else {
    low = _mm_min_ps(magnitude, low);
  }
}
template <bool zeros_as_infinity>
inline void magnitude_range_sse2(__m128d v, __m128d& high, __m128d& low) {
  const __m128d magnitude = _mm_and_pd(v, _mm_castsi128_pd(_mm_set1_epi64x(0x7fffffffffffffff)));
  high = _mm_max_pd(magnitude, high);
  if constexpr (zeros_as_infinity) {
    const __m128d zero_to_infinity = _mm_and_pd(_mm_cmpeq_pd(magnitude, _mm_setzero_pd()),
                                                _mm_castsi128_pd(_mm_set1_epi64x(0x7ff0000000000000)));
    low = _mm_min_pd(_mm_or_pd(magnitude, zero_to_infinity), low);
  } else {
    low = _mm_min_pd(magnitude, low);
  }
}
inline float horizontal_max(__m128 a, __m128 b) {
  float v[8];
  _mm_storeu_ps(v, a);
  _mm_storeu_ps(v + 4, b);
  float m = v[0];
  for (int k = 1; k < 8; ++k) m = v[k] > m ? v[k] : m;
  return m;
}
inline float horizontal_min(__m128 a, __m128 b) {
  float v[8];
  _mm_storeu_ps(v, a);
  _mm_storeu_ps(v + 4, b);
  float m = v[0];
  for (int k = 1; k < 8; ++k) m = v[k] < m ? v[k] : m;
  return m;
}
inline double horizontal_max(__m128d a, __m128d b) {
  double v[4];
  _mm_storeu_pd(v, a);
  _mm_storeu_pd(v + 2, b);
  double m = v[0];
  for (int k = 1; k < 4; ++k) m = v[k] > m ? v[k] : m;
  return m;
}
inline double horizontal_min(__m128d a, __m128d b) {
  double v[4];
  _mm_storeu_pd(v, a);
  _mm_storeu_pd(v + 2, b);
  double m = v[0];
  for (int k = 1; k < 4; ++k) m = v[k] < m ? v[k] : m;
  return m;
}

// The range of x[begin, end) into largest and smallest (which start at 0 and +Inf).
template <bool zeros_as_infinity>
inline void magnitude_range_sse2(const float* x, std::int64_t begin, std::int64_t end, float& largest, float& smallest) {
  __m128 high[2] = {_mm_set1_ps(largest), _mm_set1_ps(largest)}, low[2] = {_mm_set1_ps(smallest), _mm_set1_ps(smallest)};
  std::int64_t i = begin;
  for (; i + exact_block_lanes <= end; i += exact_block_lanes) {
    magnitude_range_sse2<zeros_as_infinity>(_mm_loadu_ps(x + i), high[0], low[0]);
    magnitude_range_sse2<zeros_as_infinity>(_mm_loadu_ps(x + i + 4), high[1], low[1]);
  }
  largest = horizontal_max(high[0], high[1]);
  smallest = horizontal_min(low[0], low[1]);
  for (; i < end; ++i) magnitude_range_step(x[i], largest, smallest);
}
template <bool zeros_as_infinity>
inline void magnitude_range_sse2(const double* x, std::int64_t begin, std::int64_t end, double& largest, double& smallest) {
  // Four independent maxima and minima: one pair would wait on max/min latency.
  __m128d high[4], low[4];
  for (int k = 0; k < 4; ++k) {
    high[k] = _mm_set1_pd(largest);
    low[k] = _mm_set1_pd(smallest);
  }
  std::int64_t i = begin;
  for (; i + exact_block_lanes <= end; i += exact_block_lanes) {
    for (int k = 0; k < 4; ++k) magnitude_range_sse2<zeros_as_infinity>(_mm_loadu_pd(x + i + 2 * k), high[k], low[k]);
  }
  largest = horizontal_max(_mm_max_pd(high[0], high[1]), _mm_max_pd(high[2], high[3]));
  smallest = horizontal_min(_mm_min_pd(low[0], low[1]), _mm_min_pd(low[2], low[3]));
  for (; i < end; ++i) magnitude_range_step(x[i], largest, smallest);
}

template <int levels, class T>
inline void exact_lane_sums_sse2(const T* x, std::int64_t begin, std::int64_t end, const double* sigma,
                                 double (&s)[levels + 1][exact_block_lanes]) {
  __m128d sum[levels + 1][4], sig[levels > 0 ? levels : 1];
  for (int j = 0; j <= levels; ++j) {
    for (int k = 0; k < 4; ++k) sum[j][k] = _mm_setzero_pd();
  }
  for (int j = 0; j < levels; ++j) sig[j] = _mm_set1_pd(sigma[j]);
  std::int64_t i = begin;
  for (; i + exact_block_lanes <= end; i += exact_block_lanes) {
    __m128d r[4];
    load_as_doubles(x + i, r);
    // The level pass reads the block from L1; meanwhile, fetch the next block from memory.
    _mm_prefetch(reinterpret_cast<const char*>(x + i + 2048), _MM_HINT_T0);
    for (int j = 0; j < levels; ++j) {
      for (int k = 0; k < 4; ++k) {
        const __m128d h = _mm_sub_pd(_mm_add_pd(sig[j], r[k]), sig[j]);
        r[k] = _mm_sub_pd(r[k], h);
        sum[j][k] = _mm_add_pd(sum[j][k], h);
      }
    }
    for (int k = 0; k < 4; ++k) sum[levels][k] = _mm_add_pd(sum[levels][k], r[k]);
  }
  for (int j = 0; j <= levels; ++j) {
    for (int k = 0; k < 4; ++k) _mm_storeu_pd(&s[j][2 * k], sum[j][k]);
  }
  exact_lane_sums<levels, T>(x, begin, i, end, sigma, s);
}

// Float blocks: the range and the level-0 sums in one pass. Returns where the sums stopped.
inline std::int64_t magnitude_range_and_sums_sse2(const float* x, std::int64_t begin, std::int64_t end, float& largest,
                                                  float& smallest, double (&s)[1][exact_block_lanes]) {
  __m128 high[2] = {_mm_setzero_ps(), _mm_setzero_ps()};
  __m128 low[2] = {_mm_set1_ps(smallest), _mm_set1_ps(smallest)};
  __m128d sum[4] = {_mm_setzero_pd(), _mm_setzero_pd(), _mm_setzero_pd(), _mm_setzero_pd()};
  std::int64_t i = begin;
  for (; i + exact_block_lanes <= end; i += exact_block_lanes) {
    const __m128 a = _mm_loadu_ps(x + i), b = _mm_loadu_ps(x + i + 4);
    magnitude_range_sse2<false>(a, high[0], low[0]);
    magnitude_range_sse2<false>(b, high[1], low[1]);
    sum[0] = _mm_add_pd(sum[0], _mm_cvtps_pd(a));
    sum[1] = _mm_add_pd(sum[1], _mm_cvtps_pd(_mm_movehl_ps(a, a)));
    sum[2] = _mm_add_pd(sum[2], _mm_cvtps_pd(b));
    sum[3] = _mm_add_pd(sum[3], _mm_cvtps_pd(_mm_movehl_ps(b, b)));
  }
  largest = horizontal_max(high[0], high[1]);
  smallest = horizontal_min(low[0], low[1]);
  for (int k = 0; k < 4; ++k) _mm_storeu_pd(&s[0][2 * k], sum[k]);
  return i;
}

}  // namespace ordo::detail

#endif
