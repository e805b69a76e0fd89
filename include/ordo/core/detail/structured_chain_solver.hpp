#ifndef ORDO_CORE_DETAIL_STRUCTURED_CHAIN_SOLVER_HPP
#define ORDO_CORE_DETAIL_STRUCTURED_CHAIN_SOLVER_HPP

// The chain DP for operands with structure (core/matrix_kind.hpp), after CLRS 15.2 with the
// kernel chosen per split as in GMC (Barthels, Copik and Bientinesi, CGO 2018):
//   m[i][j] = min over i <= k < j and over the kernels that can form (A_i..A_k)(A_k+1..A_j)
//             of m[i][k] + m[k+1][j] + cost(kernel, d_i, d_k+1, d_j+1),
// a kernel's cost given by the caller's cost model (core/cost_model.hpp). The kind of A_i..A_j
// follows from its operands alone (product_kind_of is associative), so one entry per range is
// exact. Ties: the smallest k, then the kernel first in chain_kernel's order, then the fewest
// explicit inversions, which makes the chosen tree the lexicographically smallest optimal one in
// pre-order (what tests/planner_test.cpp's exhaustive search checks). O(n^3) time, O(n^2) memory.

#include <ordo/core/chain_error.hpp>
#include <ordo/core/chain_kernel.hpp>
#include <ordo/core/detail/chain_solver.hpp>
#include <ordo/core/detail/chain_triangulation.hpp>
#include <ordo/core/matrix_kind.hpp>
#include <ordo/core/structured_product.hpp>

#include <cstddef>
#include <cstdint>
#include <span>

namespace ordo::detail {

// A range's product as a factor of a larger one.
struct chain_factor {
  matrix_kind kind;
  bool leaf;
  chain_operand operand;  // the normalized operand, for a leaf
  constexpr bool inverted() const noexcept { return leaf && operand.inverted; }
};

struct product_option {
  chain_kernel kernel = chain_kernel::gemm;
  factor_side side = factor_side::left;
  inverse_use left_inverse = inverse_use::none, right_inverse = inverse_use::none;
};

// The tie order between options of one split: kernel, then explicit inversions.
constexpr bool option_before(const product_option& a, const product_option& b) noexcept {
  if (a.kernel != b.kernel) return a.kernel < b.kernel;
  if (a.left_inverse != b.left_inverse) return a.left_inverse < b.left_inverse;
  return a.right_inverse < b.right_inverse;
}

// X^T X or X X^T of one stored general X: SYRK, a symmetric result.
constexpr bool is_gram_pair(const chain_factor& l, const chain_factor& r) noexcept {
  return l.leaf && r.leaf && !l.operand.inverted && !r.operand.inverted && l.operand.source != 0 &&
         l.operand.source == r.operand.source && l.operand.kind == matrix_kind::general &&
         r.operand.kind == matrix_kind::general && l.operand.transposed != r.operand.transposed;
}

struct option_list {
  product_option options[8];
  std::size_t count = 0;
  constexpr void add(product_option o) noexcept { options[count++] = o; }
};

// Multiplications of two factors taken as they are (explicitly inverted ones included).
constexpr void add_multiply_options(option_list& list, const chain_factor& l, const chain_factor& r, std::size_t rows,
                                    std::size_t cols, inverse_use li, inverse_use ri) noexcept {
  using k = chain_kernel;
  if (l.kind == matrix_kind::diagonal && r.kind == matrix_kind::diagonal) {
    list.add({k::diagonal_product, factor_side::left, li, ri});
    return;
  }
  if (l.kind == matrix_kind::diagonal) return list.add({k::scale_rows, factor_side::left, li, ri});
  if (r.kind == matrix_kind::diagonal) return list.add({k::scale_cols, factor_side::right, li, ri});
  list.add({rows == 1 && cols == 1 ? k::dot : rows == 1 || cols == 1 ? k::gemv : k::gemm, factor_side::left, li, ri});
  if (li == inverse_use::none && ri == inverse_use::none && is_gram_pair(l, r)) {
    list.add({k::syrk, factor_side::left, li, ri});
  }
  if (is_triangular(l.kind)) {
    list.add({cols == 1 ? k::trmv : k::trmm, factor_side::left, li, ri});
  } else if (is_triangular(r.kind)) {
    list.add({rows == 1 ? k::trmv : k::trmm, factor_side::right, li, ri});
  }
}

// A solve with the factor on `side`; the other factor enters as `other` says.
constexpr void add_solve_option(option_list& list, const chain_factor& l, const chain_factor& r, std::size_t rows,
                                std::size_t cols, factor_side side, inverse_use other) noexcept {
  using k = chain_kernel;
  const bool left = side == factor_side::left;
  const matrix_kind solved = left ? l.kind : r.kind, against = left ? r.kind : l.kind;
  const inverse_use li = left ? inverse_use::solve : other, ri = left ? other : inverse_use::solve;
  const bool vector = left ? cols == 1 : rows == 1;
  k kernel = k::gesv;
  if (solved == matrix_kind::diagonal) {
    kernel = against == matrix_kind::diagonal ? k::diagonal_product : left ? k::scale_rows : k::scale_cols;
  } else if (is_triangular(solved)) {
    kernel = vector ? k::trsv : k::trsm;
  } else if (solved == matrix_kind::spd) {
    kernel = k::posv;
  } else if (solved == matrix_kind::symmetric) {
    kernel = k::sysv;
  }
  list.add({kernel, side, li, ri});
}

// Every kernel that can form l r (rows x cols); explicit inverses only when allowed.
constexpr option_list product_options(const chain_factor& l, const chain_factor& r, std::size_t rows,
                                      std::size_t cols, bool allow_explicit) noexcept {
  using u = inverse_use;
  option_list list;
  const bool li = l.inverted(), ri = r.inverted();
  if (!li && !ri) {
    add_multiply_options(list, l, r, rows, cols, u::none, u::none);
  } else if (li && ri) {
    if (l.kind == matrix_kind::diagonal && r.kind == matrix_kind::diagonal) {
      list.add({chain_kernel::diagonal_product, factor_side::left, u::solve, u::solve});
    }
    if (allow_explicit) {
      add_solve_option(list, l, r, rows, cols, factor_side::right, u::explicit_inverse);
      add_solve_option(list, l, r, rows, cols, factor_side::left, u::explicit_inverse);
      add_multiply_options(list, l, r, rows, cols, u::explicit_inverse, u::explicit_inverse);
    }
  } else {
    add_solve_option(list, l, r, rows, cols, li ? factor_side::left : factor_side::right, u::none);
    if (allow_explicit) {
      add_multiply_options(list, l, r, rows, cols, li ? u::explicit_inverse : u::none,
                           ri ? u::explicit_inverse : u::none);
    }
  }
  return list;
}

// An option's cost in the model: its kernel plus its explicit inversions (of the inner x inner
// factor on that side: a left inverse is rows x rows = inner x inner, a right one inner x inner).
template <class Model>
constexpr cost_type option_cost(const Model& model, const product_option& o, const chain_factor& l,
                                const chain_factor& r, std::size_t rows, std::size_t inner, std::size_t cols) {
  cost_type cost = model(kernel_call{o.kernel, rows, inner, cols});
  if (o.left_inverse == inverse_use::explicit_inverse) {
    cost = saturating_add(cost, model(kernel_call{explicit_inverse_kernel(l.kind), inner, inner, inner}));
  }
  if (o.right_inverse == inverse_use::explicit_inverse) {
    cost = saturating_add(cost, model(kernel_call{explicit_inverse_kernel(r.kind), inner, inner, inner}));
  }
  return cost;
}

// The DP's tables, 0-based, entry i * n + j for the range i..j.
struct structured_solution {
  std::size_t matrices = 0;
  scratch_array<cost_type> cost;
  scratch_array<std::uint32_t> split;
  scratch_array<product_option> choice;
  scratch_array<matrix_kind> kind;
  scratch_array<unsigned char> feasible;  // some plan exists without a forbidden explicit inverse

  constexpr chain_factor factor(std::span<const chain_operand> operands, std::size_t i, std::size_t j) const {
    return {kind[i * matrices + j], i == j, operands[i]};
  }
};

template <class Model>
constexpr structured_solution solve_structured_chain(std::span<const std::size_t> dims,
                                                     std::span<const chain_operand> operands, const Model& model,
                                                     bool allow_explicit) {
  const std::size_t n = dims.size() - 1;
  const std::size_t* d = dims.data();
  structured_solution s{n, scratch_array<cost_type>(n * n), scratch_array<std::uint32_t>(n * n),
                        scratch_array<product_option>(n * n), scratch_array<matrix_kind>(n * n),
                        scratch_array<unsigned char>(n * n)};
  for (std::size_t i = 0; i < n; ++i) {
    s.kind[i * n + i] = effective_kind(operands[i]);
    s.feasible[i * n + i] = 1;
  }
  for (std::size_t length = 2; length <= n; ++length) {
    for (std::size_t i = 0; i + length <= n; ++i) {
      const std::size_t j = i + length - 1;
      const bool gram = length == 2 && is_gram_pair(s.factor(operands, i, i), s.factor(operands, j, j));
      s.kind[i * n + j] = gram ? matrix_kind::symmetric : product_kind_of(s.kind[i * n + j - 1], s.kind[j * n + j]);
      bool found = false;
      cost_type best = saturated_cost;
      std::size_t best_k = i;
      product_option best_option{};
      for (std::size_t k = i; k < j; ++k) {
        if (!s.feasible[i * n + k] || !s.feasible[(k + 1) * n + j]) continue;
        const chain_factor l = s.factor(operands, i, k), r = s.factor(operands, k + 1, j);
        const option_list list = product_options(l, r, d[i], d[j + 1], allow_explicit);
        const cost_type children = saturating_add(s.cost[i * n + k], s.cost[(k + 1) * n + j]);
        for (std::size_t o = 0; o < list.count; ++o) {
          const product_option& option = list.options[o];
          const cost_type c = saturating_add(children, option_cost(model, option, l, r, d[i], d[k + 1], d[j + 1]));
          if (!found || c < best || (c == best && k == best_k && option_before(option, best_option))) {
            found = true, best = c, best_k = k, best_option = option;
          }
        }
      }
      s.feasible[i * n + j] = found ? 1 : 0;
      s.cost[i * n + j] = best;
      s.split[i * n + j] = static_cast<std::uint32_t>(best_k);
      s.choice[i * n + j] = best_option;
    }
  }
  return s;
}

// The chosen tree as pre-order splits (chain_triangulation.hpp's form).
constexpr preorder_splits structured_splits(const structured_solution& s) {
  return splits_of_table(s.matrices, [&](std::size_t first, std::size_t last) -> std::size_t {
    return s.split[first * s.matrices + last];
  });
}

}  // namespace ordo::detail

#endif
