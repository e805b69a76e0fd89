#ifndef ORDO_KERNELS_EVALUATE_STRUCTURED_HPP
#define ORDO_KERNELS_EVALUATE_STRUCTURED_HPP

// Evaluates a structured chain plan (core/structured_chain.hpp), one kernel per product as the
// plan says, intermediates in one workspace of the plan's peak:
//
//   using namespace ordo::operands;
//   const auto plan = ordo::plan_structured_chain(dims, ops);  // ops: {spd.inverse(), general.transpose(), general}
//   ordo::evaluate(plan, x, s, X, y);                          // x = S^-1 X^T y: a GEMV, then POSV
//
// Operand i is passed as stored: the matrix itself, not its transpose or inverse (the plan says
// which), a diagonal one as its n x 1 diagonal. A symmetric or SPD operand is read in full, a
// triangular one only in its triangle (and not on a unit diagonal).
// Backends: the host's BLAS and LAPACK (float and double in host memory, a build with LAPACK), or
// ordo's portable Kokkos kernels on the matrices' execution space for everything else: device
// memory, half and bfloat16 storage (arithmetic in float), a build without LAPACK. automatic picks
// the first that serves; ordo::gemm_backend::portable or ::blas forces one.
// Errors: std::invalid_argument for operands or a result whose shapes differ from the plan's,
// naming them, and for a forced backend that cannot serve the call; std::runtime_error naming the
// operand for a matrix that a solve finds singular or, declared SPD, not positive definite: no
// NaN is returned silently for those.

#include <ordo/core/structured_chain.hpp>
#include <ordo/core/float16.hpp>
#include <ordo/core/scalar_traits.hpp>
#include <ordo/kernels/detail/chain_evaluator.hpp>
#include <ordo/kernels/detail/structured_evaluator.hpp>
#include <ordo/kernels/detail/structured_host_kernels.hpp>
#include <ordo/kernels/detail/structured_portable_kernels.hpp>
#include <ordo/kernels/gemm_backend.hpp>
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

}  // namespace detail

namespace detail {

inline constexpr const char* structured_evaluate_name = "ordo::evaluate(structured plan, result, operands...)";

template <class T>
std::string structured_scalar_name() {
  if constexpr (std::is_same_v<T, float>) return "float";
  if constexpr (std::is_same_v<T, double>) return "double";
  if constexpr (std::is_same_v<T, half>) return "ordo::half";
  if constexpr (std::is_same_v<T, bfloat16>) return "ordo::bfloat16";
  return "another scalar type";
}

template <class ExecutionSpace, std::size_t Matrices, any_matrix R, any_matrix... Operands>
void evaluate_structured(const ExecutionSpace& space, gemm_backend backend, const structured_chain_plan<Matrices>& plan,
                         const R& result, const Operands&... operands) {
  using value_type = typename R::value_type;
  static_assert((std::is_same_v<typename Operands::value_type, value_type> && ...),
                "ordo::evaluate(structured plan, result, operands...): every operand must have the result's scalar type");
  static_assert((std::is_same_v<typename Operands::execution_space, typename R::execution_space> && ...),
                "ordo::evaluate(structured plan, result, operands...): every operand must live in the result's "
                "execution space");
  static_assert(std::is_same_v<ExecutionSpace, typename R::execution_space>,
                "ordo::evaluate(space, structured plan, result, operands...): space must be an instance of the "
                "matrices' execution space");
  static_assert(Matrices == dynamic || Matrices == sizeof...(Operands),
                "ordo::evaluate(structured plan, result, operands...): one operand per matrix of the plan");
  constexpr bool host_lapack_serves =
      lapack_serves<value_type, typename R::memory_space, typename Operands::memory_space...>;
  const std::size_t n = plan.matrices();
  if (sizeof...(Operands) != n) {
    throw std::invalid_argument(std::string(structured_evaluate_name) + ": the plan has " + std::to_string(n) +
                                " operands but " + std::to_string(sizeof...(Operands)) + " were given");
  }
  if (result.rows() != plan.rows() || result.cols() != plan.cols()) {
    throw std::invalid_argument(std::string(structured_evaluate_name) + ": the chain's result is " +
                                shape_text(plan.rows(), plan.cols()) + " but the result matrix is " +
                                shape_text(result.rows(), result.cols()));
  }
  if (backend == gemm_backend::cublas) {
    throw std::invalid_argument(std::string(structured_evaluate_name) +
                                ": the cublas backend does not serve structured chains (ordo does not call cuBLAS or "
                                "cuSOLVER for them yet); use automatic or portable");
  }
  if (backend == gemm_backend::blas && !host_lapack_serves) {
    throw std::invalid_argument(std::string(structured_evaluate_name) +
                                ": the blas backend needs a build with LAPACK, float or double matrices, and "
                                "host-accessible memory (this call has " + structured_scalar_name<value_type>() +
                                " in " + R::memory_space::name() + " memory); use automatic or portable");
  }
  using node = structured_node<value_type>;
  std::vector<node> nodes(2 * n - 1);
  std::size_t i = 0;
  bool aliases = false;
  const auto add = [&](const auto& m) {
    const chain_operand& operand = plan.operands()[i];
    const auto expected = stored_shape(plan.dims(), operand, i);
    if (m.rows() != expected[0] || m.cols() != expected[1]) {
      throw std::invalid_argument(std::string(structured_evaluate_name) + ": A" + std::to_string(i + 1) + " is " +
                                  shape_text(m.rows(), m.cols()) + " but the plan reads a stored " +
                                  shape_text(expected[0], expected[1]) + " (" + std::string(kind_name(operand.kind)) +
                                  (operand.transposed ? ", transposed" : "") + (operand.inverted ? ", inverted" : "") +
                                  ")");
    }
    aliases = aliases || shares_memory(m, result);
    // A row-major stored M is S^T for the column-major S that BLAS sees; the operand is M or M^T.
    node x{const_cast<value_type*>(m.view().data()), plan.dims()[i], plan.dims()[i + 1], m.cols() > 0 ? m.cols() : 1,
           !operand.transposed, effective_kind(operand), operand.kind == matrix_kind::diagonal, false, i, operand.kind};
    nodes[i++] = x;
  };
  (add(operands), ...);
  const auto run = [&](const R& into) {
    const node out{into.view().data(), into.rows(), into.cols(), into.cols() > 0 ? into.cols() : 1, true,
                   plan.result_kind(), false, true, not_an_operand, plan.result_kind()};
    if constexpr (host_lapack_serves) {
      if (backend != gemm_backend::portable) {
        host_lapack_kernels<ExecutionSpace> kernels;
        return evaluate_structured_plan(kernels, plan, nodes, out);
      }
    }
    portable_structured_kernels<ExecutionSpace> kernels{space};
    evaluate_structured_plan(kernels, plan, nodes, out);
  };
  if (aliases) {
    R temporary = uninitialized_matrix<R>(result.rows(), result.cols());
    run(temporary);
    Kokkos::deep_copy(space, result.view(), temporary.view());
    space.fence();
  } else {
    run(result);
  }
}

}  // namespace detail

// result = the chain the plan describes, of operands given as stored (see above), on the host's
// BLAS and LAPACK where they serve the call, else on ordo's portable kernels.
template <std::size_t Matrices, any_matrix R, any_matrix... Operands>
void evaluate(const structured_chain_plan<Matrices>& plan, const R& result, const Operands&... operands) {
  detail::evaluate_structured(typename R::execution_space{}, gemm_backend::automatic, plan, result, operands...);
}

// The same with the backend named: blas (the host's BLAS and LAPACK), portable (Kokkos kernels
// on the matrices' space), automatic; a backend that cannot serve the call throws
// std::invalid_argument saying why.
template <std::size_t Matrices, any_matrix R, any_matrix... Operands>
void evaluate(gemm_backend backend, const structured_chain_plan<Matrices>& plan, const R& result,
              const Operands&... operands) {
  detail::evaluate_structured(typename R::execution_space{}, backend, plan, result, operands...);
}

// The same on an instance of the matrices' execution space (a CUDA stream, an OpenMP partition).
template <class ExecutionSpace, std::size_t Matrices, any_matrix R, any_matrix... Operands>
  requires Kokkos::is_execution_space<ExecutionSpace>::value
void evaluate(const ExecutionSpace& space, const structured_chain_plan<Matrices>& plan, const R& result,
              const Operands&... operands) {
  detail::evaluate_structured(space, gemm_backend::automatic, plan, result, operands...);
}

template <class ExecutionSpace, std::size_t Matrices, any_matrix R, any_matrix... Operands>
  requires Kokkos::is_execution_space<ExecutionSpace>::value
void evaluate(const ExecutionSpace& space, gemm_backend backend, const structured_chain_plan<Matrices>& plan,
              const R& result, const Operands&... operands) {
  detail::evaluate_structured(space, backend, plan, result, operands...);
}

}  // namespace ordo

#endif
