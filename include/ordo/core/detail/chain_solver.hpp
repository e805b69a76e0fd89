#ifndef ORDO_CORE_DETAIL_CHAIN_SOLVER_HPP
#define ORDO_CORE_DETAIL_CHAIN_SOLVER_HPP

// The matrix-chain dynamic program (CLRS 3rd ed., section 15.2):
//   m[i][j] = min over i <= k < j of m[i][k] + m[k+1][j] + p[i-1] p[k] p[j].
// Ties take the smallest k (strict <, k ascending), as CLRS and numpy's multi_dot do.
// The same code runs in constant evaluation and at run time.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>

#include <ordo/core/config.hpp>
#include <ordo/core/detail/chain_triangulation.hpp>

// The run-time key scan in vectors: the compilers' generic vector types (g++, clang, and nvcc's
// host pass, which all define __GNUC__), not <immintrin.h>, so that planning at compile time does
// not parse the intrinsics headers (docs/compile_time.md, "Include cost").
#if ORDO_X86_HOST_SIMD && defined(__GNUC__)
#define ORDO_IMPL_CHAIN_KEY_VECTORS 1
#include <ordo/core/detail/x86/chain_min_keys.hpp>
#else
#define ORDO_IMPL_CHAIN_KEY_VECTORS 0
#endif

namespace ordo::detail {

using cost_type = std::uint64_t;

// A cost that did not fit in 64 bits. Saturating arithmetic keeps the minimum correct: any
// candidate that fits beats every saturated one, and an optimum that saturates is an error.
inline constexpr cost_type saturated_cost = std::numeric_limits<cost_type>::max();

constexpr cost_type saturating_mul(cost_type a, cost_type b) noexcept {
  if (a == 0 || b == 0) return 0;
  return a > saturated_cost / b ? saturated_cost : a * b;
}

constexpr cost_type saturating_add(cost_type a, cost_type b) noexcept {
  return a > saturated_cost - b ? saturated_cost : a + b;
}

// m and the split table of an n-matrix chain, 0-based: operand i is dims[i] x dims[i+1].
// cost[i*n + j] holds m[i][j] for i <= j and is mirrored into cost[j*n + i], so the inner loop
// reads two contiguous rows: m[i][k] along row i and m[k+1][j] along row j.
struct chain_solution {
  std::size_t matrices = 0;
  scratch_array<cost_type> cost;
  scratch_array<std::uint32_t> split;  // split[i*n + j] = k: (A_i..A_k)(A_k+1..A_j), i < j

  constexpr cost_type cost_at(std::size_t i, std::size_t j) const { return cost[i * matrices + j]; }
  constexpr std::size_t split_at(std::size_t i, std::size_t j) const {
    return split[i * matrices + j];
  }
};

// Candidates for one range: the cheapest k in [i, j) with its cost.
struct best_split {
  cost_type cost;
  std::size_t k;
};

constexpr best_split scan_splits_saturating(const cost_type* row_i, const cost_type* row_j,
                                            const std::size_t* dims, std::size_t i,
                                            std::size_t j) noexcept {
  const cost_type outer = saturating_mul(dims[i], dims[j + 1]);
  best_split best{saturated_cost, i};
  bool found = false;
  for (std::size_t k = i; k < j; ++k) {
    const cost_type c =
        saturating_add(saturating_add(row_i[k], row_j[k + 1]), saturating_mul(outer, dims[k + 1]));
    if (!found || c < best.cost) {
      best = {c, k};
      found = true;
    }
  }
  return best;
}

constexpr best_split scan_splits_plain(const cost_type* row_i, const cost_type* row_j,
                                       const std::size_t* dims, std::size_t i,
                                       std::size_t j) noexcept {
  const cost_type outer = cost_type{dims[i]} * dims[j + 1];
  best_split best{saturated_cost, i};
  for (std::size_t k = i; k < j; ++k) {
    const cost_type c = row_i[k] + row_j[k + 1] + outer * dims[k + 1];
    if (c < best.cost) best = {c, k};
  }
  return best;
}

// True when no sum of products over the chain can reach 2^64, so the DP needs no overflow checks:
// every m[i][j] <= (j - i) * max(d)^3.
constexpr bool chain_costs_fit(std::span<const std::size_t> dims) noexcept {
  cost_type largest = 0;
  for (std::size_t d : dims) largest = d > largest ? d : largest;
  const cost_type cube = saturating_mul(saturating_mul(largest, largest), largest);
  return saturating_mul(cube, dims.size()) < saturated_cost;
}

// ---------------------------------------------------------------------------------------------
// Run-time fast path. When every cost times 2^S (S = bits of n) stays below 2^53, the key
//   key(i, j, k) = (m[i][k] + m[k+1][j] + d_i d_k+1 d_j+1) * 2^S + k
// is an exact double, and the smallest key gives both the least cost and, among equal costs, the
// smallest k: the tie rule becomes a plain minimum, which SIMD min instructions compute.
// The table holds upper[i][k] = m[i][k] * 2^S at (i, k), k >= i, and the mirrored
// lower[j][k] = m[k+1][j] * 2^S + k at (j, k), k < j, so that a key is two loads, a multiply and
// two adds, all along contiguous rows. Rows are processed four at a time so that each row j
// segment is loaded once for four rows i.

constexpr unsigned key_shift(std::size_t matrices) noexcept {
  unsigned shift = 1;
  while ((std::size_t{1} << shift) < matrices + 1) ++shift;
  return shift;
}

constexpr bool chain_keys_fit(std::span<const std::size_t> dims) noexcept {
  cost_type largest = 0;
  for (std::size_t d : dims) largest = d > largest ? d : largest;
  const cost_type cube = saturating_mul(saturating_mul(largest, largest), largest);
  const cost_type bound = saturating_add(saturating_mul(cube, dims.size()), 1);
  const cost_type keys = saturating_mul(bound, cost_type{1} << key_shift(dims.size() - 1));
  return saturating_add(keys, dims.size()) < (cost_type{1} << 53);
}

inline double min_key(const double* upper_i, const double* lower_j, const double* next_dim,
                      double outer, std::size_t from, std::size_t to, double best) noexcept {
  for (std::size_t k = from; k < to; ++k) {
    const double key = upper_i[k] + lower_j[k] + outer * next_dim[k];
    best = key < best ? key : best;
  }
  return best;
}

// Minimum keys of rows hi, hi-1, hi-2, hi-3 over k in [k, j) as far as whole vectors go; returns
// where it stopped, and the caller's scalar loop does the rest (all of it without x86 vectors).
inline std::size_t min_keys_of_four_rows(const double* const rows[4], const double* lower_j,
                                         const double* next_dim, const double outer[4],
                                         std::size_t k, std::size_t j, double best[4]) noexcept {
#if ORDO_IMPL_CHAIN_KEY_VECTORS
  return min_keys_of_four_rows_simd(rows, lower_j, next_dim, outer, k, j, best);
#else
  (void)rows, (void)lower_j, (void)next_dim, (void)outer, (void)j, (void)best;
  return k;
#endif
}

inline chain_solution solve_chain_with_keys(std::span<const std::size_t> dims) {
  const std::size_t n = dims.size() - 1;
  chain_solution s;
  s.matrices = n;
  s.cost = scratch_array<cost_type>(n * n);
  s.split = scratch_array<std::uint32_t>(n * n);
  const double scale = static_cast<double>(cost_type{1} << key_shift(n));  // 2^S, exact
  const double inverse_scale = 1.0 / scale;
  scratch_array<double> table(n * n);
  double* t = table.data();
  scratch_array<double> next_dim(n, for_overwrite);  // next_dim[k] = d_k+1, the inner extent of split k
  for (std::size_t k = 0; k < n; ++k) next_dim[k] = static_cast<double>(dims[k + 1]);
  for (std::size_t j = 1; j < n; ++j) t[j * n + j - 1] = static_cast<double>(j - 1);  // m[j][j] = 0

  const auto store = [&](std::size_t i, std::size_t j, double key) {
    // key * 2^-S is exact and non-negative: truncation is the floor, without <cmath>.
    const cost_type whole = static_cast<cost_type>(key * inverse_scale);
    const double cost = static_cast<double>(whole);
    t[i * n + j] = cost * scale;
    if (i > 0) t[j * n + i - 1] = cost * scale + static_cast<double>(i - 1);
    s.cost[i * n + j] = whole;
    s.split[i * n + j] = static_cast<std::uint32_t>(key - cost * scale);
  };
  constexpr double none = std::numeric_limits<double>::infinity();
  for (std::size_t top = n; top > 0;) {
    const std::size_t hi = top - 1;
    const std::size_t lo = top >= 4 ? top - 4 : 0;
    top = lo;
    for (std::size_t j = lo + 1; j < n; ++j) {
      const double* lower_j = t + j * n;
      const double dj = static_cast<double>(dims[j + 1]) * scale;
      if (j <= hi || hi - lo < 3) {
        // Inside the block's own triangle (or a short last block): rows one by one, bottom up.
        for (std::size_t i = (j <= hi ? j : hi + 1); i-- > lo;) {
          store(i, j, min_key(t + i * n, lower_j, next_dim.data(), static_cast<double>(dims[i]) * dj, i, j, none));
        }
        continue;
      }
      const double* rows[4] = {t + hi * n, t + (hi - 1) * n, t + (hi - 2) * n, t + (hi - 3) * n};
      const double outer[4] = {static_cast<double>(dims[hi]) * dj, static_cast<double>(dims[hi - 1]) * dj,
                               static_cast<double>(dims[hi - 2]) * dj, static_cast<double>(dims[hi - 3]) * dj};
      double best[4] = {none, none, none, none};
      const std::size_t stop = min_keys_of_four_rows(rows, lower_j, next_dim.data(), outer, hi, j, best);
      for (std::size_t r = 0; r < 4; ++r) {
        const std::size_t i = hi - r;
        double key = min_key(rows[r], lower_j, next_dim.data(), outer[r], stop, j, best[r]);
        // Splits k in [i, hi) read lower[j][k] for rows above i in this block: stored just before.
        key = min_key(rows[r], lower_j, next_dim.data(), outer[r], i, hi, key);
        store(i, j, key);
      }
    }
  }
  return s;
}

// Requires dims.size() >= 2 (checked by the public entry points).
constexpr chain_solution solve_chain(std::span<const std::size_t> dims) {
  if (!std::is_constant_evaluated() && chain_keys_fit(dims)) return solve_chain_with_keys(dims);
  const std::size_t n = dims.size() - 1;
  chain_solution s;
  s.matrices = n;
  s.cost = scratch_array<cost_type>(n * n);
  s.split = scratch_array<std::uint32_t>(n * n);
  const bool fits = chain_costs_fit(dims);
  cost_type* m = s.cost.data();
  const std::size_t* d = dims.data();
  // Row i needs rows i+1..n-1 complete (mirrored columns), and its own entries left of j.
  for (std::size_t i = n; i-- > 0;) {
    cost_type* row_i = m + i * n;
    for (std::size_t j = i + 1; j < n; ++j) {
      const cost_type* row_j = m + j * n;
      const best_split best = fits ? scan_splits_plain(row_i, row_j, d, i, j)
                                   : scan_splits_saturating(row_i, row_j, d, i, j);
      row_i[j] = best.cost;
      m[j * n + i] = best.cost;
      s.split[i * n + j] = static_cast<std::uint32_t>(best.k);
    }
  }
  return s;
}

}  // namespace ordo::detail

#endif
