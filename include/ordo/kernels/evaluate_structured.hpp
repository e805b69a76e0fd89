#ifndef ORDO_KERNELS_EVALUATE_STRUCTURED_HPP
#define ORDO_KERNELS_EVALUATE_STRUCTURED_HPP

// Evaluates a structured chain plan (core/structured_chain.hpp) on host matrices with BLAS and
// LAPACK, one kernel per product as the plan says, intermediates in one workspace of the plan's
// peak:
//
//   using namespace ordo::operands;
//   const auto plan = ordo::plan_structured_chain(dims, ops);  // ops: {spd.inverse(), general.transpose(), general}
//   ordo::evaluate(plan, x, s, X, y);                          // x = S^-1 X^T y: a GEMV, then POSV
//
// Operand i is passed as stored: the matrix itself, not its transpose or inverse (the plan says
// which), a diagonal one as its n x 1 diagonal. A symmetric or SPD operand is read in full, a
// triangular one only in its triangle (and not on a unit diagonal). float and double, host memory.
// Errors: std::invalid_argument for operands or a result whose shapes differ from the plan's,
// naming them; std::runtime_error naming the operand for a matrix that a solve finds singular or,
// declared SPD, not positive definite (LAPACK's info): no NaN is returned silently for those.

#include <ordo/core/structured_chain.hpp>
#include <ordo/kernels/detail/chain_evaluator.hpp>
#include <ordo/kernels/detail/huge_pages.hpp>
#include <ordo/kernels/detail/structured_host_kernels.hpp>
#include <ordo/kernels/matrix.hpp>
#include <ordo/platform/shape_text.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace ordo {

namespace detail {

// The stored shape the plan expects for operand i: its own extents, swapped when transposed; a
// diagonal as n x 1.
inline std::array<std::size_t, 2> stored_shape(std::span<const std::size_t> dims, const chain_operand& operand,
                                               std::size_t i) {
  if (operand.kind == matrix_kind::diagonal) return {dims[i], 1};
  return operand.transposed ? std::array<std::size_t, 2>{dims[i + 1], dims[i]}
                            : std::array<std::size_t, 2>{dims[i], dims[i + 1]};
}

#if defined(ORDO_HAS_LAPACK)
template <class Space, class T, class Plan>
void evaluate_structured_host(const Plan& plan, std::vector<host_node<T>>& nodes, const host_node<T>& out) {
  const std::size_t n = plan.matrices();
  if (n == 1) {
    std::vector<T> storage;
    const host_node<T> value = plan.operands()[0].inverted ? explicit_inverse(nodes[0], storage) : nodes[0];
    for (std::size_t j = 0; j < out.cols; ++j)
      for (std::size_t i = 0; i < out.rows; ++i) out.data[out.transposed ? j + i * out.ld : i + j * out.ld] = value.masked_at(i, j);
    return;
  }
  // The intermediates' workspace, uninitialized (every intermediate is written before it is
  // read) and asked for huge pages; allocated at the first intermediate, so that a plan whose
  // intermediates are all fused away (D W D) allocates none.
  std::unique_ptr<T[]> workspace_storage;
  const auto workspace_at = [&](std::uint64_t offset) {
    if (!workspace_storage) {
      const auto elements = static_cast<std::size_t>(plan.peak_temporary_elements());
      workspace_storage.reset(new T[elements > 0 ? elements : 1]);
      advise_huge_pages(workspace_storage.get(), elements * sizeof(T));
    }
    return workspace_storage.get() + offset;
  };
  std::vector<T> root_diagonal;
  const auto products = plan.products();
  for (std::size_t p = 0; p < products.size(); ++p) {
    structured_product step = products[p];
    const bool is_root = p + 1 == products.size();
    host_node<T> c;
    if (step.kind == matrix_kind::diagonal) {
      if (is_root) root_diagonal.resize(step.rows);
      c = column_major_node(is_root ? root_diagonal.data() : workspace_at(step.workspace_offset), step.rows,
                            step.rows, matrix_kind::diagonal);
      c.diagonal_vector = true;
    } else {
      // Intermediates row-major like ordo::matrix operands: every product then runs mirrored
      // (run_structured_product) on column-major data that BLAS reads without a transpose, and
      // the scalings stream through memory in order.
      c = is_root ? out
                  : column_major_node(workspace_at(step.workspace_offset), step.cols, step.rows,
                                      transposed_kind(step.kind)).flipped();
    }
    // Two scalings in a row, (D M) D or D (M D), with the first's result used only by the second:
    // one pass over the matrix instead of two (no explicit inverse is involved: a diagonal's is
    // always a division).
    const auto is_scaling = [](const structured_product& s) {
      return s.kernel == chain_kernel::scale_rows || s.kernel == chain_kernel::scale_cols;
    };
    if (!is_root && is_scaling(step) && is_scaling(products[p + 1]) && products[p + 1].kernel != step.kernel &&
        (products[p + 1].left == n + p || products[p + 1].right == n + p) &&
        step.left_inverse != inverse_use::explicit_inverse && step.right_inverse != inverse_use::explicit_inverse &&
        products[p + 1].left_inverse != inverse_use::explicit_inverse &&
        products[p + 1].right_inverse != inverse_use::explicit_inverse) {
      const structured_product& next = products[p + 1];
      const bool rows_first = step.kernel == chain_kernel::scale_rows;  // (D M) D: step scales rows
      const host_node<T>& m = rows_first ? nodes[step.right] : nodes[step.left];
      const host_node<T>& left_d = rows_first ? nodes[step.left] : nodes[next.left];
      const host_node<T>& right_d = rows_first ? nodes[next.right] : nodes[step.right];
      const bool left_inverted = (rows_first ? step.left_inverse : next.left_inverse) == inverse_use::solve;
      const bool right_inverted = (rows_first ? next.right_inverse : step.right_inverse) == inverse_use::solve;
      const bool next_is_root = p + 2 == products.size();
      const host_node<T> fused = next_is_root ? out
                                              : column_major_node(workspace_at(next.workspace_offset), next.cols,
                                                                  next.rows, transposed_kind(next.kind)).flipped();
      scale_both<Space>(left_d, left_inverted, m, right_d, right_inverted, fused);
      nodes[n + p] = fused;  // not read again: next reads it only as this product
      nodes[n + p + 1] = fused;
      ++p;
      continue;
    }
    std::vector<T> left_inverse, right_inverse;
    host_node<T> l = nodes[step.left], r = nodes[step.right];
    if (step.left_inverse == inverse_use::explicit_inverse) l = explicit_inverse(l, left_inverse), step.left_inverse = inverse_use::none;
    if (step.right_inverse == inverse_use::explicit_inverse) r = explicit_inverse(r, right_inverse), step.right_inverse = inverse_use::none;
    run_structured_product<Space>(step, l, r, c);
    if (is_root && step.kind == matrix_kind::diagonal) {
      for (std::size_t j = 0; j < out.cols; ++j)
        for (std::size_t i = 0; i < out.rows; ++i) out.data[out.transposed ? j + i * out.ld : i + j * out.ld] = c.at(i, j);
    }
    nodes[n + p] = c;
  }
}
#endif

}  // namespace detail

// result = the chain the plan describes, of operands given as stored (see above).
template <std::size_t Matrices, any_matrix R, any_matrix... Operands>
void evaluate(const structured_chain_plan<Matrices>& plan, const R& result, const Operands&... operands) {
  using value_type = typename R::value_type;
  static_assert(std::is_same_v<value_type, float> || std::is_same_v<value_type, double>,
                "ordo::evaluate(structured plan, result, operands...): the host BLAS/LAPACK path takes float or double");
  static_assert((std::is_same_v<typename Operands::value_type, value_type> && ...),
                "ordo::evaluate(structured plan, result, operands...): every operand must have the result's scalar type");
  static_assert(Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename R::memory_space>::accessible &&
                    (Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Operands::memory_space>::accessible && ...),
                "ordo::evaluate(structured plan, result, operands...): the matrices must be in host-accessible memory");
  static_assert(Matrices == dynamic || Matrices == sizeof...(Operands),
                "ordo::evaluate(structured plan, result, operands...): one operand per matrix of the plan");
  const std::size_t n = plan.matrices();
  if (sizeof...(Operands) != n) {
    throw std::invalid_argument("ordo::evaluate(structured plan, result, operands...): the plan has " + std::to_string(n) +
                                " operands but " + std::to_string(sizeof...(Operands)) + " were given");
  }
  if (result.rows() != plan.rows() || result.cols() != plan.cols()) {
    throw std::invalid_argument("ordo::evaluate(structured plan, result, operands...): the chain's result is " +
                                detail::shape_text(plan.rows(), plan.cols()) + " but the result matrix is " +
                                detail::shape_text(result.rows(), result.cols()));
  }
#if defined(ORDO_HAS_LAPACK)
  using node = detail::host_node<value_type>;
  std::vector<node> nodes(2 * n - 1);
  std::size_t i = 0;
  bool aliases = false;
  const auto add = [&](const auto& m) {
    const chain_operand& operand = plan.operands()[i];
    const auto expected = detail::stored_shape(plan.dims(), operand, i);
    if (m.rows() != expected[0] || m.cols() != expected[1]) {
      throw std::invalid_argument("ordo::evaluate(structured plan, result, operands...): A" + std::to_string(i + 1) +
                                  " is " + detail::shape_text(m.rows(), m.cols()) + " but the plan reads a stored " +
                                  detail::shape_text(expected[0], expected[1]) + " (" +
                                  std::string(kind_name(operand.kind)) + (operand.transposed ? ", transposed" : "") +
                                  (operand.inverted ? ", inverted" : "") + ")");
    }
    aliases = aliases || detail::shares_memory(m, result);
    // A row-major stored M is S^T for the column-major S that BLAS sees; the operand is M or M^T.
    node x{const_cast<value_type*>(m.view().data()), plan.dims()[i], plan.dims()[i + 1], m.cols() > 0 ? m.cols() : 1,
           !operand.transposed, effective_kind(operand), operand.kind == matrix_kind::diagonal, false, i, operand.kind};
    nodes[i++] = x;
  };
  (add(operands), ...);
  const auto run = [&](const R& into) {
    const node out{into.view().data(), into.rows(), into.cols(), into.cols() > 0 ? into.cols() : 1, true,
                   plan.result_kind(), false, true, detail::not_an_operand, plan.result_kind()};
    detail::evaluate_structured_host<typename R::execution_space, value_type>(plan, nodes, out);
  };
  if (aliases) {
    R temporary = detail::uninitialized_matrix<R>(result.rows(), result.cols());
    run(temporary);
    Kokkos::deep_copy(result.view(), temporary.view());
  } else {
    run(result);
  }
#else
  throw std::runtime_error("ordo::evaluate(structured plan, result, operands...): ordo was built without LAPACK, "
                           "which the structured kernels (" + std::string(plan.kernels()) + ") need on the host");
#endif
}

}  // namespace ordo

#endif
