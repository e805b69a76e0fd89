#ifndef ORDO_KERNELS_STRUCTURED_EXPRESSION_HPP
#define ORDO_KERNELS_STRUCTURED_EXPRESSION_HPP

// Structured chains written as products (docs/structured_chains.md, "Writing the chain"):
//
//   auto beta = ordo::inverse(ordo::spd(ordo::gram(X))) * ordo::transpose(X) * y;  // normal equations
//   static_assert(decltype(beta)::kernels() == "syrk gemv posv");                   // static extents
//   auto w = ordo::inverse(ordo::lower(L)) * A * ordo::transpose(ordo::inverse(ordo::lower(L)));
//
// ordo::lower(m), upper, unit_lower, unit_upper, symmetric, spd, orthogonal and general mark a
// matrix's kind; ordo::inverse and ordo::transpose flip its flags; ordo::gram(X) is X^T X of one
// stored X (SYRK); a kind given to a product (ordo::spd(ordo::gram(X))) evaluates that product
// first and uses it as an operand of that kind. A product with at least one such factor is an
// ordo::structured_expression: planned at compile time when every extent is static (kernels(),
// order() are then constant expressions), at evaluation otherwise, by plan_structured_chain under
// the predicted-time model, and evaluated by ordo::evaluate(plan, result, operands...) (the host's
// BLAS and LAPACK, or the portable kernels on the matrices' space).
// Parts are held by value (an ordo::matrix is a reference-counted View), so temporaries are safe.

#include <ordo/core/fixed_string.hpp>
#include <ordo/core/structured_chain.hpp>
#include <ordo/kernels/detail/diagonal_leaf.hpp>
#include <ordo/kernels/detail/transposed.hpp>
#include <ordo/kernels/evaluate_structured.hpp>
#include <ordo/kernels/expression.hpp>
#include <ordo/kernels/matrix.hpp>
#include <ordo/platform/shape_text.hpp>

#include <boost/hana/at.hpp>
#include <boost/hana/concat.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/transform.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace ordo {

namespace detail {

// A stored matrix as one operand: its kind, flags, and its role in an X^T X pair (1: the first,
// 2: the second, 0: none), from which the operand list gets the pair's shared source.
template <class Stored, matrix_kind Kind, bool Transposed, bool Inverted, int GramRole = 0>
class structured_leaf {
  static constexpr bool is_diagonal = Kind == matrix_kind::diagonal;  // stored as its n x 1 diagonal

 public:
  using stored_type = Stored;
  using value_type = typename Stored::value_type;
  using execution_space = typename Stored::execution_space;
  static constexpr chain_operand operand{Kind, Transposed, Inverted, 0};
  static constexpr int gram_role = GramRole;
  static constexpr std::size_t static_rows =
      is_diagonal || !Transposed ? Stored::static_rows : Stored::static_cols;
  static constexpr std::size_t static_cols =
      is_diagonal ? Stored::static_rows : Transposed ? Stored::static_rows : Stored::static_cols;
  using shape_type = shape<static_rows, static_cols>;

  explicit structured_leaf(const Stored& stored) : stored_(stored) {}
  std::size_t rows() const noexcept { return is_diagonal || !Transposed ? stored_.rows() : stored_.cols(); }
  std::size_t cols() const noexcept { return is_diagonal ? stored_.rows() : Transposed ? stored_.rows() : stored_.cols(); }
  const Stored& stored() const noexcept { return stored_; }
  // What ordo::evaluate reads for this operand.
  template <auto Model>
  const Stored& materialize() const noexcept {
    return stored_;
  }

 private:
  Stored stored_;
};

// A product evaluated first, then used as one operand of the given kind.
template <class Expression, matrix_kind Kind, bool Transposed, bool Inverted>
class structured_result {
  using result_type = typename Expression::result_type;

 public:
  using expression_type = Expression;
  using value_type = typename Expression::value_type;
  using execution_space = typename Expression::execution_space;
  static constexpr chain_operand operand{Kind, Transposed, Inverted, 0};
  static constexpr int gram_role = 0;
  static constexpr std::size_t static_rows = Transposed ? result_type::static_cols : result_type::static_rows;
  static constexpr std::size_t static_cols = Transposed ? result_type::static_rows : result_type::static_cols;
  using shape_type = shape<static_rows, static_cols>;

  explicit structured_result(const Expression& e) : expression_(e) {}
  std::size_t rows() const { return Transposed ? expression_.cols() : expression_.rows(); }
  std::size_t cols() const { return Transposed ? expression_.rows() : expression_.cols(); }
  const Expression& expression() const noexcept { return expression_; }
  template <auto Model>
  result_type materialize() const {
    result_type result = uninitialized_matrix<result_type>(expression_.rows(), expression_.cols());
    expression_.template evaluate_into<Model>(result);
    return result;
  }

 private:
  Expression expression_;
};

template <class T>
inline constexpr bool is_structured_part_v = false;
template <class S, matrix_kind K, bool T, bool I, int G>
inline constexpr bool is_structured_part_v<structured_leaf<S, K, T, I, G>> = true;
template <class E, matrix_kind K, bool T, bool I>
inline constexpr bool is_structured_part_v<structured_result<E, K, T, I>> = true;

}  // namespace detail

template <class... Parts>
class structured_expression;

template <class T>
inline constexpr bool is_structured_expression_v = false;
template <class... Parts>
inline constexpr bool is_structured_expression_v<structured_expression<Parts...>> = true;

namespace detail {

// The operand list of parts: each X^T X pair gets its own source, the first operand's position + 1.
template <class... Parts>
constexpr std::array<chain_operand, sizeof...(Parts)> structured_operands() {
  std::array<chain_operand, sizeof...(Parts)> operands{Parts::operand...};
  constexpr int roles[] = {Parts::gram_role...};
  for (std::size_t i = 0; i < sizeof...(Parts); ++i) {
    if (roles[i] == 1) operands[i].source = static_cast<std::uint32_t>(i + 1);
    if (roles[i] == 2 && i > 0) operands[i].source = static_cast<std::uint32_t>(i);
  }
  return operands;
}

template <class First, class... Rest>
constexpr std::array<std::size_t, 2 + sizeof...(Rest)> structured_static_dims() {
  return {First::static_rows, First::static_cols, Rest::static_cols...};
}

// Model: the cost model (core/cost_model.hpp), a structural value, so a template argument.
template <auto Model, class... Parts>
inline constexpr auto structured_plan_v =
    plan_structured_chain(structured_static_dims<Parts...>(), structured_operands<Parts...>(), Model);

// Kernels of a part that is evaluated first (its own plan's), empty for a stored matrix.
template <auto Model, class Part>
constexpr std::string_view inner_kernels() {
  if constexpr (requires { typename Part::expression_type; }) {
    return Part::expression_type::template kernels<Model>();
  } else {
    return {};
  }
}

template <auto Model, class... Parts>
inline constexpr auto structured_kernels_v = [] {
  fixed_string<48 * (sizeof...(Parts) + 1) * 4> text;
  const auto add = [&](std::string_view k) {
    if (k.empty()) return;
    if (text.length > 0) text.append(" ");
    text.append(k);
  };
  (add(inner_kernels<Model, Parts>()), ...);
  add(structured_plan_v<Model, Parts...>.kernels());
  return text;
}();

// The parts a factor contributes to a product.
template <class T>
auto parts_of(const T& x) {
  if constexpr (is_structured_expression_v<T>) {
    return x.parts();
  } else if constexpr (is_structured_part_v<T>) {
    return boost::hana::make_tuple(x);
  } else if constexpr (is_transposed_v<T>) {
    using stored = std::remove_cvref_t<decltype(x.matrix())>;
    return boost::hana::make_tuple(structured_leaf<stored, matrix_kind::general, true, false>(x.matrix()));
  } else if constexpr (is_diagonal_v<T>) {
    using stored = std::remove_cvref_t<decltype(x.vector())>;
    return boost::hana::make_tuple(structured_leaf<stored, matrix_kind::diagonal, false, false>(x.vector()));
  } else {
    return boost::hana::make_tuple(structured_leaf<T, matrix_kind::general, false, false>(x));
  }
}

template <class T>
concept structured_factor = is_structured_expression_v<T> || is_structured_part_v<T>;
template <class T>
concept structured_multiplicand = structured_factor<T> || any_matrix<T> || is_transposed_v<T> || is_diagonal_v<T>;

}  // namespace detail

// The lazy product of structured parts, planned as one generalized chain.
template <class... Parts>
class structured_expression {
  using first = std::tuple_element_t<0, std::tuple<Parts...>>;
  using last = std::tuple_element_t<sizeof...(Parts) - 1, std::tuple<Parts...>>;
  static constexpr std::size_t count = sizeof...(Parts);

 public:
  using value_type = typename first::value_type;
  using execution_space = typename first::execution_space;
  using result_type = matrix<value_type, first::static_rows, last::static_cols, execution_space>;
  using shape_type = shape<first::static_rows, last::static_cols>;
  static constexpr bool is_static = ((Parts::static_rows != dynamic && Parts::static_cols != dynamic) && ...);

  explicit structured_expression(boost::hana::tuple<Parts...> parts) : parts_(std::move(parts)) {}

  // The plan (compile time when static) and its kernels: the evaluated-first parts' kernels, then
  // the chain's; its order. Model: the cost model, predicted time by default
  // (decltype(e)::kernels<ordo::cost_model::flops{}>() for the flop count's plan).
  template <auto Model = cost_model::predicted_time{}>
    requires is_static && chain_cost_model<std::remove_cvref_t<decltype(Model)>>
  static constexpr std::string_view kernels() {
    return detail::structured_kernels_v<Model, Parts...>.view();
  }
  template <auto Model = cost_model::predicted_time{}>
    requires is_static && chain_cost_model<std::remove_cvref_t<decltype(Model)>>
  static constexpr order_view order() {
    return detail::structured_plan_v<Model, Parts...>.order();
  }
  template <auto Model = cost_model::predicted_time{}>
    requires chain_cost_model<std::remove_cvref_t<decltype(Model)>>
  auto plan() const {
    if constexpr (is_static) {
      return detail::structured_plan_v<Model, Parts...>;
    } else {
      std::array<std::size_t, count + 1> dims{};
      std::size_t i = 0;
      boost::hana::for_each(parts_, [&](const auto& p) { dims[i++] = p.rows(); });
      dims[count] = cols();
      static constexpr auto operands = detail::structured_operands<Parts...>();
      return plan_structured_chain(std::span<const std::size_t>(dims), std::span<const chain_operand>(operands), Model);
    }
  }
  std::size_t rows() const { return boost::hana::at_c<0>(parts_).rows(); }
  std::size_t cols() const { return boost::hana::at_c<count - 1>(parts_).cols(); }
  const boost::hana::tuple<Parts...>& parts() const noexcept { return parts_; }

  // Evaluates into m: the evaluated-first parts, then the chain (ordo::evaluate), each planned
  // under Model.
  template <auto Model = cost_model::predicted_time{}, any_matrix M>
  void evaluate_into(const M& m) const {
    evaluate_into<Model>(execution_space{}, m);
  }
  // The same with the chain's kernels on an instance of the matrices' space (the evaluated-first
  // parts run on the default instance).
  template <auto Model = cost_model::predicted_time{}, any_matrix M>
  void evaluate_into(const execution_space& space, const M& m) const {
    const auto stored = boost::hana::transform(parts_, [](const auto& p) { return p.template materialize<Model>(); });
    const auto planned = plan<Model>();
    boost::hana::unpack(stored, [&](const auto&... operands) { ordo::evaluate(space, planned, m, operands...); });
  }
  template <any_matrix M>
  operator M() const {
    M result = detail::uninitialized_matrix<M>(rows(), cols());
    evaluate_into(result);
    return result;
  }

 private:
  boost::hana::tuple<Parts...> parts_;
};

// result = e, planned under the predicted-time model; as the dense expressions' ordo::evaluate,
// on the default instance or on a given instance of the matrices' execution space.
template <class... Parts, any_matrix R>
void evaluate(const structured_expression<Parts...>& e, const R& result) {
  e.evaluate_into(result);
}
template <class ExecutionSpace, class... Parts, any_matrix R>
  requires Kokkos::is_execution_space<ExecutionSpace>::value
void evaluate(const ExecutionSpace& space, const structured_expression<Parts...>& e, const R& result) {
  static_assert(std::is_same_v<ExecutionSpace, typename structured_expression<Parts...>::execution_space>,
                "ordo::evaluate(space, structured product, result): space must be an instance of the matrices' "
                "execution space");
  e.evaluate_into(space, result);
}

// a * b where either factor is structured: one structured_expression of both's parts. Mixed
// scalar types or spaces and static extents that do not conform fail to compile with
// operator*'s messages (kernels/expression.hpp); dynamic extents that do not conform throw
// std::invalid_argument naming both shapes.
template <class Left, class Right>
  requires detail::structured_multiplicand<Left> && detail::structured_multiplicand<Right> &&
           (detail::structured_factor<Left> || detail::structured_factor<Right>)
auto operator*(const Left& left, const Right& right) {
  using left_shape = shape_of_t<Left>;
  using right_shape = shape_of_t<Right>;
  using left_part = std::remove_cvref_t<decltype(boost::hana::at_c<0>(detail::parts_of(left)))>;
  using right_part = std::remove_cvref_t<decltype(boost::hana::at_c<0>(detail::parts_of(right)))>;
  using left_value = typename left_part::value_type;
  using right_value = typename right_part::value_type;
  using left_space = typename left_part::execution_space;
  using right_space = typename right_part::execution_space;
  if constexpr (!diagnostic::product_is_valid<left_value, right_value, left_space, right_space, left_shape,
                                              right_shape>()) {
    return diagnostic::invalid_product{};
  } else {
    if (left.cols() != right.rows()) detail::throw_inner_extents_mismatch(left.rows(), left.cols(), right.rows(), right.cols());
    return boost::hana::unpack(boost::hana::concat(detail::parts_of(left), detail::parts_of(right)),
                               [](auto... p) { return structured_expression<decltype(p)...>(boost::hana::make_tuple(p...)); });
  }
}

namespace detail {

// A kind given to a matrix (a stored operand) or to a structured product (evaluated first).
template <matrix_kind Kind, class T>
auto with_kind(const T& x) {
  if constexpr (any_matrix<T>) {
    return structured_leaf<T, Kind, false, false>(x);
  } else {
    static_assert(is_structured_expression_v<T>,
                  "ordo::lower/upper/symmetric/spd/...(x) requires x to be an ordo::matrix or a structured product "
                  "(for X^T X write ordo::gram(X))");
    return structured_result<T, Kind, false, false>(x);
  }
}

}  // namespace detail

namespace detail {
// ordo::lower(x) and its siblings: one callable per kind.
template <matrix_kind Kind>
struct kind_marker {
  template <class T>
  auto operator()(const T& x) const {
    return with_kind<Kind>(x);
  }
};
}  // namespace detail

inline constexpr detail::kind_marker<matrix_kind::general> general{};
inline constexpr detail::kind_marker<matrix_kind::symmetric> symmetric{};
inline constexpr detail::kind_marker<matrix_kind::spd> spd{};
inline constexpr detail::kind_marker<matrix_kind::lower> lower{};
inline constexpr detail::kind_marker<matrix_kind::upper> upper{};
inline constexpr detail::kind_marker<matrix_kind::unit_lower> unit_lower{};
inline constexpr detail::kind_marker<matrix_kind::unit_upper> unit_upper{};
inline constexpr detail::kind_marker<matrix_kind::orthogonal> orthogonal{};

// X^T X of one stored X: SYRK when the planner multiplies the pair.
template <any_matrix M>
auto gram(const M& x) {
  using first = detail::structured_leaf<M, matrix_kind::general, true, false, 1>;
  using second = detail::structured_leaf<M, matrix_kind::general, false, false, 2>;
  return structured_expression<first, second>(boost::hana::make_tuple(first(x), second(x)));
}

// The inverse of a marked operand, a matrix (general), or a diagonal: solved, never formed.
template <class S, matrix_kind K, bool T, bool I, int G>
auto inverse(const detail::structured_leaf<S, K, T, I, G>& x) {
  static_assert(G == 0, "ordo::inverse(x): x is half of ordo::gram(X); give the product a kind first: "
                        "ordo::inverse(ordo::spd(ordo::gram(X)))");
  return detail::structured_leaf<S, K, T, !I>(x.stored());
}
template <class E, matrix_kind K, bool T, bool I>
auto inverse(const detail::structured_result<E, K, T, I>& x) {
  return detail::structured_result<E, K, T, !I>(x.expression());
}
template <any_matrix M>
auto inverse(const M& m) {
  return detail::structured_leaf<M, matrix_kind::general, false, true>(m);
}
template <class Vector>
auto inverse(const diagonal_matrix<Vector>& d) {
  return detail::structured_leaf<Vector, matrix_kind::diagonal, false, true>(d.vector());
}

template <class S, matrix_kind K, bool T, bool I>
auto transpose(const detail::structured_leaf<S, K, T, I>& x) {
  return detail::structured_leaf<S, K, !T, I>(x.stored());
}
template <class E, matrix_kind K, bool T, bool I>
auto transpose(const detail::structured_result<E, K, T, I>& x) {
  return detail::structured_result<E, K, !T, I>(x.expression());
}

}  // namespace ordo

#endif
