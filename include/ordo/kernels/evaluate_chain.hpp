#ifndef ORDO_KERNELS_EVALUATE_CHAIN_HPP
#define ORDO_KERNELS_EVALUATE_CHAIN_HPP

// A chain whose operand count is known only at run time (backpropagation through time, a
// network's layers in a std::vector): planned from the run-time extents and evaluated with one
// workspace, as a planned expression is.
//
//   std::vector<ordo::matrix<double, ordo::dynamic, ordo::dynamic>> jacobians = ...;
//   auto product = ordo::evaluate_chain(jacobians);   // J1 J2 ... Jn in the optimal order

#include <ordo/core/chain.hpp>
#include <ordo/platform/shape_text.hpp>
#include <ordo/kernels/detail/chain_evaluator.hpp>
#include <ordo/kernels/gemm.hpp>
#include <ordo/kernels/matrix.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <iterator>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace ordo {

// The product A1 A2 ... An of the matrices of a range (a std::vector, a std::span, any range
// whose elements are one ordo::matrix type), in a new dynamic matrix. Throws std::invalid_argument
// for an empty range or neighbours that do not conform, naming their positions and shapes.
template <class Range, class M = std::remove_cvref_t<decltype(*std::begin(std::declval<const Range&>()))>>
  requires any_matrix<M>
auto evaluate_chain(const Range& matrices, gemm_backend backend = gemm_backend::automatic) {
  using value_type = typename M::value_type;
  using execution_space = typename M::execution_space;
  using memory_space = typename M::memory_space;
  using node_view = Kokkos::View<value_type**, Kokkos::LayoutRight, memory_space, Kokkos::MemoryUnmanaged>;
  using result_type = matrix<value_type, dynamic, dynamic, execution_space>;

  std::vector<node_view> nodes;
  std::vector<std::size_t> dims;
  for (const M& m : matrices) {
    if (!nodes.empty() && m.rows() != dims.back()) {
      const std::size_t i = nodes.size();
      throw std::invalid_argument("ordo::evaluate_chain: A" + std::to_string(i) + " is " +
                                  detail::shape_text(nodes.back().extent(0), nodes.back().extent(1)) + " but A" +
                                  std::to_string(i + 1) + " is " + detail::shape_text(m.rows(), m.cols()) +
                                  " (inner extents " + std::to_string(dims.back()) +
                                  " != " + std::to_string(m.rows()) + ")");
    }
    if (nodes.empty()) dims.push_back(m.rows());
    dims.push_back(m.cols());
    nodes.emplace_back(m.view());
  }
  if (nodes.empty()) throw std::invalid_argument("ordo::evaluate_chain: the range holds no matrix");

  const execution_space space{};
  result_type result(uninitialized, dims.front(), dims.back());
  const std::size_t n = nodes.size();
  if (n == 1) {
    Kokkos::deep_copy(space, result.view(), nodes[0]);
    space.fence();
    return result;
  }
  const auto plan = plan_chain(std::span<const std::size_t>(dims));
  nodes.resize(2 * n - 1);
  using compute_type = detail::gemm_compute_t<void, node_view>;
  detail::run_products<void>(space, plan, nodes, node_view(result.view()), compute_type(1), compute_type(0), backend,
                             [](value_type* data, std::size_t rows, std::size_t cols) {
                               return node_view(data, rows, cols);
                             });
  return result;
}

}  // namespace ordo

#endif
