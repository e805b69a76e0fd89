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

// operator*'s errors state the rule in the message and the operands in the condition, which both
// compilers print: clang in the error line ("requirement 'ordo::diagnostic::left_operand_is<10,
// 30>::times<ordo::diagnostic::right_operand_is<31, 5>>'"), g++ in the note after it; extents
// read as diagnostic::extent_v (core/shape.hpp) prints them.
template <auto Rows, auto Cols>
struct left_operand_is {
  template <class Right>
  static constexpr bool times = false;
};
template <auto Rows, auto Cols>
struct right_operand_is {};
template <class Left, class Right>
struct scalar_types {
  static constexpr bool agree = false;
};
template <class Left, class Right>
struct execution_spaces {
  static constexpr bool agree = false;
};

// Whether a * b can be formed from operands of these scalar types, execution spaces and shapes;
// when it cannot, the first broken rule fails a static_assert here (one error, the rest of the
// expression then stays silent: invalid_product). Both operator*s, plain and structured, ask it.
template <class LeftValue, class RightValue, class LeftSpace, class RightSpace, class LeftShape, class RightShape>
constexpr bool product_is_valid() {
  constexpr std::size_t inner_left = LeftShape::static_cols, inner_right = RightShape::static_rows;
  if constexpr (!std::is_same_v<LeftValue, RightValue>) {
    static_assert(scalar_types<LeftValue, RightValue>::agree,
                  "ordo: operator*(a, b) requires a and b to have the same scalar type");
    return false;
  } else if constexpr (!std::is_same_v<LeftSpace, RightSpace>) {
    static_assert(execution_spaces<LeftSpace, RightSpace>::agree,
                  "ordo: operator*(a, b) requires a and b to live in the same execution space");
    return false;
  } else if constexpr (inner_left != ordo::dynamic && inner_right != ordo::dynamic && inner_left != inner_right) {
    // ordo::dynamic: in this namespace, dynamic is the enumerator extents print as.
    using a_is = left_operand_is<extent_v<LeftShape::static_rows>, extent_v<inner_left>>;
    using b_is = right_operand_is<extent_v<inner_right>, extent_v<RightShape::static_cols>>;
    static_assert(a_is::template times<b_is>, "ordo: operator*(a, b) requires a's columns to equal b's rows");
    return false;
  } else {
    return true;
  }
}

// What a * b gives when it cannot be formed. Its error was reported at that *; every operator on
// it gives it again without a word, so that a wrong a * b * c * d prints one error, not a cascade
// of "no match for operator*" on void.
struct invalid_product {
  template <class T>
  operator T() const;  // declared only: the program has already failed to compile
};
template <class T>
invalid_product operator*(const invalid_product&, const T&) {
  return {};
}
template <class T>
  requires(!std::is_same_v<T, invalid_product>)
invalid_product operator*(const T&, const invalid_product&) {
  return {};
}
inline invalid_product operator-(const invalid_product&) { return {}; }
inline invalid_product transpose(const invalid_product&) { return {}; }

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

// The leaves of an operand as a hana::tuple: an lvalue ordo::matrix borrowed
// (detail/borrowed_leaf.hpp: a pointer, no reference counting), a temporary one moved in, a
// transpose or diagonal copied (a small view that shares its matrix's elements: as Eigen nests
// expression nodes by value and only plain matrices by reference, so that
// `f(ordo::transpose(a), b)` returning its parameters' product does not point at a dead
// temporary), and a product's leaves as they are; a product that is about to die (the a * b in
// a * b * c) gives its tuple up.
template <class Operand>
auto leaves_of(Operand&& operand) {
  using plain = std::remove_cvref_t<Operand>;
  if constexpr (is_chain_expression_v<plain> && std::is_rvalue_reference_v<Operand&&> &&
                !std::is_const_v<std::remove_reference_t<Operand>>) {
    return std::move(operand).release_operands();
  } else if constexpr (is_chain_expression_v<plain>) {
    return operand.operands();
  } else if constexpr (std::is_lvalue_reference_v<Operand&&> && any_matrix<plain>) {
    return boost::hana::make_tuple(borrowed_leaf<plain>(operand));
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

}  // namespace detail

// The lazy product a * b: the leaves of a followed by those of b, planned as one chain. Extents
// that do not conform fail to compile when static and throw std::invalid_argument when dynamic,
// naming both operands' shapes.
template <class Left, class Right>
  requires product_operand<Left> && product_operand<Right>
auto operator*(Left&& left, Right&& right) {
  using left_product = detail::product_of_t<std::remove_cvref_t<Left>>;
  using right_product = detail::product_of_t<std::remove_cvref_t<Right>>;
  using left_shape = typename left_product::shape_type;
  using right_shape = typename right_product::shape_type;
  constexpr std::size_t inner_left = left_shape::static_cols, inner_right = right_shape::static_rows;
  if constexpr (!diagnostic::product_is_valid<typename left_product::value_type, typename right_product::value_type,
                                              typename left_product::execution_space,
                                              typename right_product::execution_space, left_shape, right_shape>()) {
    return diagnostic::invalid_product{};
  } else {
    // Static inner extents were checked above; a dynamic one is checked here.
    if constexpr (inner_left == dynamic || inner_right == dynamic) {
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

// a / s: a with its scale multiplied by 1 / s (rounded once, as the alpha of the last product).
template <class Operand, class Scalar>
  requires product_operand<Operand> && product_scalar<Scalar>
auto operator/(Operand&& operand, const Scalar& s) {
  using scalar_type = typename detail::product_of_t<std::remove_cvref_t<Operand>>::scalar_type;
  static_assert(std::is_floating_point_v<scalar_type>,
                "ordo: a / s requires a floating-point scalar type (for integers 1 / s would round to 0)");
  return (scalar_type(1) / static_cast<scalar_type>(s)) * std::forward<Operand>(operand);
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
