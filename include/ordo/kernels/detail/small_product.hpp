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

#include <ordo/kernels/detail/gemm_regions.hpp>
#include <ordo/kernels/detail/portable_gemm.hpp>
#include <ordo/kernels/detail/portable_gemv.hpp>

#include <boost/hana/for_each.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <type_traits>

namespace ordo::detail {

// The largest extent of a small product, and the most intermediate elements it keeps at once.
inline constexpr std::size_t small_product_extent = 16;
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

// Announces a small product to Kokkos Tools as the GEMM backends announce theirs, with the backend
// named "inline".
struct small_product_region : profiling_region {
  small_product_region(std::size_t m, std::size_t k, std::size_t n)
      : profiling_region(Kokkos::Profiling::profileLibraryLoaded() ? small_product_region_name(m, k, n) : std::string()) {}
  static std::string small_product_region_name(std::size_t m, std::size_t k, std::size_t n) {
    std::string name = gemm_region_name(m, k, n, gemm_backend::automatic);
    return name.substr(0, name.rfind(' ') + 1) + "inline";
  }
};

// result = alpha * product + beta * result, where beta is 0 (result not read) or 1 (accumulate).
// The caller has checked the result's extents; result may share memory with an operand, since
// the root is computed in full before it is written.
template <class Compute, class Expression, class ResultView>
void evaluate_small_product(const typename Expression::execution_space& space, const Expression& expression,
                            const ResultView& result, bool accumulate) {
  using value_type = typename Expression::value_type;
  using node_layout = std::conditional_t<Expression::has_transposed_operand, Kokkos::LayoutStride, Kokkos::LayoutRight>;
  using node_view = Kokkos::View<const value_type**, node_layout, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
  using compute_type = gemm_compute_t<Compute, ResultView>;
  constexpr const auto& plan = Expression::static_plan();
  constexpr std::size_t n = plan.matrices();
  constexpr std::size_t rows = plan.dims()[0], cols = plan.dims()[n];

  std::array<node_view, n> leaves;
  std::size_t leaf = 0;
  boost::hana::for_each(expression.operands(), [&](const auto& operand) { leaves[leaf++] = node_view(operand.view()); });
  // Intermediates at the plan's workspace offsets, the root apart (it may alias an operand).
  std::array<value_type, plan.peak_temporary_elements() == 0 ? 1 : plan.peak_temporary_elements()> workspace{};
  std::array<compute_type, rows * cols> root{};
  // The operands may still be written by kernels launched on space.
  space.fence();

  const auto element = [&](std::size_t node, std::size_t i, std::size_t j) -> compute_type {
    if (node < n) return gemv_load<compute_type>(leaves[node](i, j));
    const planned_product& p = plan.products()[node - n];
    return gemv_load<compute_type>(workspace[p.workspace_offset + i * p.cols + j]);
  };
  const auto product_element = [&](const planned_product& p, std::size_t i, std::size_t j) {
    compute_type sum = element(p.left, i, 0) * element(p.right, 0, j);
    for (std::size_t l = 1; l < p.inner; ++l) sum += element(p.left, i, l) * element(p.right, l, j);
    return sum;
  };

  const auto alpha = static_cast<compute_type>(expression.scale());
  if constexpr (n == 1) {
    for (std::size_t i = 0; i < rows; ++i) {
      for (std::size_t j = 0; j < cols; ++j) root[i * cols + j] = element(0, i, j);
    }
  } else {
    for (std::size_t p = 0; p + 2 < n; ++p) {  // every product but the root, which is last
      const planned_product& step = plan.products()[p];
      const small_product_region region(step.rows, step.inner, step.cols);
      value_type* out = workspace.data() + step.workspace_offset;
      for (std::size_t i = 0; i < step.rows; ++i) {
        for (std::size_t j = 0; j < step.cols; ++j) {
          out[i * step.cols + j] = gemv_store<value_type>(product_element(step, i, j));
        }
      }
    }
    const planned_product& last = plan.products()[n - 2];
    const small_product_region region(last.rows, last.inner, last.cols);
    for (std::size_t i = 0; i < rows; ++i) {
      for (std::size_t j = 0; j < cols; ++j) root[i * cols + j] = product_element(last, i, j);
    }
  }
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) {
      const compute_type scaled = alpha * root[i * cols + j];
      result(i, j) = gemv_store<value_type>(accumulate ? scaled + gemv_load<compute_type>(result(i, j)) : scaled);
    }
  }
}

}  // namespace ordo::detail

#endif
