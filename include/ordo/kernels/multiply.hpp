#ifndef ORDO_KERNELS_MULTIPLY_HPP
#define ORDO_KERNELS_MULTIPLY_HPP

// Evaluating matrix chains in their optimal order:
//   auto r = ordo::multiply(a, b, c);   // computed as the planner says, e.g. A(BC)
//   auto e = ordo::chain(a, b, c);      // lazy; decltype(e)::cost() is the compile-time plan's
//   ordo::evaluate(e, r);               // into an existing result
//   auto s = ordo::evaluate(e);         // into a new one
// (a * b * c, <ordo/expression.hpp>, builds the same lazy product.)
// Static extents are planned at compile time, chains with any dynamic extent at run time. All
// intermediates live in one workspace of plan.peak_temporary_elements() elements, allocated once
// per evaluation at the offsets the plan assigns.

#include <ordo/core/precision.hpp>
#include <ordo/kernels/chain_expression.hpp>
#include <ordo/kernels/detail/chain_evaluator.hpp>
#include <ordo/kernels/gemm.hpp>
#include <ordo/kernels/matrix.hpp>

#include <boost/hana/back.hpp>
#include <boost/hana/drop_back.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>
#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <type_traits>

namespace ordo {

// Evaluates the chain into result in the planned order, using one workspace allocation of
// plan().peak_temporary_elements() elements. Returns when the result is complete. Chains of
// ordo::half or ordo::bfloat16 multiply and add in float; each product, intermediates included,
// is stored in the 16-bit type, rounded once per element.
template <class... Ms, any_matrix R>
void evaluate(const chain_expression<Ms...>& expression, const R& result,
              gemm_backend backend = gemm_backend::automatic) {
  detail::evaluate_expression<void>({}, expression, result, backend);
}

// The same on an instance of the operands' execution space (a CUDA stream, an OpenMP partition):
// every product and copy runs on it.
template <class ExecutionSpace, class... Ms, any_matrix R>
  requires Kokkos::is_execution_space<ExecutionSpace>::value
void evaluate(const ExecutionSpace& space, const chain_expression<Ms...>& expression, const R& result,
              gemm_backend backend = gemm_backend::automatic) {
  static_assert(std::is_same_v<ExecutionSpace, typename chain_expression<Ms...>::execution_space>,
                "ordo::evaluate(space, chain, result): space must be an instance of the operands' execution space");
  detail::evaluate_expression<void>(space, expression, result, backend);
}

// The same with the pair named: every product multiplies and adds in Compute (float data in double
// with ordo::precision<float, double>) and is rounded once to Storage, the operands' scalar type.
template <class... Ms, any_matrix R, class Storage, class Compute>
void evaluate(const chain_expression<Ms...>& expression, const R& result, precision<Storage, Compute>,
              gemm_backend backend = gemm_backend::automatic) {
  static_assert(std::is_same_v<Storage, typename chain_expression<Ms...>::value_type>,
                "ordo::evaluate(chain, result, ordo::precision<Storage, Compute>) requires Storage to be the "
                "operands' scalar type");
  detail::evaluate_expression<Compute>({}, expression, result, backend);
}

// The product of the operands, computed in the planned order into a new matrix.
template <product_leaf... Ms>
  requires(sizeof...(Ms) >= 1)
auto multiply(const Ms&... operands) {
  if constexpr (detail::valid_chain_operands<Ms...>()) {
    auto expression = chain_expression<Ms...>(detail::called_as{"ordo::multiply"}, operands...);
    auto result = expression.make_result();
    evaluate(expression, result);
    return result;
  }
}

// The product into a new matrix: auto r = ordo::evaluate(2.0 * a * ordo::transpose(b) * c).
template <class... Ms>
auto evaluate(const chain_expression<Ms...>& expression, gemm_backend backend = gemm_backend::automatic) {
  auto result = expression.make_result();
  detail::evaluate_expression<void>({}, expression, result, backend);
  return result;
}

namespace detail {

template <class T>
using is_product_leaf = std::bool_constant<product_leaf<T>>;

// Matrices (or transposes) followed by one ordo::precision<Storage, Compute>.
template <class... Args>
consteval bool matrices_then_precision() {
  using arguments = boost::mp11::mp_list<std::remove_cvref_t<Args>...>;
  if constexpr (sizeof...(Args) < 2) {
    return false;
  } else {
    return boost::mp11::mp_all_of<boost::mp11::mp_pop_back<arguments>, is_product_leaf>::value &&
           precision_policy<boost::mp11::mp_back<arguments>>;
  }
}

template <class Precision, class... Ms>
auto multiply_in(const Ms&... operands) {
  if constexpr (valid_chain_operands<Ms...>()) {
    static_assert(std::is_same_v<typename Precision::storage_type, typename chain_expression<Ms...>::value_type>,
                  "ordo::multiply(..., ordo::precision<Storage, Compute>) requires Storage to be the operands' "
                  "scalar type");
    auto expression = chain_expression<Ms...>(detail::called_as{"ordo::multiply"}, operands...);
    auto result = expression.make_result();
    evaluate(expression, result, Precision{});
    return result;
  }
}

}  // namespace detail

// The product with the pair named by a trailing ordo::precision<Storage, Compute>:
//   ordo::multiply(a, b, c, ordo::precision<float, double>{});   // float data, double multiply-adds
//   ordo::multiply(a, b, ordo::precision<ordo::half, float>{});  // the default for half, said
template <class... Args>
  requires(detail::matrices_then_precision<Args...>())
auto multiply(const Args&... arguments) {
  const auto all = boost::hana::make_tuple(arguments...);
  using precision_type = std::remove_cvref_t<decltype(boost::hana::back(all))>;
  return boost::hana::unpack(boost::hana::drop_back(all), [](const auto&... leaves) {
    return detail::multiply_in<precision_type>(leaves...);
  });
}

}  // namespace ordo

#endif
