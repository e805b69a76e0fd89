#ifndef ORDO_KERNELS_MULTIPLY_HPP
#define ORDO_KERNELS_MULTIPLY_HPP

// Evaluating matrix chains in their optimal order:
//   auto r = ordo::multiply(a, b, c);   // computed as the planner says, e.g. A(BC)
//   auto e = ordo::chain(a, b, c);      // lazy; decltype(e)::cost() is the compile-time plan's
//   ordo::evaluate(e, r);               // into an existing result
// Static extents are planned at compile time, chains with any dynamic extent at run time. All
// intermediates live in one workspace of plan.peak_temporary_elements() elements, allocated once
// per evaluation at the offsets the plan assigns.

#include <ordo/core/chain.hpp>
#include <ordo/core/detail/shape_text.hpp>
#include <ordo/core/precision.hpp>
#include <ordo/kernels/gemm.hpp>
#include <ordo/kernels/matrix.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace ordo {

namespace diagnostic {

template <class... ScalarTypes>
struct mixed_scalar_types {
  static_assert(always_false<ScalarTypes...>,
                "ordo::chain/multiply: all operands must have the same scalar type (the types are in the template "
                "arguments above)");
};

template <class... ExecutionSpaces>
struct mixed_execution_spaces {
  static_assert(always_false<ExecutionSpaces...>,
                "ordo::chain/multiply: all operands must live in the same execution space (the spaces are in the "
                "template arguments above)");
};

template <class Expected, class Given>
struct result_shape_mismatch {
  static_assert(always_false<Expected, Given>,
                "ordo::evaluate(chain, result): the result's static extents differ from the chain's (expected and "
                "given shapes are in the template arguments above)");
};

}  // namespace diagnostic

namespace detail {

template <class First, class... Rest>
struct first_of {
  using type = First;
};

template <class... Ms>
struct chain_operands {
  using first = typename first_of<std::remove_cvref_t<Ms>...>::type;
  using last = std::remove_cvref_t<decltype((std::declval<Ms>(), ...))>;
  using value_type = typename first::value_type;
  using execution_space = typename first::execution_space;
  using memory_space = typename first::memory_space;
  static constexpr bool is_static = (shape_of_t<Ms>::is_static && ...);
  using result_type = matrix<value_type, first::static_rows, last::static_cols, execution_space>;
};

// True when the operands can form a chain; otherwise instantiates the diagnostic that says why.
template <class... Ms>
consteval bool valid_chain_operands() {
  using traits = chain_operands<Ms...>;
  if constexpr (!(std::is_same_v<typename Ms::value_type, typename traits::value_type> && ...)) {
    (void)diagnostic::mixed_scalar_types<typename Ms::value_type...>{};
    return false;
  } else if constexpr (!(std::is_same_v<typename Ms::execution_space, typename traits::execution_space> && ...)) {
    (void)diagnostic::mixed_execution_spaces<typename Ms::execution_space...>{};
    return false;
  } else {
    return conforms_statically<shape_of_t<Ms>...>();
  }
}

struct no_runtime_plan {};

}  // namespace detail

// A lazy product of ordo::matrix operands that carries its plan: the compile-time plan in its type
// when every extent is static, a run-time plan otherwise.
template <any_matrix... Ms>
class chain_expression {
  using traits = detail::chain_operands<Ms...>;

 public:
  using value_type = typename traits::value_type;
  using execution_space = typename traits::execution_space;
  using memory_space = typename traits::memory_space;
  using result_type = typename traits::result_type;
  static constexpr bool is_static = traits::is_static;
  static constexpr std::size_t matrices = sizeof...(Ms);

  // Scalar multiplications of the planned order (compile time).
  static constexpr std::uint64_t cost()
    requires is_static
  {
    return chain_cost_v<Ms...>;
  }
  static constexpr std::uint64_t left_to_right_cost()
    requires is_static
  {
    return chain_plan_v<Ms...>.left_to_right_cost();
  }
  static constexpr std::string_view order()
    requires is_static
  {
    return chain_order_v<Ms...>;
  }

  // Throws std::invalid_argument naming the operands when dynamic extents do not conform.
  explicit chain_expression(const Ms&... operands) : operands_(operands...) {
    if constexpr (!is_static) {
      const std::array<std::size_t, sizeof...(Ms)> rows{operands.rows()...};
      const std::array<std::size_t, sizeof...(Ms)> cols{operands.cols()...};
      for (std::size_t i = 0; i + 1 < sizeof...(Ms); ++i) {
        if (cols[i] != rows[i + 1]) {
          throw std::invalid_argument("ordo::multiply: A" + std::to_string(i + 1) + " is " +
                                      detail::shape_text(rows[i], cols[i]) + " but A" + std::to_string(i + 2) +
                                      " is " + detail::shape_text(rows[i + 1], cols[i + 1]) + " (inner dimensions " +
                                      std::to_string(cols[i]) + " != " + std::to_string(rows[i + 1]) + ")");
        }
      }
      std::array<std::size_t, sizeof...(Ms) + 1> dims{};
      for (std::size_t i = 0; i < sizeof...(Ms); ++i) dims[i] = rows[i];
      dims[sizeof...(Ms)] = cols[sizeof...(Ms) - 1];
      plan_ = plan_chain(std::span<const std::size_t>(dims));
    }
  }

  // The plan: a reference to the compile-time plan, or the one made at construction.
  const auto& plan() const noexcept {
    if constexpr (is_static) {
      return chain_plan_v<Ms...>;
    } else {
      return plan_;
    }
  }

  const std::tuple<Ms...>& operands() const noexcept { return operands_; }

  // A new result matrix of the right extents, uninitialized: evaluate overwrites every element.
  result_type make_result() const {
    constexpr std::size_t rows = result_type::static_rows, cols = result_type::static_cols;
    const std::size_t actual_rows = std::get<0>(operands_).rows();
    const std::size_t actual_cols = std::get<sizeof...(Ms) - 1>(operands_).cols();
    if constexpr (rows != dynamic && cols != dynamic) {
      return result_type{uninitialized};
    } else if constexpr (rows == dynamic && cols == dynamic) {
      return result_type{uninitialized, actual_rows, actual_cols};
    } else if constexpr (rows == dynamic) {
      return result_type{uninitialized, actual_rows};
    } else {
      return result_type{uninitialized, actual_cols};
    }
  }

 private:
  std::tuple<Ms...> operands_;
  std::conditional_t<is_static, detail::no_runtime_plan, chain_plan<dynamic>> plan_{};
};

// Builds the lazy product; fails to compile on mixed scalar types or execution spaces and on
// static extents that do not conform.
template <any_matrix... Ms>
  requires(sizeof...(Ms) >= 1)
auto chain(const Ms&... operands) {
  if constexpr (detail::valid_chain_operands<Ms...>()) {
    return chain_expression<Ms...>(operands...);
  }
}

namespace detail {

// evaluate with every product's multiply-adds in Compute (void: gemm_scalar_t of the scalar type).
template <class Compute, class... Ms, any_matrix R>
void evaluate_chain(const chain_expression<Ms...>& expression, const R& result, gemm_backend backend) {
  using expression_type = chain_expression<Ms...>;
  using value_type = typename expression_type::value_type;
  using execution_space = typename expression_type::execution_space;
  using memory_space = typename expression_type::memory_space;
  using expected_shape = shape_of_t<typename expression_type::result_type>;
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
    const auto& operands = expression.operands();
    const std::size_t rows = std::get<0>(operands).rows();
    const std::size_t cols = std::get<sizeof...(Ms) - 1>(operands).cols();
    if (result.rows() != rows || result.cols() != cols) {
      throw std::invalid_argument("ordo::evaluate: the chain's result is " + detail::shape_text(rows, cols) +
                                  " but the result matrix is " + detail::shape_text(result.rows(), result.cols()));
    }
    const bool aliases = std::apply(
        [&](const auto&... m) { return ((m.view().data() == result.view().data() && m.view().size() > 0) || ...); },
        operands);
    if (aliases) {
      throw std::invalid_argument("ordo::evaluate: the result matrix must not share memory with an operand");
    }

    using node_view = Kokkos::View<value_type**, Kokkos::LayoutRight, memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    const execution_space space{};
    const auto& plan = expression.plan();
    const std::size_t n = plan.matrices();
    std::vector<node_view> nodes(2 * n - 1);
    std::apply(
        [&](const auto&... m) {
          std::size_t i = 0;
          ((nodes[i++] = node_view(m.view())), ...);
        },
        operands);
    if (n == 1) {
      Kokkos::deep_copy(space, result.view(), nodes[0]);
      space.fence();
      return;
    }
    const std::uint64_t workspace_elements = plan.peak_temporary_elements();
    Kokkos::View<value_type*, memory_space> workspace;
    if (workspace_elements > 0) {
      workspace = Kokkos::View<value_type*, memory_space>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("ordo::chain workspace")),
          static_cast<std::size_t>(workspace_elements));
    }
    const auto products = plan.products();
    for (std::size_t p = 0; p < products.size(); ++p) {
      const planned_product& step = products[p];
      const bool is_root = p + 1 == products.size();
      node_view out = is_root ? node_view(result.view())
                              : node_view(workspace.data() + step.workspace_offset, step.rows, step.cols);
      using compute_type = gemm_compute_t<Compute, node_view>;
      gemm_dispatch<Compute>(space, compute_type(1), nodes[step.left], nodes[step.right], compute_type(0), out,
                             backend);
      nodes[n + p] = out;
    }
    // The workspace is released on return; kernels that still read it must be done.
    space.fence();
  }
}

}  // namespace detail

// Evaluates the chain into result in the planned order, using one workspace allocation of
// plan().peak_temporary_elements() elements. Returns when the result is complete. Chains of
// ordo::half or ordo::bfloat16 multiply and add in float; each product, intermediates included,
// is stored in the 16-bit type, rounded once per element.
template <class... Ms, any_matrix R>
void evaluate(const chain_expression<Ms...>& expression, const R& result,
              gemm_backend backend = gemm_backend::automatic) {
  detail::evaluate_chain<void>(expression, result, backend);
}

// The same with the pair named: every product multiplies and adds in Compute (float data in double
// with ordo::precision<float, double>) and is rounded once to Storage, the operands' scalar type.
template <class... Ms, any_matrix R, class Storage, class Compute>
void evaluate(const chain_expression<Ms...>& expression, const R& result, precision<Storage, Compute>,
              gemm_backend backend = gemm_backend::automatic) {
  static_assert(std::is_same_v<Storage, typename chain_expression<Ms...>::value_type>,
                "ordo::evaluate(chain, result, ordo::precision<Storage, Compute>) requires Storage to be the "
                "operands' scalar type");
  detail::evaluate_chain<Compute>(expression, result, backend);
}

// The product of the operands, computed in the planned order into a new matrix.
template <any_matrix... Ms>
  requires(sizeof...(Ms) >= 1)
auto multiply(const Ms&... operands) {
  if constexpr (detail::valid_chain_operands<Ms...>()) {
    auto expression = chain_expression<Ms...>(operands...);
    auto result = expression.make_result();
    evaluate(expression, result);
    return result;
  }
}

namespace detail {

// Matrices followed by one ordo::precision<Storage, Compute>.
template <class... Args>
consteval bool matrices_then_precision() {
  constexpr std::size_t count = sizeof...(Args);
  if constexpr (count < 2) {
    return false;
  } else {
    constexpr bool is_matrix[] = {any_matrix<Args>...};
    for (std::size_t i = 0; i + 1 < count; ++i) {
      if (!is_matrix[i]) return false;
    }
    return precision_policy<std::tuple_element_t<count - 1, std::tuple<Args...>>>;
  }
}

template <class Precision, class... Ms>
auto multiply_in(const Ms&... operands) {
  if constexpr (valid_chain_operands<Ms...>()) {
    static_assert(std::is_same_v<typename Precision::storage_type, typename chain_operands<Ms...>::value_type>,
                  "ordo::multiply(..., ordo::precision<Storage, Compute>) requires Storage to be the operands' "
                  "scalar type");
    auto expression = chain_expression<Ms...>(operands...);
    auto result = expression.make_result();
    evaluate(expression, result, Precision{});
    return result;
  }
}

template <class Precision, class Tuple, std::size_t... I>
auto multiply_operands(const Tuple& arguments, std::index_sequence<I...>) {
  return multiply_in<Precision>(std::get<I>(arguments)...);
}

}  // namespace detail

// The product with the pair named by a trailing ordo::precision<Storage, Compute>:
//   ordo::multiply(a, b, c, ordo::precision<float, double>{});   // float data, double multiply-adds
//   ordo::multiply(a, b, ordo::precision<ordo::half, float>{});  // the default for half, said
template <class... Args>
  requires(detail::matrices_then_precision<Args...>())
auto multiply(const Args&... arguments) {
  using arguments_type = std::tuple<Args...>;
  using precision_type = std::remove_cvref_t<std::tuple_element_t<sizeof...(Args) - 1, arguments_type>>;
  return detail::multiply_operands<precision_type>(std::forward_as_tuple(arguments...),
                                                   std::make_index_sequence<sizeof...(Args) - 1>{});
}

}  // namespace ordo

#endif
