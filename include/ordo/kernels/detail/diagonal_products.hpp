#ifndef ORDO_KERNELS_DETAIL_DIAGONAL_PRODUCTS_HPP
#define ORDO_KERNELS_DETAIL_DIAGONAL_PRODUCTS_HPP

// The products of a plan that have a diagonal factor (planned_product::kind other than general):
// a diagonal is an n x 1 View of its elements, and each product is one element-wise pass, with the
// alpha and beta of the GEMM it replaces. Multiply-adds in Compute, each result rounded once to
// storage, as the portable GEMM does.

#include <ordo/core/planned_product.hpp>
#include <ordo/kernels/detail/portable_gemv.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace ordo::detail {

template <class Compute, class NodeView>
struct diagonal_product_kernel {
  NodeView left, right, out;
  Compute alpha, beta;
  std::int64_t cols;
  product_kind kind;
  bool dense_result;  // a diagonal result written as a dense square matrix (zeros off the diagonal)
  bool left_only;     // diag(left) alone: right is not read

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t e) const {
    using storage_type = typename NodeView::non_const_value_type;
    const std::int64_t i = e / cols, j = e % cols;
    Compute product;
    if (kind == product_kind::scale_rows) {
      product = gemv_load<Compute>(left(i, 0)) * gemv_load<Compute>(right(i, j));
    } else if (kind == product_kind::scale_cols) {
      product = gemv_load<Compute>(left(i, j)) * gemv_load<Compute>(right(j, 0));
    } else {
      const std::int64_t k = dense_result ? i : e;
      if (dense_result && i != j) {
        product = Compute(0);
      } else {
        product = left_only ? gemv_load<Compute>(left(k, 0))
                            : gemv_load<Compute>(left(k, 0)) * gemv_load<Compute>(right(k, 0));
      }
    }
    const Compute scaled = alpha * product;
    out(i, j) = gemv_store<storage_type>(beta == Compute(0) ? scaled : scaled + beta * gemv_load<Compute>(out(i, j)));
  }
};

// out = alpha * (left right) + beta * out for a product of kind scale_rows, scale_cols or
// diagonal. out is rows x cols of the product, or rows x 1 for a diagonal result kept diagonal.
// With beta 0 out is not read.
template <class Compute, class ExecutionSpace, class NodeView>
void diagonal_product(const ExecutionSpace& space, product_kind kind, Compute alpha, const NodeView& left,
                      const NodeView& right, Compute beta, const NodeView& out, bool left_only = false) {
  const auto rows = static_cast<std::int64_t>(out.extent(0)), cols = static_cast<std::int64_t>(out.extent(1));
  if (rows == 0 || cols == 0) return;
  const bool dense_result = kind == product_kind::diagonal && cols == rows && rows > 1;
  Kokkos::parallel_for(
      "ordo::evaluate diagonal product",
      Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>(space, 0, rows * cols),
      diagonal_product_kernel<Compute, NodeView>{left, right, out, alpha, beta, cols, kind, dense_result, left_only});
}

// out = alpha * diag(d) + beta * out: a diagonal on its own as a dense matrix.
template <class Compute, class ExecutionSpace, class NodeView>
void expand_diagonal(const ExecutionSpace& space, Compute alpha, const NodeView& d, Compute beta, const NodeView& out) {
  diagonal_product(space, product_kind::diagonal, alpha, d, d, beta, out, true);
}

}  // namespace ordo::detail

#endif
