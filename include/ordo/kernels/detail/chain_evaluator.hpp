#ifndef ORDO_KERNELS_DETAIL_CHAIN_EVALUATOR_HPP
#define ORDO_KERNELS_DETAIL_CHAIN_EVALUATOR_HPP

// Evaluates a planned product (ordo::chain_expression) into a matrix: one GEMM/GEMV call per
// product of the plan, in the plan's order, every intermediate at its planned offset in one
// workspace of plan.peak_temporary_elements() elements. The expression's scalar is the alpha of
// the last product; transposed operands are strided Views of their matrices (BLAS, cuBLAS and the
// portable kernels read them with a transpose flag or strides, never a copy).

#include <ordo/core/chain.hpp>
#include <ordo/platform/shape_text.hpp>
#include <ordo/platform/storage_conversion.hpp>
#include <ordo/core/scalar_traits.hpp>
#include <ordo/kernels/detail/borrowed_leaf.hpp>
#include <ordo/kernels/detail/diagonal_products.hpp>
#include <ordo/kernels/detail/huge_pages.hpp>
#include <ordo/kernels/detail/small_product.hpp>
#include <ordo/kernels/gemm.hpp>
#include <ordo/kernels/matrix.hpp>
#include <ordo/platform/call_workspace.hpp>

#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace ordo {

namespace diagnostic {

template <class Expected, class Given>
struct result_shape_mismatch {
  static_assert(always_false<Expected, Given>,
                "ordo::evaluate(chain, result): the result's static extents differ from the chain's (expected and "
                "given shapes are in the template arguments above)");
};

}  // namespace diagnostic

namespace detail {

// The matrix whose memory a leaf reads: the leaf itself, or the matrix a view (a transpose) reads.
template <any_matrix M>
const M& storage_of(const M& m) noexcept {
  return m;
}
template <class View>
  requires requires(const View& v) {
    { v.matrix() } -> any_matrix;
  }
const auto& storage_of(const View& v) noexcept {
  return v.matrix();
}
template <class Diagonal>
  requires requires(const Diagonal& d) {
    { d.vector() } -> any_matrix;
  }
const auto& storage_of(const Diagonal& d) noexcept {
  return d.vector();
}
template <class Leaf>
const auto& storage_of(const borrowed_leaf<Leaf>& leaf) noexcept {
  return storage_of(leaf.get());
}

// Whether two matrices' elements share memory (overlapping ranges, not only equal starts).
template <any_matrix M, any_matrix R>
bool shares_memory(const M& m, const R& r) {
  if (m.view().span() == 0 || r.view().span() == 0) return false;
  const auto* m_begin = reinterpret_cast<const char*>(m.view().data());
  const auto* r_begin = reinterpret_cast<const char*>(r.view().data());
  const auto* m_end = m_begin + m.view().span() * sizeof(typename M::value_type);
  const auto* r_end = r_begin + r.view().span() * sizeof(typename R::value_type);
  return m_begin < r_end && r_begin < m_end;
}

// out(i, j) = alpha * in(i, j) + beta * out(i, j), in the compute type and rounded once: a
// one-operand product with a scalar or a transpose, or one accumulated (C += 2 * a). With beta 0
// out is not read, as BLAS does not read C then (it may hold NaN).
template <class Compute, class InView, class OutView>
struct scaled_copy_kernel {
  InView in;
  OutView out;
  Compute alpha, beta;
  std::int64_t cols;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t e) const {
    using storage_type = typename OutView::non_const_value_type;
    const std::int64_t i = e / cols, j = e % cols;
    const Compute scaled = alpha * gemv_load<Compute>(in(i, j));
    out(i, j) = gemv_store<storage_type>(beta == Compute(0) ? scaled : scaled + beta * gemv_load<Compute>(out(i, j)));
  }
};

template <class Compute, class ExecutionSpace, class InView, class OutView>
void scaled_copy(const ExecutionSpace& space, Compute alpha, const InView& in, const OutView& out,
                 Compute beta = Compute(0)) {
  const auto rows = static_cast<std::int64_t>(out.extent(0)), cols = static_cast<std::int64_t>(out.extent(1));
  if (rows == 0 || cols == 0) return;
  Kokkos::parallel_for("ordo::evaluate scaled copy",
                       Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>(space, 0, rows * cols),
                       scaled_copy_kernel<Compute, InView, OutView>{in, out, alpha, beta, cols});
}

// The products of the plan into `result`, which shares no memory with an operand.
// Runs a plan's products: nodes holds the n leaves and room for the n - 1 products; the root
// goes to out_view as alpha * product + beta * out_view, the others into one workspace of the
// plan's peak (make_node(data, rows, cols) views a part of it). Shared by planned expressions and
// evaluate_chain.
// HasDiagonals: whether the plan may hold scalings (product_kind other than general); without it
// the scaling kernel is not instantiated, which a dense chain would pay for in compile time.
template <class Compute, bool HasDiagonals = false, class ExecutionSpace, class Plan, class NodeView, class MakeNode>
void run_products(const ExecutionSpace& space, const Plan& plan, std::vector<NodeView>& nodes,
                  const NodeView& out_view, gemm_compute_t<Compute, NodeView> alpha,
                  gemm_compute_t<Compute, NodeView> beta, gemm_backend backend, const MakeNode& make_node) {
  using value_type = typename NodeView::non_const_value_type;
  using memory_space = typename NodeView::memory_space;
  using compute_type = gemm_compute_t<Compute, NodeView>;
  const std::size_t n = plan.matrices();
  const auto workspace_elements = static_cast<std::size_t>(plan.peak_temporary_elements());
  // Stream-ordered on a GPU, so that a call neither allocates device memory afresh nor waits for
  // the device to free it (platform/call_workspace.hpp).
  const call_workspace<value_type, ExecutionSpace, memory_space> workspace(space, "ordo::chain workspace",
                                                                           workspace_elements);
  if constexpr (std::is_same_v<memory_space, Kokkos::HostSpace>) {
    if (workspace_elements > 0) advise_huge_pages(workspace.data(), workspace_elements * sizeof(value_type));
  }
  const auto products = plan.products();
  for (std::size_t p = 0; p < products.size(); ++p) {
    const planned_product& step = products[p];
    const bool is_root = p + 1 == products.size();
    // A diagonal product keeps its n x 1 diagonal, except at the root, which is the dense result.
    const std::size_t cols = step.kind == product_kind::diagonal ? 1 : step.cols;
    const NodeView out = is_root ? out_view : make_node(workspace.data() + step.workspace_offset, step.rows, cols);
    if constexpr (HasDiagonals) {
      if (step.kind != product_kind::general) {
        diagonal_product(space, step.kind, is_root ? alpha : compute_type(1), nodes[step.left], nodes[step.right],
                         is_root ? beta : compute_type(0), out);
        nodes[n + p] = out;
        continue;
      }
    }
    gemm_dispatch<Compute>(space, is_root ? alpha : compute_type(1), nodes[step.left], nodes[step.right],
                           is_root ? beta : compute_type(0), out, backend);
    nodes[n + p] = out;
  }
  // The workspace is released on return; kernels that still read it must be done.
  space.fence();
}

// With accumulate, result += the product: the last product's beta is 1 (BLAS adds into C), and a
// one-operand product is added element by element.
template <class Compute, class Expression, class R>
void evaluate_unaliased(const typename Expression::execution_space& space, const Expression& expression,
                        const R& result, gemm_backend backend, bool accumulate = false) {
  using value_type = typename Expression::value_type;
  using memory_space = typename Expression::memory_space;
  // Row-major Views unless an operand is transposed: the portable kernels index a LayoutRight View
  // with one stride fewer.
  using node_layout = std::conditional_t<Expression::has_transposed_operand, Kokkos::LayoutStride, Kokkos::LayoutRight>;
  using node_view = Kokkos::View<value_type**, node_layout, memory_space, Kokkos::MemoryUnmanaged>;
  using compute_type = gemm_compute_t<Compute, node_view>;
  const auto make_node = [](value_type* data, std::size_t rows, std::size_t cols) {
    if constexpr (std::is_same_v<node_layout, Kokkos::LayoutStride>) {
      return node_view(data, Kokkos::LayoutStride(rows, cols, cols, 1));
    } else {
      return node_view(data, rows, cols);
    }
  };

  const auto& plan = expression.plan();
  const std::size_t n = plan.matrices();
  std::vector<node_view> nodes(2 * n - 1);
  std::size_t leaf = 0;
  boost::hana::for_each(expression.operands(), [&](const auto& operand) { nodes[leaf++] = node_view(operand.view()); });
  const node_view out_view(result.view());
  const auto alpha = static_cast<compute_type>(expression.scale());
  const compute_type beta = accumulate ? compute_type(1) : compute_type(0);

  // A one-leaf product (a copy, a scaling, a transpose) is known by its type: the copy kernels are
  // instantiated only for those.
  if constexpr (Expression::matrices == 1) {
    if constexpr (Expression::has_diagonal_operand) {
      // diag(d) alone: the dense matrix, as the product diag(d) diag(1) would write it.
      expand_diagonal(space, alpha, nodes[0], beta, out_view);
      space.fence();
      return;
    }
    bool copied = false;
    if constexpr (!Expression::has_transposed_operand) {
      if (alpha == compute_type(1) && !accumulate) {
        Kokkos::deep_copy(space, result.view(), nodes[0]);
        copied = true;
      }
    }
    if (!copied) scaled_copy(space, alpha, nodes[0], out_view, beta);
    space.fence();
  } else {
    run_products<Compute, Expression::has_diagonal_operand>(space, plan, nodes, out_view, alpha, beta, backend,
                                                            make_node);
  }
}

// evaluate_expression's products through the GEMM backends, the result's extents checked.
template <class Compute, class Expression, any_matrix R>
void evaluate_with_backends(const typename Expression::execution_space& space, const Expression& expression,
                            const R& result, gemm_backend backend, bool accumulate) {
  bool aliases = false;
  boost::hana::for_each(expression.operands(),
                        [&](const auto& operand) { aliases = aliases || shares_memory(storage_of(operand), result); });
  if (!aliases) {
    evaluate_unaliased<Compute>(space, expression, result, backend, accumulate);
    return;
  }
  const auto temporary = expression.make_result();
  evaluate_unaliased<Compute>(space, expression, temporary, backend);
  if (accumulate) {
    using compute_type = gemm_compute_t<Compute, typename R::view_type>;
    scaled_copy(space, compute_type(1), temporary.view(), result.view(), compute_type(1));
  } else {
    Kokkos::deep_copy(space, result.view(), temporary.view());
  }
  space.fence();
}

// Whether evaluate_expression's backend argument can be other than automatic: `m = a * b` and
// conversions pass automatic always, and then a small product instantiates no GEMM backend.
inline constexpr bool backend_chosen_at_run_time = true;
inline constexpr bool backend_fixed_automatic = false;

// Evaluates the expression into result with every product's multiply-adds in Compute (void:
// gemm_scalar_t of the scalar type), every product and copy on space (an instance of the operands'
// execution space). A result that shares memory with an operand (a = a * b) gets the product
// computed into a temporary first and copied. A small static product (detail/small_product.hpp)
// runs on the calling thread when the backend is automatic.
template <class Compute, bool BackendChoice = backend_chosen_at_run_time, class Expression, any_matrix R>
void evaluate_expression(const typename Expression::execution_space& space, const Expression& expression,
                         const R& result, gemm_backend backend, bool accumulate = false) {
  using value_type = typename Expression::value_type;
  using execution_space = typename Expression::execution_space;
  using expected_shape = typename Expression::shape_type;
  using given_shape = shape_of_t<R>;
  static_assert(std::is_same_v<typename R::value_type, value_type>,
                "ordo::evaluate(chain, result): the result's scalar type must be the operands'");
  static_assert(std::is_same_v<typename R::execution_space, execution_space>,
                "ordo::evaluate(chain, result): the result must live in the operands' execution space");
  constexpr bool static_shapes_conflict =
      (expected_shape::static_rows != dynamic && given_shape::static_rows != dynamic &&
       expected_shape::static_rows != given_shape::static_rows) ||
      (expected_shape::static_cols != dynamic && given_shape::static_cols != dynamic &&
       expected_shape::static_cols != given_shape::static_cols);
  if constexpr (static_shapes_conflict) {
    (void)diagnostic::result_shape_mismatch<expected_shape, given_shape>{};
  } else {
    if (result.rows() != expression.rows() || result.cols() != expression.cols()) {
      throw std::invalid_argument("ordo::evaluate: the chain's result is " +
                                  detail::shape_text(expression.rows(), expression.cols()) +
                                  " but the result matrix is " + detail::shape_text(result.rows(), result.cols()));
    }
    constexpr bool small = is_small_product<Expression>();
    if constexpr (small) {
      if (BackendChoice == backend_fixed_automatic || backend == gemm_backend::automatic) {
        evaluate_small_product<Compute>(space, expression, result.view(), accumulate);
        return;
      }
    }
    if constexpr (!small || BackendChoice == backend_chosen_at_run_time) {
      evaluate_with_backends<Compute>(space, expression, result, backend, accumulate);
    }
  }
}

}  // namespace detail

}  // namespace ordo

#endif
