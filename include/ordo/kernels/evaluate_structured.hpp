#ifndef ORDO_KERNELS_EVALUATE_STRUCTURED_HPP
#define ORDO_KERNELS_EVALUATE_STRUCTURED_HPP

// Evaluates a structured chain plan (core/structured_chain.hpp), one kernel per product as the
// plan says, intermediates in one workspace of the plan's peak:
//
//   using namespace ordo::operands;
//   const auto plan = ordo::plan_structured_chain(dims, ops);  // ops: {spd.inverse(), general.transpose(), general}
//   ordo::evaluate(plan, x, s, X, y);                          // x = S^-1 X^T y: a GEMV, then POSV
//
// or with the operands in a range of one matrix type, for a chain whose length is known only at
// run time: ordo::evaluate(plan, x, std::vector<M>{...}).
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
#include <ordo/kernels/factorization_cache.hpp>
#include <ordo/kernels/gemm_backend.hpp>
#include <ordo/kernels/matrix.hpp>
#include <ordo/platform/shape_text.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <ranges>
#include <span>
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

// One stored operand as the evaluator reads it: where it is, its stored shape, whether it shares
// memory with the result.
template <class T>
struct structured_operand_ref {
  const T* data = nullptr;
  std::size_t rows = 0, cols = 0;
  bool aliases_result = false;
};

// The evaluation itself, instantiated once per space, scalar type and plan type (not per list of
// operand types): the checks that need no types, the backend, the nodes, the aliasing temporary.
// out: the result's row-major rows x cols memory.
template <class ExecutionSpace, class T, std::size_t Matrices>
void evaluate_structured_refs(const ExecutionSpace& space, gemm_backend backend, [[maybe_unused]] factorization_cache* cache,
                              const structured_chain_plan<Matrices>& plan,
                              std::span<const structured_operand_ref<T>> operands, T* out_data, std::size_t out_rows,
                              std::size_t out_cols) {
  using memory_space = typename ExecutionSpace::memory_space;
  constexpr bool host_lapack_serves = lapack_serves<T, memory_space>;
  const std::size_t n = plan.matrices();
  if (operands.size() != n) {
    throw std::invalid_argument(std::string(structured_evaluate_name) + ": the plan has " + std::to_string(n) +
                                " operands but " + std::to_string(operands.size()) + " were given");
  }
  if (out_rows != plan.rows() || out_cols != plan.cols()) {
    throw std::invalid_argument(std::string(structured_evaluate_name) + ": the chain's result is " +
                                shape_text(plan.rows(), plan.cols()) + " but the result matrix is " +
                                shape_text(out_rows, out_cols));
  }
  if (backend == gemm_backend::cublas) {
    throw std::invalid_argument(std::string(structured_evaluate_name) +
                                ": the cublas backend does not serve structured chains (ordo does not call cuBLAS or "
                                "cuSOLVER for them yet); use automatic or portable");
  }
  if (backend == gemm_backend::blas && !host_lapack_serves) {
    throw std::invalid_argument(std::string(structured_evaluate_name) +
                                ": the blas backend needs a build with LAPACK, float or double matrices, and "
                                "host-accessible memory (this call has " + std::string(scalar_name<T>()) +
                                " in " + memory_space::name() + " memory); use automatic or portable");
  }
  using node = structured_node<T>;
  std::vector<node> nodes(2 * n - 1);
  bool aliases = false;
  for (std::size_t i = 0; i < n; ++i) {
    const structured_operand_ref<T>& m = operands[i];
    const chain_operand& operand = plan.operands()[i];
    const auto expected = stored_shape(plan.dims(), operand, i);
    if (m.rows != expected[0] || m.cols != expected[1]) {
      throw std::invalid_argument(std::string(structured_evaluate_name) + ": A" + std::to_string(i + 1) + " is " +
                                  shape_text(m.rows, m.cols) + " but the plan reads a stored " +
                                  shape_text(expected[0], expected[1]) + " (" + std::string(kind_name(operand.kind)) +
                                  (operand.transposed ? ", transposed" : "") + (operand.inverted ? ", inverted" : "") +
                                  ")");
    }
    aliases = aliases || m.aliases_result;
    // A row-major stored M is S^T for the column-major S that BLAS sees; the operand is M or M^T.
    nodes[i] = node{const_cast<T*>(m.data), plan.dims()[i], plan.dims()[i + 1], m.cols > 0 ? m.cols : 1,
                    !operand.transposed, effective_kind(operand), operand.kind == matrix_kind::diagonal, false, i,
                    operand.kind};
  }
  const auto run = [&](T* into) {
    const node out{into, out_rows, out_cols, out_cols > 0 ? out_cols : 1, true, plan.result_kind(), false, true,
                   not_an_operand, plan.result_kind()};
    if constexpr (host_lapack_serves) {
#if defined(ORDO_HAS_LAPACK)  // declared only then (a build may have a BLAS and no LAPACK)
      if (backend != gemm_backend::portable) {
        host_lapack_kernels<ExecutionSpace> kernels;
        kernels.shared = cache;
        return evaluate_structured_plan(kernels, plan, nodes, out);
      }
#endif
    }
    // Forced portable: the dense products too (ordo::gemm's tiled kernel, never the host BLAS).
    portable_structured_kernels<ExecutionSpace> kernels{
        space, backend == gemm_backend::portable ? gemm_backend::portable : gemm_backend::automatic};
    evaluate_structured_plan(kernels, plan, nodes, out);
  };
  if (aliases) {  // an operand is the result: computed aside, then copied
    const Kokkos::View<T*, memory_space> aside(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ordo::evaluate aside"),
                                               out_rows * out_cols);
    run(aside.data());
    Kokkos::deep_copy(space, Kokkos::View<T*, memory_space, Kokkos::MemoryUnmanaged>(out_data, out_rows * out_cols),
                      aside);
    space.fence();
  } else {
    run(out_data);
  }
}

template <class R, class M>
structured_operand_ref<typename R::value_type> structured_ref(const M& m, const R& result) {
  return {m.view().data(), m.rows(), m.cols(), shares_memory(m, result)};
}

template <class ExecutionSpace, std::size_t Matrices, any_matrix R, any_matrix... Operands>
void evaluate_structured(const ExecutionSpace& space, gemm_backend backend, factorization_cache* cache,
                         const structured_chain_plan<Matrices>& plan, const R& result, const Operands&... operands) {
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
  const std::array<structured_operand_ref<value_type>, sizeof...(Operands)> refs{structured_ref(operands, result)...};
  evaluate_structured_refs(space, backend, cache, plan, std::span<const structured_operand_ref<value_type>>(refs),
                           result.view().data(), result.rows(), result.cols());
}

template <class ExecutionSpace, std::size_t Matrices, any_matrix R, class Range>
void evaluate_structured_range(const ExecutionSpace& space, gemm_backend backend,
                               const structured_chain_plan<Matrices>& plan, const R& result, const Range& operands) {
  using M = std::ranges::range_value_t<Range>;
  using value_type = typename R::value_type;
  static_assert(std::is_same_v<typename M::value_type, value_type>,
                "ordo::evaluate(structured plan, result, operands): every operand must have the result's scalar type");
  static_assert(std::is_same_v<typename M::execution_space, typename R::execution_space> &&
                    std::is_same_v<ExecutionSpace, typename R::execution_space>,
                "ordo::evaluate(structured plan, result, operands): the operands, the result and the space must share "
                "one execution space");
  std::vector<structured_operand_ref<value_type>> refs;
  for (const M& m : operands) refs.push_back(structured_ref(m, result));
  evaluate_structured_refs(space, backend, nullptr, plan, std::span<const structured_operand_ref<value_type>>(refs),
                           result.view().data(), result.rows(), result.cols());
}

template <class Range>
concept matrix_range = std::ranges::input_range<Range> && any_matrix<std::ranges::range_value_t<Range>>;

}  // namespace detail

// result = the chain the plan describes, of operands given as stored (see above), on the host's
// BLAS and LAPACK where they serve the call, else on ordo's portable kernels.
template <std::size_t Matrices, any_matrix R, any_matrix... Operands>
void evaluate(const structured_chain_plan<Matrices>& plan, const R& result, const Operands&... operands) {
  detail::evaluate_structured(typename R::execution_space{}, gemm_backend::automatic, nullptr, plan, result, operands...);
}

// The same, keeping the factorizations of the operands it solves against in cache, and reusing
// those that other evaluations with the same cache made (kernels/factorization_cache.hpp says when
// a factor is reused): generalized least squares factors its SPD matrix once for two chains.
template <std::size_t Matrices, any_matrix R, any_matrix... Operands>
void evaluate(factorization_cache& cache, const structured_chain_plan<Matrices>& plan, const R& result,
              const Operands&... operands) {
  detail::evaluate_structured(typename R::execution_space{}, gemm_backend::automatic, &cache, plan, result,
                              operands...);
}

// The same with the backend named: blas (the host's BLAS and LAPACK), portable (Kokkos kernels
// on the matrices' space), automatic; a backend that cannot serve the call throws
// std::invalid_argument saying why.
template <std::size_t Matrices, any_matrix R, any_matrix... Operands>
void evaluate(gemm_backend backend, const structured_chain_plan<Matrices>& plan, const R& result,
              const Operands&... operands) {
  detail::evaluate_structured(typename R::execution_space{}, backend, nullptr, plan, result, operands...);
}

// The same on an instance of the matrices' execution space (a CUDA stream, an OpenMP partition).
template <class ExecutionSpace, std::size_t Matrices, any_matrix R, any_matrix... Operands>
  requires Kokkos::is_execution_space<ExecutionSpace>::value
void evaluate(const ExecutionSpace& space, const structured_chain_plan<Matrices>& plan, const R& result,
              const Operands&... operands) {
  detail::evaluate_structured(space, gemm_backend::automatic, nullptr, plan, result, operands...);
}

template <class ExecutionSpace, std::size_t Matrices, any_matrix R, any_matrix... Operands>
  requires Kokkos::is_execution_space<ExecutionSpace>::value
void evaluate(const ExecutionSpace& space, gemm_backend backend, const structured_chain_plan<Matrices>& plan,
              const R& result, const Operands&... operands) {
  detail::evaluate_structured(space, backend, nullptr, plan, result, operands...);
}

// The same with the operands in a range (a std::vector or std::span of one matrix type): a chain
// whose length is known only at run time, evaluated by one instantiation whatever its length.
template <std::size_t Matrices, any_matrix R, detail::matrix_range Range>
void evaluate(const structured_chain_plan<Matrices>& plan, const R& result, const Range& operands) {
  detail::evaluate_structured_range(typename R::execution_space{}, gemm_backend::automatic, plan, result, operands);
}
template <std::size_t Matrices, any_matrix R, detail::matrix_range Range>
void evaluate(gemm_backend backend, const structured_chain_plan<Matrices>& plan, const R& result, const Range& operands) {
  detail::evaluate_structured_range(typename R::execution_space{}, backend, plan, result, operands);
}
template <class ExecutionSpace, std::size_t Matrices, any_matrix R, detail::matrix_range Range>
  requires Kokkos::is_execution_space<ExecutionSpace>::value
void evaluate(const ExecutionSpace& space, gemm_backend backend, const structured_chain_plan<Matrices>& plan,
              const R& result, const Range& operands) {
  detail::evaluate_structured_range(space, backend, plan, result, operands);
}

}  // namespace ordo

#endif
