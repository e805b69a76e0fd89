#ifndef ORDO_CORE_DETAIL_X86_CHAIN_MIN_KEYS_HPP
#define ORDO_CORE_DETAIL_X86_CHAIN_MIN_KEYS_HPP

// Host-only: the planner's run-time key scan (chain_solver.hpp) in 4-lane (when the build targets
// AVX) or 2-lane (SSE2) vectors, four rows at a time. Included only on x86-64 hosts by compilers
// with GNU vector extensions (ORDO_IMPL_CHAIN_KEY_VECTORS).
//
// Written with the generic vector types of g++ and clang rather than <immintrin.h>: they compile to
// the same (v)minpd/(v)addpd/(v)mulpd, and a translation unit that only plans at compile time does
// not parse the intrinsics headers, which cost g++ more than the rest of the planner's headers
// together (docs/compile_time.md, "Include cost").

#include <cstddef>

namespace ordo::detail {

#if defined(__AVX__)
inline constexpr std::size_t key_lanes = 4;
#else
inline constexpr std::size_t key_lanes = 2;
#endif
using key_vector = double __attribute__((vector_size(key_lanes * sizeof(double))));

inline key_vector load_keys(const double* p) noexcept {
  key_vector v;
  __builtin_memcpy(&v, p, sizeof v);  // an unaligned load (movupd)
  return v;
}

inline key_vector splat_key(double x) noexcept {
  key_vector v{};
  return v + x;
}

// Minimum keys of rows hi, hi-1, hi-2, hi-3 over k in [k, j) in whole vectors; returns where it
// stopped (the caller scans the rest). Keys are exact integers in doubles and never NaN, so
// a < b ? a : b is minpd and the sums are exact in any order.
inline std::size_t min_keys_of_four_rows_simd(const double* const rows[4], const double* lower_j,
                                              const double* next_dim, const double outer[4], std::size_t k,
                                              std::size_t j, double best[4]) noexcept {
  key_vector b[4], o[4];
  for (std::size_t r = 0; r < 4; ++r) {
    b[r] = splat_key(best[r]);
    o[r] = splat_key(outer[r]);
  }
  for (; k + key_lanes <= j; k += key_lanes) {
    const key_vector x = load_keys(lower_j + k);
    const key_vector y = load_keys(next_dim + k);
    for (std::size_t r = 0; r < 4; ++r) {
      const key_vector key = (load_keys(rows[r] + k) + x) + o[r] * y;
      b[r] = key < b[r] ? key : b[r];
    }
  }
  for (std::size_t r = 0; r < 4; ++r) {
    for (std::size_t lane = 0; lane < key_lanes; ++lane) {
      best[r] = b[r][lane] < best[r] ? b[r][lane] : best[r];
    }
  }
  return k;
}

}  // namespace ordo::detail

#endif
