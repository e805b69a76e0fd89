#ifndef ORDO_DETAIL_CHAIN_SOLVER_HPP
#define ORDO_DETAIL_CHAIN_SOLVER_HPP

// The matrix-chain dynamic program (CLRS 3rd ed., section 15.2):
//   m[i][j] = min over i <= k < j of m[i][k] + m[k+1][j] + p[i-1] p[k] p[j].
// Ties take the smallest k (strict <, k ascending), as CLRS and numpy's multi_dot do.
// The same code runs in constant evaluation and at run time.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

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
  std::vector<cost_type> cost;
  std::vector<std::uint32_t> split;  // split[i*n + j] = k: (A_i..A_k)(A_k+1..A_j), i < j

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

// Used when no cost can reach 2^64: plain arithmetic, four independent minima so that the
// compare-and-select chains overlap; merged with the same smallest-k tie rule.
inline best_split scan_splits_unrolled(const cost_type* row_i, const cost_type* row_j,
                                       const std::size_t* dims, std::size_t i,
                                       std::size_t j) noexcept {
  const cost_type outer = cost_type{dims[i]} * dims[j + 1];
  cost_type b0 = saturated_cost, b1 = saturated_cost, b2 = saturated_cost, b3 = saturated_cost;
  std::size_t k0 = i, k1 = i, k2 = i, k3 = i;
  std::size_t k = i;
  for (; k + 4 <= j; k += 4) {
    const cost_type c0 = row_i[k] + row_j[k + 1] + outer * dims[k + 1];
    const cost_type c1 = row_i[k + 1] + row_j[k + 2] + outer * dims[k + 2];
    const cost_type c2 = row_i[k + 2] + row_j[k + 3] + outer * dims[k + 3];
    const cost_type c3 = row_i[k + 3] + row_j[k + 4] + outer * dims[k + 4];
    if (c0 < b0) b0 = c0, k0 = k;
    if (c1 < b1) b1 = c1, k1 = k + 1;
    if (c2 < b2) b2 = c2, k2 = k + 2;
    if (c3 < b3) b3 = c3, k3 = k + 3;
  }
  for (; k < j; ++k) {
    const cost_type c = row_i[k] + row_j[k + 1] + outer * dims[k + 1];
    if (c < b0 || (c == b0 && k < k0)) b0 = c, k0 = k;
  }
  // Every cost is below saturated_cost here, so an untouched lane never wins.
  best_split best{b0, k0};
  const best_split lanes[3] = {{b1, k1}, {b2, k2}, {b3, k3}};
  for (const best_split& lane : lanes) {
    if (lane.cost < best.cost || (lane.cost == best.cost && lane.k < best.k)) best = lane;
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

// Requires dims.size() >= 2 (checked by the public entry points).
constexpr chain_solution solve_chain(std::span<const std::size_t> dims) {
  const std::size_t n = dims.size() - 1;
  chain_solution s;
  s.matrices = n;
  s.cost.assign(n * n, 0);
  s.split.assign(n * n, 0);
  const bool fits = chain_costs_fit(dims);
  cost_type* m = s.cost.data();
  const std::size_t* d = dims.data();
  // Row i needs rows i+1..n-1 complete (mirrored columns), and its own entries left of j.
  for (std::size_t i = n; i-- > 0;) {
    cost_type* row_i = m + i * n;
    for (std::size_t j = i + 1; j < n; ++j) {
      const cost_type* row_j = m + j * n;
      best_split best{};
      if (!fits) {
        best = scan_splits_saturating(row_i, row_j, d, i, j);
      } else if (std::is_constant_evaluated()) {
        best = scan_splits_plain(row_i, row_j, d, i, j);
      } else {
        best = scan_splits_unrolled(row_i, row_j, d, i, j);
      }
      row_i[j] = best.cost;
      m[j * n + i] = best.cost;
      s.split[i * n + j] = static_cast<std::uint32_t>(best.k);
    }
  }
  return s;
}

}  // namespace ordo::detail

#endif
