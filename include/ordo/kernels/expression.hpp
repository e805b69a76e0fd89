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

#include <ordo/core/detail/fixed_string.hpp>
#include <ordo/core/detail/shape_text.hpp>
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

// A chain_expression of the leaves in a hana::tuple, with the given scale.
template <class Scalar, class... Leaves>
chain_expression<Leaves...> make_product(const boost::hana::tuple<Leaves...>& leaves, Scalar scale) {
  return chain_expression<Leaves...>(already_checked, leaves, scale);
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
template <product_operand Left, product_operand Right>
auto operator*(const Left& left, const Right& right) {
  using left_product = detail::product_of_t<Left>;
  using right_product = detail::product_of_t<Right>;
  if constexpr (detail::can_multiply<left_product, right_product>()) {
    const left_product& l = detail::as_product(left);
    const right_product& r = detail::as_product(right);
    if (l.cols() != r.rows()) {
      throw std::invalid_argument("ordo: operator*: the left operand is " + detail::shape_text(l.rows(), l.cols()) +
                                  " and the right operand is " + detail::shape_text(r.rows(), r.cols()) +
                                  " (inner extents " + std::to_string(l.cols()) + " != " + std::to_string(r.rows()) +
                                  ")");
    }
    return detail::make_product(boost::hana::concat(l.operands(), r.operands()), l.scale() * r.scale());
  }
}

// s * a and a * s: a with its scale multiplied by s (converted to the scalar type of a's product).
template <product_scalar Scalar, product_operand Operand>
auto operator*(const Scalar& s, const Operand& operand) {
  const auto& p = detail::as_product(operand);
  using scalar_type = typename detail::product_of_t<Operand>::scalar_type;
  return detail::make_product(p.operands(), static_cast<scalar_type>(s) * p.scale());
}

template <product_operand Operand, product_scalar Scalar>
auto operator*(const Operand& operand, const Scalar& s) {
  return s * operand;
}

// -a: a with its scale negated.
template <product_operand Operand>
auto operator-(const Operand& operand) {
  const auto& p = detail::as_product(operand);
  return detail::make_product(p.operands(), -p.scale());
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
