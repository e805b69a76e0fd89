#ifndef ORDO_KERNELS_EXPRESSION_HPP
#define ORDO_KERNELS_EXPRESSION_HPP

// Products written with operators, planned as a whole:
//
//   auto e = ordo::transpose(h) * h * x;   // lazy: nothing computed yet
//   decltype(e)::order();                  // "(A1(A2A3))" when every extent is static
//   ordo::vector<double, 3000> y = e;      // two matrix-vector products, no 3000 x 3000 temporary
//
// However a product is parenthesized, a * b, (a * b) * c and a * (b * c) all give one
// ordo::chain_expression of the leaves in order, planned once: at compile time when every extent
// is static, at evaluation otherwise. Scalars and signs multiply into the expression's scale(),
// which becomes the alpha of its last GEMM/GEMV call. ordo::transpose of a product reverses it
// and transposes each leaf.

#include <ordo/core/fixed_string.hpp>
#include <ordo/platform/shape_text.hpp>
#include <ordo/kernels/chain_expression.hpp>
#include <ordo/kernels/multiply.hpp>
#include <ordo/kernels/transpose.hpp>

#include <boost/hana/concat.hpp>
#include <boost/hana/reverse.hpp>
#include <boost/hana/transform.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace ordo {

// What operator* multiplies: a matrix, a transpose or a product.
template <class T>
concept product_operand = product_leaf<T> || is_chain_expression_v<std::remove_cvref_t<T>>;

// A scalar factor: any arithmetic type but bool, converted to the expression's scalar_type.
template <class T>
concept product_scalar = std::is_arithmetic_v<std::remove_cvref_t<T>> && !std::is_same_v<std::remove_cvref_t<T>, bool>;

namespace diagnostic {

// Types that name a shape in operator*'s errors: left_operand_is<5, 200> reads "the left operand
// is 5 x 200"; g++ also prints the whole message.
template <std::size_t Rows, std::size_t Cols>
struct left_operand_is {};
template <std::size_t Rows, std::size_t Cols>
struct right_operand_is {};

template <class Left, class Right, auto Message>
struct product_inner_extents_mismatch {
  static_assert(always_false<Left, Right>,
                "ordo: operator*(a, b) requires a's columns to equal b's rows (the shapes and the message are in the "
                "template arguments above)");
};

template <class Left, class Right>
struct product_mixed_scalar_types {
  static_assert(always_false<Left, Right>,
                "ordo: operator*(a, b) requires a and b to have the same scalar type (the types are in the template "
                "arguments above)");
};

template <class Left, class Right>
struct product_mixed_execution_spaces {
  static_assert(always_false<Left, Right>,
                "ordo: operator*(a, b) requires a and b to live in the same execution space (the spaces are in the "
                "template arguments above)");
};

}  // namespace diagnostic

namespace detail {

// Any operand as a product of leaves.
template <product_leaf Leaf>
chain_expression<std::remove_cvref_t<Leaf>> as_product(const Leaf& leaf) {
  return chain_expression<std::remove_cvref_t<Leaf>>(leaf);
}
template <class... Leaves>
const chain_expression<Leaves...>& as_product(const chain_expression<Leaves...>& expression) noexcept {
  return expression;
}

template <class T>
using product_of_t = std::remove_cvref_t<decltype(as_product(std::declval<const T&>()))>;

// The scale of an operand: its product's, or 1 for a matrix or a transpose.
template <class Operand>
auto scale_of(const Operand& operand) {
  using scalar_type = typename product_of_t<Operand>::scalar_type;
  if constexpr (is_chain_expression_v<Operand>) {
    return operand.scale();
  } else {
    return scalar_type(1);
  }
}

// A chain_expression of the leaves in a hana::tuple, with the given scale.
template <class Scalar, class... Leaves>
chain_expression<Leaves...> make_product(boost::hana::tuple<Leaves...> leaves, Scalar scale) {
  return chain_expression<Leaves...>(already_checked, std::move(leaves), scale);
}

// The leaves of an operand as a hana::tuple. A product that is about to die (the a * b in
// a * b * c) gives its tuple up, so that a chain of n operators copies each leaf (a Kokkos View,
// reference counted) a few times, not n times.
template <class Operand>
auto leaves_of(Operand&& operand) {
  using plain = std::remove_cvref_t<Operand>;
  if constexpr (is_chain_expression_v<plain> && std::is_rvalue_reference_v<Operand&&> &&
                !std::is_const_v<std::remove_reference_t<Operand>>) {
    return std::move(operand).release_operands();
  } else if constexpr (is_chain_expression_v<plain>) {
    return operand.operands();
  } else {
    return boost::hana::make_tuple(plain(std::forward<Operand>(operand)));
  }
}

// One function for every operator*: the message is built out of line, not in each instantiation.
[[noreturn, gnu::noinline, gnu::cold]] inline void throw_inner_extents_mismatch(std::size_t left_rows,
                                                                                std::size_t left_cols,
                                                                                std::size_t right_rows,
                                                                                std::size_t right_cols) {
  throw std::invalid_argument("ordo: operator*: the left operand is " + shape_text(left_rows, left_cols) +
                              " and the right operand is " + shape_text(right_rows, right_cols) + " (inner extents " +
                              std::to_string(left_cols) + " != " + std::to_string(right_rows) + ")");
}

// Checks at compile time that a * b can be formed; instantiates the diagnostic that says why not.
template <class Left, class Right>
consteval bool can_multiply() {
  using left_shape = typename Left::shape_type;
  using right_shape = typename Right::shape_type;
  constexpr std::size_t inner_left = left_shape::static_cols, inner_right = right_shape::static_rows;
  if constexpr (!std::is_same_v<typename Left::value_type, typename Right::value_type>) {
    (void)diagnostic::product_mixed_scalar_types<typename Left::value_type, typename Right::value_type>{};
    return false;
  } else if constexpr (!std::is_same_v<typename Left::execution_space, typename Right::execution_space>) {
    (void)diagnostic::product_mixed_execution_spaces<typename Left::execution_space,
                                                     typename Right::execution_space>{};
    return false;
  } else if constexpr (inner_left != dynamic && inner_right != dynamic && inner_left != inner_right) {
    constexpr auto message = fixed_string<200>{}
                                 .append("ordo: operator*: the left operand is ")
                                 .append_extent(left_shape::static_rows, dynamic)
                                 .append("x")
                                 .append(inner_left)
                                 .append(" and the right operand is ")
                                 .append(inner_right)
                                 .append("x")
                                 .append_extent(right_shape::static_cols, dynamic)
                                 .append(" (inner extents ")
                                 .append(inner_left)
                                 .append(" != ")
                                 .append(inner_right)
                                 .append(")");
    (void)diagnostic::product_inner_extents_mismatch<
        diagnostic::left_operand_is<left_shape::static_rows, inner_left>,
        diagnostic::right_operand_is<inner_right, right_shape::static_cols>, message>{};
    return false;
  } else {
    return true;
  }
}

}  // namespace detail

// The lazy product a * b: the leaves of a followed by those of b, planned as one chain. Extents
// that do not conform fail to compile when static and throw std::invalid_argument when dynamic,
// naming both operands' shapes.
template <class Left, class Right>
  requires product_operand<Left> && product_operand<Right>
auto operator*(Left&& left, Right&& right) {
  using left_product = detail::product_of_t<std::remove_cvref_t<Left>>;
  using right_product = detail::product_of_t<std::remove_cvref_t<Right>>;
  if constexpr (detail::can_multiply<left_product, right_product>()) {
    // Static inner extents were checked above; a dynamic one is checked here.
    if constexpr (left_product::shape_type::static_cols == dynamic || right_product::shape_type::static_rows == dynamic) {
      if (left.cols() != right.rows()) detail::throw_inner_extents_mismatch(left.rows(), left.cols(), right.rows(), right.cols());
    }
    const auto scale = detail::scale_of(left) * detail::scale_of(right);
    return detail::make_product(boost::hana::concat(detail::leaves_of(std::forward<Left>(left)),
                                                    detail::leaves_of(std::forward<Right>(right))),
                                scale);
  }
}

// s * a and a * s: a with its scale multiplied by s (converted to the scalar type of a's product).
template <class Scalar, class Operand>
  requires product_scalar<Scalar> && product_operand<Operand>
auto operator*(const Scalar& s, Operand&& operand) {
  using scalar_type = typename detail::product_of_t<std::remove_cvref_t<Operand>>::scalar_type;
  const scalar_type scale = static_cast<scalar_type>(s) * detail::scale_of(operand);
  return detail::make_product(detail::leaves_of(std::forward<Operand>(operand)), scale);
}

template <class Operand, class Scalar>
  requires product_operand<Operand> && product_scalar<Scalar>
auto operator*(Operand&& operand, const Scalar& s) {
  return s * std::forward<Operand>(operand);
}

// -a: a with its scale negated.
template <class Operand>
  requires product_operand<Operand>
auto operator-(Operand&& operand) {
  const auto scale = -detail::scale_of(operand);
  return detail::make_product(detail::leaves_of(std::forward<Operand>(operand)), scale);
}

// The transpose of a product: (s A1 ... An)^T = s An^T ... A1^T, each leaf transposed as a view.
template <class... Leaves>
auto transpose(const chain_expression<Leaves...>& expression) {
  const auto reversed = boost::hana::reverse(boost::hana::transform(
      expression.operands(), [](const auto& leaf) { return std::remove_cvref_t<decltype(transpose(leaf))>(transpose(leaf)); }));
  return detail::make_product(reversed, expression.scale());
}

}  // namespace ordo

#endif
