#ifndef ORDO_KERNELS_DETAIL_X86_EXACT_BLOCKS_AVX2_HPP
#define ORDO_KERNELS_DETAIL_X86_EXACT_BLOCKS_AVX2_HPP

// Host-only: the SSE2 kernels' steps with AVX2 intrinsics, compiled for AVX2 whatever the build's
// flags and chosen at run time. Included by exact_blocks.hpp when ORDO_IMPL_EXACT_AVX2 is set.

#include <ordo/platform/x86/cpu_dispatch.hpp>
#include <ordo/kernels/detail/exact_block_sums.hpp>

#include <immintrin.h>

#include <cstdint>

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

ORDO_IMPL_AVX2_FUNCTION inline void load_as_doubles_avx2(const float* p, __m256d (&d)[2]) {
  const __m256 a = _mm256_loadu_ps(p);
  d[0] = _mm256_cvtps_pd(_mm256_castps256_ps128(a));
  d[1] = _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1));
}
ORDO_IMPL_AVX2_FUNCTION inline void load_as_doubles_avx2(const double* p, __m256d (&d)[2]) {
  d[0] = _mm256_loadu_pd(p);
  d[1] = _mm256_loadu_pd(p + 4);
}

template <bool zeros_as_infinity>
ORDO_IMPL_AVX2_FUNCTION inline void magnitude_range_avx2(__m256 v, __m256& high, __m256& low) {
  const __m256 magnitude = _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
  high = _mm256_max_ps(magnitude, high);
  if constexpr (zeros_as_infinity) {
    const __m256 zero_to_infinity = _mm256_and_ps(_mm256_cmp_ps(magnitude, _mm256_setzero_ps(), _CMP_EQ_OQ),
                                                  _mm256_castsi256_ps(_mm256_set1_epi32(0x7f800000)));
    low = _mm256_min_ps(_mm256_or_ps(magnitude, zero_to_infinity), low);
  } else {
    low = _mm256_min_ps(magnitude, low);
  }
}
template <bool zeros_as_infinity>
ORDO_IMPL_AVX2_FUNCTION inline void magnitude_range_avx2(__m256d v, __m256d& high, __m256d& low) {
  const __m256d magnitude = _mm256_and_pd(v, _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffff)));
  high = _mm256_max_pd(magnitude, high);
  if constexpr (zeros_as_infinity) {
    const __m256d zero_to_infinity = _mm256_and_pd(_mm256_cmp_pd(magnitude, _mm256_setzero_pd(), _CMP_EQ_OQ),
                                                   _mm256_castsi256_pd(_mm256_set1_epi64x(0x7ff0000000000000)));
    low = _mm256_min_pd(_mm256_or_pd(magnitude, zero_to_infinity), low);
  } else {
    low = _mm256_min_pd(magnitude, low);
  }
}

template <class T, class V>
ORDO_IMPL_AVX2_FUNCTION inline void horizontal_range_avx2(const V (&high)[2], const V (&low)[2], T& largest, T& smallest) {
  constexpr int width = static_cast<int>(sizeof(V) / sizeof(T));
  T h[2 * width], l[2 * width];
  memcpy(h, high, sizeof h);
  memcpy(l, low, sizeof l);
  for (int k = 0; k < 2 * width; ++k) {
    largest = h[k] > largest ? h[k] : largest;
    smallest = l[k] < smallest ? l[k] : smallest;
  }
}

// The range of x[begin, end) into largest and smallest (which start at 0 and +Inf).
template <bool zeros_as_infinity>
ORDO_IMPL_AVX2_FUNCTION inline void magnitude_range_avx2(const float* x, std::int64_t begin, std::int64_t end,
                                                       float& largest, float& smallest) {
  __m256 high[2] = {_mm256_set1_ps(largest), _mm256_set1_ps(largest)};
  __m256 low[2] = {_mm256_set1_ps(smallest), _mm256_set1_ps(smallest)};
  std::int64_t i = begin;
  for (; i + 16 <= end; i += 16) {
    for (int k = 0; k < 2; ++k) magnitude_range_avx2<zeros_as_infinity>(_mm256_loadu_ps(x + i + 8 * k), high[k], low[k]);
  }
  horizontal_range_avx2(high, low, largest, smallest);
  for (; i < end; ++i) magnitude_range_step(x[i], largest, smallest);
}
template <bool zeros_as_infinity>
ORDO_IMPL_AVX2_FUNCTION inline void magnitude_range_avx2(const double* x, std::int64_t begin, std::int64_t end,
                                                       double& largest, double& smallest) {
  __m256d high[2] = {_mm256_set1_pd(largest), _mm256_set1_pd(largest)};
  __m256d low[2] = {_mm256_set1_pd(smallest), _mm256_set1_pd(smallest)};
  std::int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    for (int k = 0; k < 2; ++k) magnitude_range_avx2<zeros_as_infinity>(_mm256_loadu_pd(x + i + 4 * k), high[k], low[k]);
  }
  horizontal_range_avx2(high, low, largest, smallest);
  for (; i < end; ++i) magnitude_range_step(x[i], largest, smallest);
}

// Float blocks: the range and the level-0 sums in one pass. Returns where the sums stopped.
ORDO_IMPL_AVX2_FUNCTION inline std::int64_t magnitude_range_and_sums_avx2(const float* x, std::int64_t begin,
                                                                        std::int64_t end, float& largest,
                                                                        float& smallest,
                                                                        double (&s)[1][exact_block_lanes]) {
  __m256 high[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  __m256 low[2] = {_mm256_set1_ps(smallest), _mm256_set1_ps(smallest)};
  __m256d sum[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
  std::int64_t i = begin;
  for (; i + 2 * exact_block_lanes <= end; i += 2 * exact_block_lanes) {
    for (int k = 0; k < 2; ++k) {
      const __m256 a = _mm256_loadu_ps(x + i + 8 * k);
      magnitude_range_avx2<false>(a, high[k], low[k]);
      sum[2 * k] = _mm256_add_pd(sum[2 * k], _mm256_cvtps_pd(_mm256_castps256_ps128(a)));
      sum[2 * k + 1] = _mm256_add_pd(sum[2 * k + 1], _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1)));
    }
  }
  horizontal_range_avx2(high, low, largest, smallest);
  // Elements 8k..8k+7 of each 16 went to sum[2k] and sum[2k + 1]: lane i mod 8 either way.
  double part[4][4];
  for (int k = 0; k < 4; ++k) _mm256_storeu_pd(part[k], sum[k]);
  for (int l = 0; l < 4; ++l) {
    s[0][l] += part[0][l] + part[2][l];
    s[0][l + 4] += part[1][l] + part[3][l];
  }
  return i;
}

template <int levels, class T>
ORDO_IMPL_AVX2_FUNCTION inline void exact_lane_sums_avx2(const T* x, std::int64_t begin, std::int64_t end,
                                                       const double* sigma, double (&s)[levels + 1][exact_block_lanes]) {
  __m256d sum[levels + 1][2], sig[levels > 0 ? levels : 1];
  for (int j = 0; j <= levels; ++j) {
    for (int k = 0; k < 2; ++k) sum[j][k] = _mm256_setzero_pd();
  }
  for (int j = 0; j < levels; ++j) sig[j] = _mm256_set1_pd(sigma[j]);
  std::int64_t i = begin;
  for (; i + exact_block_lanes <= end; i += exact_block_lanes) {
    __m256d r[2];
    load_as_doubles_avx2(x + i, r);
    // The level pass reads the block from L1; meanwhile, fetch the next block from memory.
    _mm_prefetch(reinterpret_cast<const char*>(x + i + 2048), _MM_HINT_T0);
    for (int j = 0; j < levels; ++j) {
      for (int k = 0; k < 2; ++k) {
        const __m256d h = _mm256_sub_pd(_mm256_add_pd(sig[j], r[k]), sig[j]);
        r[k] = _mm256_sub_pd(r[k], h);
        sum[j][k] = _mm256_add_pd(sum[j][k], h);
      }
    }
    for (int k = 0; k < 2; ++k) sum[levels][k] = _mm256_add_pd(sum[levels][k], r[k]);
  }
  for (int j = 0; j <= levels; ++j) {
    for (int k = 0; k < 2; ++k) _mm256_storeu_pd(&s[j][4 * k], sum[j][k]);
  }
  exact_lane_sums<levels, T>(x, begin, i, end, sigma, s);
}

}  // namespace ordo::detail

#endif
