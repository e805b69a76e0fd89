#ifndef ORDO_CORE_DETAIL_STRUCTURED_CHAIN_SOLVER_HPP
#define ORDO_CORE_DETAIL_STRUCTURED_CHAIN_SOLVER_HPP

// The chain DP when some operands are diagonal (operand_structure::diagonal). CLRS 15.2's
// recurrence with the product's cost taken from what each factor is:
//   m[i][j] = min over i <= k < j of m[i][k] + m[k+1][j] + cost(A_i..A_k, A_k+1..A_j),
// where a factor is diagonal when all its operands are, and a product with a diagonal factor
// costs its result's elements (a scaling) or, for two diagonals, their length. Hu–Shing's
// triangulation rests on the product cost d_i d_k d_j and does not apply, so every structured
// chain takes this O(n^3) DP. Ties take the smallest k, as the general DP does.

#include <ordo/core/detail/chain_solver.hpp>
#include <ordo/core/detail/chain_triangulation.hpp>
#include <ordo/core/detail/plan_building.hpp>

#include <cstddef>
#include <cstdint>
#include <span>

namespace ordo::detail {

constexpr preorder_splits structured_chain_splits(std::span<const std::size_t> dims, const diagonal_ranges& diagonals) {
  const std::size_t n = dims.size() - 1;
  preorder_splits splits(n - 1, for_overwrite);
  if (n == 1) return splits;
  const std::size_t* d = dims.data();
  scratch_array<cost_type> cost(n * n);
  scratch_array<std::uint32_t> split(n * n);
  cost_type* m = cost.data();
  for (std::size_t length = 2; length <= n; ++length) {
    for (std::size_t i = 0; i + length <= n; ++i) {
      const std::size_t j = i + length - 1;
      cost_type best = saturated_cost;
      std::size_t best_k = i;
      for (std::size_t k = i; k < j; ++k) {
        const cost_type candidate = saturating_add(saturating_add(m[i * n + k], m[(k + 1) * n + j]),
                                                   estimate_product(d, i, k, j, diagonals).multiplications);
        if (candidate < best || k == i) best = candidate, best_k = k;
      }
      m[i * n + j] = best;
      split.data()[i * n + j] = static_cast<std::uint32_t>(best_k);
    }
  }
  struct range {
    std::size_t first, last;
  };
  scratch_array<range> pending(n, for_overwrite);
  std::size_t depth = 0, written = 0;
  pending.data()[depth++] = {0, n - 1};
  while (depth > 0) {
    const range r = pending.data()[--depth];
    const std::size_t k = split.data()[r.first * n + r.last];
    splits.data()[written++] = static_cast<std::uint32_t>(k);
    if (k + 1 != r.last) pending.data()[depth++] = {k + 1, r.last};
    if (r.first != k) pending.data()[depth++] = {r.first, k};
  }
  return splits;
}

}  // namespace ordo::detail

#endif
