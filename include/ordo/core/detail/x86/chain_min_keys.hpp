#ifndef ORDO_CORE_DETAIL_X86_CHAIN_MIN_KEYS_HPP
#define ORDO_CORE_DETAIL_X86_CHAIN_MIN_KEYS_HPP

// Host-only: the planner's run-time key scan (chain_solver.hpp) with AVX (when the build targets
// it) or SSE2 vectors, four rows at a time. Included only where ORDO_X86_HOST_SIMD is set.

#include <immintrin.h>

#include <cstddef>

namespace ordo::detail {

// Minimum keys of rows hi, hi-1, hi-2, hi-3 over k in [k, j) in whole vectors; returns where it
// stopped (the caller scans the rest).
inline std::size_t min_keys_of_four_rows_simd(const double* const rows[4], const double* lower_j,
                                              const double* next_dim, const double outer[4], std::size_t k,
                                              std::size_t j, double best[4]) noexcept {
#if defined(__AVX__)
  constexpr std::size_t width = 4;
  __m256d b0 = _mm256_set1_pd(best[0]), b1 = _mm256_set1_pd(best[1]);
  __m256d b2 = _mm256_set1_pd(best[2]), b3 = _mm256_set1_pd(best[3]);
  const __m256d o0 = _mm256_set1_pd(outer[0]), o1 = _mm256_set1_pd(outer[1]);
  const __m256d o2 = _mm256_set1_pd(outer[2]), o3 = _mm256_set1_pd(outer[3]);
  for (; k + width <= j; k += width) {
    const __m256d x = _mm256_loadu_pd(lower_j + k);
    const __m256d y = _mm256_loadu_pd(next_dim + k);
    b0 = _mm256_min_pd(b0, _mm256_add_pd(_mm256_add_pd(_mm256_loadu_pd(rows[0] + k), x), _mm256_mul_pd(o0, y)));
    b1 = _mm256_min_pd(b1, _mm256_add_pd(_mm256_add_pd(_mm256_loadu_pd(rows[1] + k), x), _mm256_mul_pd(o1, y)));
    b2 = _mm256_min_pd(b2, _mm256_add_pd(_mm256_add_pd(_mm256_loadu_pd(rows[2] + k), x), _mm256_mul_pd(o2, y)));
    b3 = _mm256_min_pd(b3, _mm256_add_pd(_mm256_add_pd(_mm256_loadu_pd(rows[3] + k), x), _mm256_mul_pd(o3, y)));
  }
  alignas(32) double lanes[4][width];
  _mm256_store_pd(lanes[0], b0);
  _mm256_store_pd(lanes[1], b1);
  _mm256_store_pd(lanes[2], b2);
  _mm256_store_pd(lanes[3], b3);
#else
  constexpr std::size_t width = 2;
  __m128d b0 = _mm_set1_pd(best[0]), b1 = _mm_set1_pd(best[1]);
  __m128d b2 = _mm_set1_pd(best[2]), b3 = _mm_set1_pd(best[3]);
  const __m128d o0 = _mm_set1_pd(outer[0]), o1 = _mm_set1_pd(outer[1]);
  const __m128d o2 = _mm_set1_pd(outer[2]), o3 = _mm_set1_pd(outer[3]);
  for (; k + width <= j; k += width) {
    const __m128d x = _mm_loadu_pd(lower_j + k);
    const __m128d y = _mm_loadu_pd(next_dim + k);
    b0 = _mm_min_pd(b0, _mm_add_pd(_mm_add_pd(_mm_loadu_pd(rows[0] + k), x), _mm_mul_pd(o0, y)));
    b1 = _mm_min_pd(b1, _mm_add_pd(_mm_add_pd(_mm_loadu_pd(rows[1] + k), x), _mm_mul_pd(o1, y)));
    b2 = _mm_min_pd(b2, _mm_add_pd(_mm_add_pd(_mm_loadu_pd(rows[2] + k), x), _mm_mul_pd(o2, y)));
    b3 = _mm_min_pd(b3, _mm_add_pd(_mm_add_pd(_mm_loadu_pd(rows[3] + k), x), _mm_mul_pd(o3, y)));
  }
  alignas(16) double lanes[4][width];
  _mm_store_pd(lanes[0], b0);
  _mm_store_pd(lanes[1], b1);
  _mm_store_pd(lanes[2], b2);
  _mm_store_pd(lanes[3], b3);
#endif
  for (std::size_t r = 0; r < 4; ++r) {
    for (std::size_t lane = 0; lane < width; ++lane) {
      best[r] = lanes[r][lane] < best[r] ? lanes[r][lane] : best[r];
    }
  }
  return k;
}

}  // namespace ordo::detail

#endif
