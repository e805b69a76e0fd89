#ifndef ORDO_KERNELS_DIAGONAL_HPP
#define ORDO_KERNELS_DIAGONAL_HPP

// ordo::diagonal(d): a column vector used as the diagonal matrix diag(d) inside a product,
// never stored as an n x n matrix. The planner costs a product with it as the scaling it is
// (rows x cols multiplications: its rows scaled from the left, its columns from the right), and
// a product of two diagonals as their element-wise product, so that an MLP's backward pass
//
//   auto g0 = ordo::transpose(w1) * ordo::diagonal(d1) * ordo::transpose(w2) * ordo::diagonal(d2) * g;
//
// is planned as a whole: for one gradient right to left, as matrix-vector products and vector
// scalings; for a wide batch of gradients, weights and diagonals first. Scalings run as portable
// Kokkos kernels on the operands' execution space, whatever GEMM backend the general products use.
// Alone, diag(d) converts to a dense n x n matrix; it is its own transpose.

#include <ordo/kernels/chain_expression.hpp>
#include <ordo/kernels/detail/diagonal_leaf.hpp>
#include <ordo/kernels/expression.hpp>

#include <type_traits>

namespace ordo {

// diag(d). A d with more than one column fails to compile (static) or throws (dynamic), naming
// d's shape; what follows a failed call compiles silently (diagnostic::invalid_product).
template <any_matrix Vector>
auto diagonal(const Vector& d) {
  using vector_type = std::remove_cvref_t<Vector>;
  if constexpr (!column_vector_like<vector_type>) {
    using d_is = diagnostic::diagonal_operand_is<diagnostic::extent_v<vector_type::static_rows>,
                                                 diagnostic::extent_v<vector_type::static_cols>>;
    static_assert(d_is::a_column_vector, "ordo::diagonal(d) requires d to be a column vector (n x 1)");
    return diagnostic::invalid_product{};
  } else {
    return diagonal_matrix<vector_type>(d);
  }
}

}  // namespace ordo

#endif
