#ifndef ORDO_KERNELS_DETAIL_SMALL_PRODUCT_HPP
#define ORDO_KERNELS_DETAIL_SMALL_PRODUCT_HPP

// Small static products on the calling thread: when every extent of a planned product is static
// and at most small_product_extent, and its operands live in host memory, the plan's products run
// as plain loops with the intermediates on the stack. A 3 x 3 a * b computes 27 multiply-adds;
// a BLAS call, a workspace and a kernel launch cost more than that at run time, and the GEMM
// backends' kernels cost a small program most of its compile time (docs/compile_time.md, "A
// consumer's smallest program"). Eigen treats its fixed-size matrices the same way.
//
// The arithmetic is the other backends': each element of a product is its inner terms added in
// order in the compute type (float for 16-bit storage), times alpha for the root, plus beta times
// the old element when accumulating, rounded once to the storage type; intermediates are stored
// in the storage type, as in the workspace of the other paths.

#include <ordo/core/planned_product.hpp>
#include <ordo/kernels/detail/gemm_regions.hpp>
#include <ordo/kernels/detail/portable_gemm.hpp>
#include <ordo/kernels/detail/portable_gemv.hpp>

#include <boost/hana/for_each.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace ordo::detail {

// The largest extent of a small product, and the most intermediate elements it keeps at once. At 8
// (512 multiply-adds per product at most) the loops beat a BLAS call in a baseline (SSE2) build;
// at 16 OpenBLAS's AVX-512 kernel is 2-4 times faster than them (bench/run ab, docs/performance.md).
inline constexpr std::size_t small_product_extent = 8;
inline constexpr std::size_t small_product_workspace = 4096;

// Whether Expression (a chain_expression) is evaluated as a small product.
template <class Expression>
consteval bool is_small_product() {
  if constexpr (!Expression::is_static || Expression::has_diagonal_operand ||
                !std::is_same_v<typename Expression::memory_space, Kokkos::HostSpace>) {
    return false;
  } else {
    const auto& plan = Expression::static_plan();
    for (const std::size_t d : plan.dims()) {
      if (d > small_product_extent) return false;
    }
    return plan.peak_temporary_elements() <= small_product_workspace;
  }
}

// A factor of a small product: a leaf's elements through its View's strides (a transpose is a
// strided View), or an intermediate, row-major on the stack.
template <class T>
struct small_factor {
  const T* data = nullptr;
  std::size_t row_stride = 0, col_stride = 0;
  T at(std::size_t i, std::size_t j) const { return data[i * row_stride + j * col_stride]; }
};

// out = a b (Rows x Inner times Inner x Cols) in Compute, row-major. Row i of out gathers
// a(i, l) * row l of b for l in order, so each element's terms are added in the order of l (the
// other paths' order); b is first copied into a local array in Compute, so that the loop over j
// reads contiguous memory that cannot alias out. The extents are constants: the loops unroll and
// vectorize.
template <std::size_t Rows, std::size_t Inner, std::size_t Cols, class Compute, class T>
void small_gemm(const small_factor<T>& a, const small_factor<T>& b, Compute* out) {
  std::array<Compute, Inner * Cols> right;
  for (std::size_t l = 0; l < Inner; ++l) {
    for (std::size_t j = 0; j < Cols; ++j) right[l * Cols + j] = gemv_load<Compute>(b.at(l, j));
  }
  for (std::size_t i = 0; i < Rows; ++i) {
    std::array<Compute, Cols> row;
    const Compute first = gemv_load<Compute>(a.at(i, 0));
    for (std::size_t j = 0; j < Cols; ++j) row[j] = first * right[j];
    for (std::size_t l = 1; l < Inner; ++l) {
      const Compute ail = gemv_load<Compute>(a.at(i, l));
      for (std::size_t j = 0; j < Cols; ++j) row[j] += ail * right[l * Cols + j];
    }
    for (std::size_t j = 0; j < Cols; ++j) out[i * Cols + j] = row[j];
  }
}

// result = alpha * product + beta * result, where beta is 0 (result not read) or 1 (accumulate).
// The caller has checked the result's extents; result may share memory with an operand, since
// the root is computed in full before it is written.
template <class Compute, class Expression, class ResultView>
void evaluate_small_product(const typename Expression::execution_space& space, const Expression& expression,
                            const ResultView& result, bool accumulate) {
  using value_type = typename Expression::value_type;
  using compute_type = gemm_compute_t<Compute, ResultView>;
  constexpr const auto& plan = Expression::static_plan();
  constexpr std::size_t n = plan.matrices();
  constexpr std::size_t rows = plan.dims()[0], cols = plan.dims()[n];

  // Nodes as the plan numbers them: the leaves, then the products.
  std::array<small_factor<value_type>, 2 * n - 1> nodes{};
  std::size_t leaf = 0;
  boost::hana::for_each(expression.operands(), [&](const auto& operand) {
    const auto& view = operand.view();
    nodes[leaf++] = {view.data(), static_cast<std::size_t>(view.stride_0()), static_cast<std::size_t>(view.stride_1())};
  });
  // Intermediates at the plan's workspace offsets; each product's value in the compute type first.
  std::array<value_type, plan.peak_temporary_elements() == 0 ? 1 : plan.peak_temporary_elements()> workspace{};
  std::array<compute_type, small_product_extent * small_product_extent> value{};
  // The operands may still be written by kernels launched on space.
  space.fence();

  if constexpr (n == 1) {
    for (std::size_t i = 0; i < rows; ++i) {
      for (std::size_t j = 0; j < cols; ++j) value[i * cols + j] = gemv_load<compute_type>(nodes[0].at(i, j));
    }
  } else {
    // Product P of the plan, its extents as constants; the root stays in the compute type.
    const auto run_product = [&]<std::size_t P>(std::integral_constant<std::size_t, P>) {
      constexpr planned_product step = plan.products()[P];
      const gemm_region region(step.rows, step.inner, step.cols, "inline");  // as the backends announce theirs
      small_gemm<step.rows, step.inner, step.cols>(nodes[step.left], nodes[step.right], value.data());
      if constexpr (P + 2 < n) {
        value_type* out = workspace.data() + step.workspace_offset;
        for (std::size_t e = 0; e < step.rows * step.cols; ++e) out[e] = gemv_store<value_type>(value[e]);
        nodes[n + P] = {out, step.cols, 1};
      }
    };
    [&]<std::size_t... P>(std::index_sequence<P...>) {
      (run_product(std::integral_constant<std::size_t, P>{}), ...);
    }(std::make_index_sequence<n - 1>{});
  }
  const auto alpha = static_cast<compute_type>(expression.scale());
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) {
      const compute_type scaled = alpha * value[i * cols + j];
      result(i, j) = gemv_store<value_type>(accumulate ? scaled + gemv_load<compute_type>(result(i, j)) : scaled);
    }
  }
}

}  // namespace ordo::detail

#endif
