#ifndef ORDO_KERNELS_CHAIN_EXPRESSION_HPP
#define ORDO_KERNELS_CHAIN_EXPRESSION_HPP

// ordo::chain_expression: a lazy product of matrices and transposed matrices times a scalar,
// with its plan. ordo::chain(a, b, c) and a * b * c (<ordo/expression.hpp>) both build one.
//
//   auto e = ordo::chain(a, b, c);     // nothing computed yet
//   decltype(e)::order();              // "(A1(A2A3))": the plan, when every extent is static
//   ordo::matrix<double, 3, 4> r = e;  // evaluated in the planned order
//
// Which library does what (docs/architecture.md): the operands are a Boost.Hana tuple, because
// they are values of different types (matrices, transposes, extents static or not) that products
// concatenate, transposes reverse and evaluation walks; questions about their types alone (one
// scalar type? one space? all extents static? any transpose?) are Boost.MP11 algorithms on the
// type list.

#include <ordo/core/chain.hpp>
#include <ordo/core/fixed_string.hpp>
#include <ordo/platform/shape_text.hpp>
#include <ordo/kernels/detail/chain_evaluator.hpp>
#include <ordo/kernels/gemm.hpp>
#include <ordo/kernels/matrix.hpp>
#include <ordo/kernels/detail/transposed.hpp>

#include <boost/hana/at.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

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

}  // namespace diagnostic

namespace detail {

template <class T>
using value_type_of = typename T::value_type;
template <class T>
using execution_space_of = typename T::execution_space;
template <class T>
using is_statically_shaped = std::bool_constant<shape_of_t<T>::is_static>;
template <class T>
using is_transposed_leaf = std::bool_constant<is_transposed_v<unborrowed_t<T>>>;
template <class T>
using is_diagonal_leaf = std::bool_constant<is_diagonal_v<unborrowed_t<T>>>;

// True when the leaves can form a product; otherwise instantiates the diagnostic that says why.
template <class... Leaves>
consteval bool valid_chain_operands() {
  using leaves = boost::mp11::mp_list<Leaves...>;
  if constexpr (!boost::mp11::mp_same<value_type_of<Leaves>...>::value) {
    (void)diagnostic::mixed_scalar_types<value_type_of<Leaves>...>{};
    return false;
  } else if constexpr (!boost::mp11::mp_same<execution_space_of<Leaves>...>::value) {
    (void)diagnostic::mixed_execution_spaces<execution_space_of<Leaves>...>{};
    return false;
  } else {
    static_assert(boost::mp11::mp_size<leaves>::value >= 1);
    return conforms_statically<shape_of_t<Leaves>...>();
  }
}

// Adjacent extents of the leaves at run time, named as ordo::chain names them; the message starts
// with the function the user called (ordo::chain, ordo::multiply).
inline void check_chain_conforms(std::span<const std::size_t> rows, std::span<const std::size_t> cols,
                                 const char* operation) {
  for (std::size_t i = 0; i + 1 < rows.size(); ++i) {
    if (cols[i] != rows[i + 1]) {
      throw std::invalid_argument(std::string(operation) + ": A" + std::to_string(i + 1) + " is " + shape_text(rows[i], cols[i]) +
                                  " but A" + std::to_string(i + 2) + " is " + shape_text(rows[i + 1], cols[i + 1]) +
                                  " (inner dimensions " + std::to_string(cols[i]) + " != " +
                                  std::to_string(rows[i + 1]) + ")");
    }
  }
}

struct no_runtime_plan {};

// The public function that builds a chain, for its run-time messages.
struct called_as {
  const char* name;
};

// Makes a chain_expression from checked leaves without checking them again.
struct already_checked_t {
  explicit already_checked_t() = default;
};
inline constexpr already_checked_t already_checked{};

}  // namespace detail

// The lazy product scale() * L1 * L2 * ... * Ln of leaves Li (ordo::matrix or ordo::transposed),
// planned at compile time when every extent is static and at evaluation otherwise.
template <product_leaf... Leaves>
class chain_expression {
  using leaf_list = boost::mp11::mp_list<Leaves...>;
  using first = boost::mp11::mp_front<leaf_list>;
  using last = boost::mp11::mp_back<leaf_list>;

 public:
  using value_type = typename first::value_type;
  using execution_space = typename first::execution_space;
  using memory_space = typename first::memory_space;
  // The type of the scalar factor: what GEMM's alpha is for value_type (float for 16-bit types).
  using scalar_type = detail::gemm_scalar_t<value_type>;
  using shape_type = ordo::shape<first::static_rows, last::static_cols>;
  using result_type = matrix<value_type, first::static_rows, last::static_cols, execution_space>;
  using operands_type = boost::hana::tuple<Leaves...>;
  static constexpr bool is_static = boost::mp11::mp_all_of<leaf_list, detail::is_statically_shaped>::value;
  static constexpr bool has_transposed_operand = boost::mp11::mp_any_of<leaf_list, detail::is_transposed_leaf>::value;
  // ordo::diagonal(d) operands: planned with their structure, their products run as scalings.
  static constexpr bool has_diagonal_operand = boost::mp11::mp_any_of<leaf_list, detail::is_diagonal_leaf>::value;
  static constexpr std::size_t matrices = sizeof...(Leaves);

  // Scalar multiplications of the planned order (compile time).
  static constexpr std::uint64_t cost()
    requires is_static
  {
    return chain_cost_v<Leaves...>;
  }
  static constexpr std::uint64_t left_to_right_cost()
    requires is_static
  {
    return chain_plan_v<Leaves...>.left_to_right_cost();
  }
  static constexpr order_view order()
    requires is_static
  {
    return chain_order_v<Leaves...>;
  }
  // The same when an extent is dynamic: planned now from the run-time extents, each call.
  std::uint64_t cost() const
    requires(!is_static)
  {
    return plan().cost();
  }
  std::uint64_t left_to_right_cost() const
    requires(!is_static)
  {
    return plan().left_to_right_cost();
  }
  std::string order() const
    requires(!is_static)
  {
    return std::string(plan().order());
  }

  // Throws std::invalid_argument naming the operands when dynamic extents do not conform.
  explicit chain_expression(const Leaves&... leaves) : chain_expression(detail::called_as{"ordo::chain"}, leaves...) {}
  // The same, with the function the user called first in the message (ordo::multiply).
  chain_expression(detail::called_as operation, const Leaves&... leaves) : operands_(leaves...) {
    if constexpr (!is_static) {
      const std::array<std::size_t, matrices> rows{leaves.rows()...};
      const std::array<std::size_t, matrices> cols{leaves.cols()...};
      detail::check_chain_conforms(rows, cols, operation.name);
    } else {
      (void)operation;
    }
  }

  // Leaves whose adjacent extents the caller checked (products of checked expressions).
  chain_expression(detail::already_checked_t, operands_type operands, scalar_type scale)
      : operands_(std::move(operands)), scale_(scale) {}

  std::size_t rows() const noexcept { return boost::hana::at_c<0>(operands_).rows(); }
  std::size_t cols() const noexcept { return boost::hana::at_c<matrices - 1>(operands_).cols(); }

  // d0 .. dn: leaf i is d[i] x d[i+1].
  std::array<std::size_t, matrices + 1> dims() const {
    std::array<std::size_t, matrices + 1> d{};
    std::size_t i = 0;
    boost::hana::for_each(operands_, [&](const auto& leaf) { d[i++] = leaf.rows(); });
    d[matrices] = cols();
    return d;
  }

  // The compile-time plan, for code that needs it as a constant.
  static constexpr const auto& static_plan()
    requires is_static
  {
    return chain_plan_v<Leaves...>;
  }

  // The plan: a reference to the compile-time plan, or one made now from the run-time extents
  // (each call plans again; evaluation plans once).
  decltype(auto) plan() const {
    if constexpr (is_static) {
      return (chain_plan_v<Leaves...>);
    } else if constexpr (has_diagonal_operand) {
      const auto d = dims();
      constexpr std::array<operand_structure, matrices> structures{shape_of_t<Leaves>::structure...};
      return plan_chain(std::span<const std::size_t>(d), std::span<const operand_structure>(structures));
    } else {
      const auto d = dims();
      return plan_chain(std::span<const std::size_t>(d));
    }
  }

  const operands_type& operands() const& noexcept { return operands_; }
  // The leaves, moved out of an expression that is about to die (a * b * c reuses a * b's).
  operands_type release_operands() && noexcept { return std::move(operands_); }
  template <std::size_t I>
  const auto& operand() const noexcept {
    return boost::hana::at_c<I>(operands_);
  }
  // The scalar factor: the product of the scalars and signs the expression was written with.
  scalar_type scale() const noexcept { return scale_; }

  // A new result matrix of the right extents, uninitialized: evaluation overwrites every element.
  result_type make_result() const { return detail::uninitialized_matrix<result_type>(rows(), cols()); }

  // Writes the product into m (m = expression); m may be an operand.
  template <any_matrix M>
  void evaluate_into(const M& m) const {
    detail::evaluate_expression<void, detail::backend_fixed_automatic>(execution_space{}, *this, m,
                                                                       gemm_backend::automatic);
  }

  // m += sign * the product (C += A * B: the last GEMM's beta is 1); m may be an operand.
  template <any_matrix M>
  void accumulate_into(const M& m, scalar_type sign = scalar_type(1), gemm_backend backend = gemm_backend::automatic,
                       const execution_space& space = execution_space{}) const {
    const chain_expression signed_product(detail::already_checked, operands_, scale_ * sign);
    detail::evaluate_expression<void>(space, signed_product, m, backend, true);
  }

  // The product in a new matrix: ordo::matrix<double, 3, 4> r = a * b; extents must agree (static
  // ones at compile time, dynamic ones throw std::invalid_argument).
  template <any_matrix M>
  operator M() const {
    M result = detail::uninitialized_matrix<M>(rows(), cols());
    evaluate_into(result);
    return result;
  }

  // A product that is 1 x 1 by its types, as its one element (copied to the host):
  // double s = ordo::transpose(v) * v;
  operator value_type() const
    requires(first::static_rows == 1 && last::static_cols == 1)
  {
    const result_type result = *this;
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), result.view());
    return host(0, 0);
  }

 private:
  operands_type operands_;
  scalar_type scale_ = scalar_type(1);
};

// Prints the product's value (evaluated into a new matrix), as for a matrix.
template <class... Leaves>
std::ostream& operator<<(std::ostream& out, const chain_expression<Leaves...>& expression) {
  const typename chain_expression<Leaves...>::result_type result = expression;
  return out << result;
}

template <class T>
inline constexpr bool is_chain_expression_v = false;

template <class... Leaves>
inline constexpr bool is_chain_expression_v<chain_expression<Leaves...>> = true;

// Builds the lazy product of matrices and transposes; fails to compile on mixed scalar types or
// execution spaces and on static extents that do not conform.
template <product_leaf... Leaves>
  requires(sizeof...(Leaves) >= 1)
auto chain(const Leaves&... leaves) {
  if constexpr (detail::valid_chain_operands<Leaves...>()) {
    return chain_expression<Leaves...>(leaves...);
  }
}

}  // namespace ordo

#endif
