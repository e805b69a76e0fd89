#ifndef ORDO_KERNELS_DETAIL_STRUCTURED_EVALUATOR_HPP
#define ORDO_KERNELS_DETAIL_STRUCTURED_EVALUATOR_HPP

// Runs a structured chain plan (core/structured_chain.hpp) product by product with one backend's
// kernels: the host's BLAS and LAPACK (structured_host_kernels.hpp) or ordo's portable Kokkos
// kernels (structured_portable_kernels.hpp). What does not depend on the backend lives here once:
// where each intermediate goes in the workspace, the mirroring of a product into a row-major
// result, explicit inverses, and the fusion of two scalings in a row.
//
// A backend Kernels provides
//   template <class T> using buffer = ...;                   // owning memory the kernels can read
//   template <class T> T* allocate(buffer<T>&, std::size_t elements);   // uninitialized
//   void copy_masked(const structured_node<T>& from, const structured_node<T>& to);
//   structured_node<T> explicit_inverse(const structured_node<T>& a, buffer<T>& storage);
//   void column_major_product(const structured_product&, l, r, c);    // c column-major
//   void scale_both(left, bool left_inverted, m, right, bool right_inverted, c);
//   void finish();                                           // before the buffers are released

#include <ordo/core/structured_product.hpp>
#include <ordo/kernels/detail/structured_node.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ordo::detail {

// One product into c, column-major or row-major: a row-major c = L R is computed as the
// column-major c^T = R^T L^T, sides and inverse uses swapped.
template <class Kernels, class T>
void run_structured_product(Kernels& kernels, structured_product step, const structured_node<T>& l,
                            const structured_node<T>& r, const structured_node<T>& c) {
  if (!c.transposed || c.diagonal_vector) return kernels.column_major_product(step, l, r, c);
  structured_product mirrored = step;
  mirrored.side = step.side == factor_side::left ? factor_side::right : factor_side::left;
  mirrored.left_inverse = step.right_inverse, mirrored.right_inverse = step.left_inverse;
  mirrored.rows = step.cols, mirrored.cols = step.rows;
  if (step.kernel == chain_kernel::scale_rows) mirrored.kernel = chain_kernel::scale_cols;
  if (step.kernel == chain_kernel::scale_cols) mirrored.kernel = chain_kernel::scale_rows;
  kernels.column_major_product(mirrored, r.flipped(), l.flipped(), c.flipped());
}

// nodes: the plan's operands (2n - 1 slots, the first n filled); out: the result, row-major.
template <class Kernels, class T, class Plan>
void evaluate_structured_plan(Kernels& kernels, const Plan& plan, std::vector<structured_node<T>>& nodes,
                              const structured_node<T>& out) {
  using buffer = typename Kernels::template buffer<T>;
  const std::size_t n = plan.matrices();
  if (n == 1) {
    buffer storage;
    const structured_node<T> value =
        plan.operands()[0].inverted ? kernels.explicit_inverse(nodes[0], storage) : nodes[0];
    kernels.copy_masked(value, out);
    kernels.finish();
    return;
  }
  // The intermediates' workspace, uninitialized (every intermediate is written before it is
  // read); allocated at the first intermediate, so that a plan whose intermediates are all fused
  // away (D W D) allocates none.
  buffer workspace, root_diagonal;
  T* workspace_data = nullptr;
  const auto workspace_at = [&](std::uint64_t offset) {
    if (!workspace_data) {
      const auto elements = static_cast<std::size_t>(plan.peak_temporary_elements());
      workspace_data = kernels.allocate(workspace, elements > 0 ? elements : 1);
    }
    return workspace_data + offset;
  };
  const auto products = plan.products();
  for (std::size_t p = 0; p < products.size(); ++p) {
    structured_product step = products[p];
    const bool is_root = p + 1 == products.size();
    structured_node<T> c;
    if (step.kind == matrix_kind::diagonal) {
      T* data = is_root ? kernels.allocate(root_diagonal, step.rows > 0 ? step.rows : 1)
                        : workspace_at(step.workspace_offset);
      c = column_major_node(data, step.rows, step.rows, matrix_kind::diagonal);
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
    const auto no_explicit = [](const structured_product& s) {
      return s.left_inverse != inverse_use::explicit_inverse && s.right_inverse != inverse_use::explicit_inverse;
    };
    if (!is_root && is_scaling(step) && is_scaling(products[p + 1]) && products[p + 1].kernel != step.kernel &&
        (products[p + 1].left == n + p || products[p + 1].right == n + p) && no_explicit(step) &&
        no_explicit(products[p + 1])) {
      const structured_product& next = products[p + 1];
      const bool rows_first = step.kernel == chain_kernel::scale_rows;  // (D M) D: step scales rows
      const structured_node<T>& m = rows_first ? nodes[step.right] : nodes[step.left];
      const structured_node<T>& left_d = rows_first ? nodes[step.left] : nodes[next.left];
      const structured_node<T>& right_d = rows_first ? nodes[next.right] : nodes[step.right];
      const bool left_inverted = (rows_first ? step.left_inverse : next.left_inverse) == inverse_use::solve;
      const bool right_inverted = (rows_first ? next.right_inverse : step.right_inverse) == inverse_use::solve;
      const bool next_is_root = p + 2 == products.size();
      const structured_node<T> fused =
          next_is_root ? out
                       : column_major_node(workspace_at(next.workspace_offset), next.cols, next.rows,
                                           transposed_kind(next.kind)).flipped();
      kernels.scale_both(left_d, left_inverted, m, right_d, right_inverted, fused);
      nodes[n + p] = fused;  // not read again: next reads it only as this product
      nodes[n + p + 1] = fused;
      ++p;
      continue;
    }
    buffer left_inverse, right_inverse;
    structured_node<T> l = nodes[step.left], r = nodes[step.right];
    const bool explicit_inverses = !no_explicit(step);
    if (step.left_inverse == inverse_use::explicit_inverse) {
      l = kernels.explicit_inverse(l, left_inverse), step.left_inverse = inverse_use::none;
    }
    if (step.right_inverse == inverse_use::explicit_inverse) {
      r = kernels.explicit_inverse(r, right_inverse), step.right_inverse = inverse_use::none;
    }
    run_structured_product(kernels, step, l, r, c);
    if (explicit_inverses) kernels.finish();  // the inverses' storage is released at the end of this step
    if (is_root && step.kind == matrix_kind::diagonal) kernels.copy_masked(c, out);
    nodes[n + p] = c;
  }
  kernels.finish();
}

}  // namespace ordo::detail

#endif
