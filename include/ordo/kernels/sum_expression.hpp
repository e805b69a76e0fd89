#ifndef ORDO_KERNELS_SUM_EXPRESSION_HPP
#define ORDO_KERNELS_SUM_EXPRESSION_HPP

// Sums and differences of products, each product planned as its own chain and added into the
// result by the BLAS beta:
//
//   y = ordo::transpose(h) * h * x - b;   // h^T (h x) with beta 0, then y -= b
//   r = 2 * a * b + 3 * c * d;            // two planned chains, the second with beta = 1
//   c += a * b;  c -= a * b;              // one chain, its last GEMM with beta = 1
//
// A term is a chain_expression (a matrix or a transpose is a one-leaf chain), so an element-wise
// a + b of matrices of one shape is two one-leaf terms: a copy and an accumulation. The shapes of
// the terms must be equal: at compile time where both are static, at run time otherwise.

#include <ordo/platform/shape_text.hpp>
#include <ordo/kernels/chain_expression.hpp>
#include <ordo/kernels/expression.hpp>
#include <ordo/kernels/matrix.hpp>

#include <boost/hana/for_each.hpp>
#include <boost/hana/front.hpp>
#include <boost/hana/transform.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/concat.hpp>
#include <boost/hana/unpack.hpp>
#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <cstddef>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace ordo {

namespace diagnostic {

template <auto Rows, auto Cols>
struct left_term_is {
  template <class Right>
  static constexpr bool has_its_shape = false;
};
template <auto Rows, auto Cols>
struct right_term_is {};

}  // namespace diagnostic

namespace detail {

// An extent of a sum: the first static one of its terms, else dynamic.
constexpr std::size_t common_extent_of(std::initializer_list<std::size_t> extents) {
  for (const std::size_t e : extents) {
    if (e != dynamic) return e;
  }
  return dynamic;
}

// Whether two static extents contradict each other.
constexpr bool extents_conflict(std::size_t a, std::size_t b) { return a != dynamic && b != dynamic && a != b; }

[[noreturn, gnu::noinline, gnu::cold]] inline void throw_sum_shapes_differ(const char* op, std::size_t left_rows,
                                                                           std::size_t left_cols, std::size_t right_rows,
                                                                           std::size_t right_cols) {
  throw std::invalid_argument(std::string("ordo: ") + op + ": the left term is " + shape_text(left_rows, left_cols) +
                              " and the right term is " + shape_text(right_rows, right_cols) +
                              " (a sum needs equal shapes)");
}

}  // namespace detail

// t1 + t2 + ...: Terms are chain_expressions of one scalar type and execution space.
template <class... Terms>
class sum_expression {
  using first = boost::mp11::mp_front<boost::mp11::mp_list<Terms...>>;

 public:
  using value_type = typename first::value_type;
  using execution_space = typename first::execution_space;
  using scalar_type = typename first::scalar_type;
  using shape_type = ordo::shape<detail::common_extent_of({Terms::shape_type::static_rows...}),
                                 detail::common_extent_of({Terms::shape_type::static_cols...})>;
  using result_type = matrix<value_type, shape_type::static_rows, shape_type::static_cols, execution_space>;
  using terms_type = boost::hana::tuple<Terms...>;

  explicit sum_expression(terms_type terms) : terms_(std::move(terms)) {}

  const terms_type& terms() const noexcept { return terms_; }
  std::size_t rows() const noexcept { return boost::hana::front(terms_).rows(); }
  std::size_t cols() const noexcept { return boost::hana::front(terms_).cols(); }

  result_type make_result() const { return detail::uninitialized_matrix<result_type>(rows(), cols()); }

  // m = the sum: the first term written (beta 0), every further one added (beta 1), on space with
  // the given GEMM backend. A result that a term reads gets the sum in a temporary first: a later
  // term must see m as it was.
  template <any_matrix M>
  void evaluate_into(const M& m, gemm_backend backend = gemm_backend::automatic,
                     const execution_space& space = execution_space{}) const {
    check_result(m);
    if (reads(m)) {
      const result_type temporary = make_result();
      evaluate_into(temporary, backend, space);
      Kokkos::deep_copy(space, m.view(), temporary.view());
      space.fence();
      return;
    }
    bool first_term = true;
    boost::hana::for_each(terms_, [&](const auto& term) {
      detail::evaluate_expression<void>(space, term, m, backend, !first_term);
      first_term = false;
    });
  }

  // m += sign * the sum: every term added with beta 1.
  template <any_matrix M>
  void accumulate_into(const M& m, scalar_type sign = scalar_type(1), gemm_backend backend = gemm_backend::automatic,
                       const execution_space& space = execution_space{}) const {
    check_result(m);
    if (reads(m)) {
      const result_type temporary = make_result();
      evaluate_into(temporary, backend, space);
      chain_expression<result_type>(temporary).accumulate_into(m, sign, backend, space);
      return;
    }
    boost::hana::for_each(terms_, [&](const auto& term) { term.accumulate_into(m, sign, backend, space); });
  }

  // The sum in a new matrix: ordo::matrix<double, 3, 4> r = a * b + c;
  template <any_matrix M>
  operator M() const {
    M result = detail::uninitialized_matrix<M>(rows(), cols());
    evaluate_into(result);
    return result;
  }

 private:
  template <class M>
  void check_result(const M& m) const {
    using given = shape_of_t<M>;
    static_assert(std::is_same_v<typename M::value_type, value_type>,
                  "ordo: a sum's result must have the terms' scalar type");
    static_assert(!detail::extents_conflict(given::static_rows, shape_type::static_rows) &&
                      !detail::extents_conflict(given::static_cols, shape_type::static_cols),
                  "ordo: a sum's result must have the sum's static extents");
    if (m.rows() != rows() || m.cols() != cols()) {
      throw std::invalid_argument("ordo::evaluate: the sum is " + detail::shape_text(rows(), cols()) +
                                  " but the result matrix is " + detail::shape_text(m.rows(), m.cols()));
    }
  }

  // Whether a term reads m's memory.
  template <class M>
  bool reads(const M& m) const {
    bool found = false;
    boost::hana::for_each(terms_, [&](const auto& term) {
      boost::hana::for_each(term.operands(), [&](const auto& operand) {
        found = found || detail::shares_memory(detail::storage_of(operand), m);
      });
    });
    return found;
  }

  terms_type terms_;
};

template <class T>
inline constexpr bool is_sum_expression_v = false;
template <class... Terms>
inline constexpr bool is_sum_expression_v<sum_expression<Terms...>> = true;

// What + and - take: a product, a matrix or transpose, or a sum.
template <class T>
concept sum_operand = product_operand<T> || is_sum_expression_v<std::remove_cvref_t<T>>;

namespace detail {

// The terms of an operand, each multiplied by sign.
template <class Operand, class Scalar>
auto signed_terms(const Operand& operand, Scalar sign) {
  if constexpr (is_sum_expression_v<Operand>) {
    return boost::hana::transform(operand.terms(), [&](const auto& term) { return sign * term; });
  } else {
    return boost::hana::make_tuple(sign * as_product(operand));
  }
}

// A side of + or -: a sum as it is, anything else as a product (named lazily: product_of_t of a
// sum does not exist).
template <class T>
struct product_of {
  using type = product_of_t<T>;
};
template <class T>
using sum_side_t = typename std::conditional_t<is_sum_expression_v<T>, std::type_identity<T>, product_of<T>>::type;

template <class Left, class Right>
auto make_sum(const char* op, const Left& left, const Right& right, int right_sign) {
  using left_product = sum_side_t<Left>;
  using right_product = sum_side_t<Right>;
  using ls = typename left_product::shape_type;
  using rs = typename right_product::shape_type;
  if constexpr (!std::is_same_v<typename left_product::value_type, typename right_product::value_type>) {
    using types = diagnostic::scalar_types<typename left_product::value_type, typename right_product::value_type>;
    static_assert(types::agree, "ordo: a + b and a - b require a and b to have the same scalar type");
    return diagnostic::invalid_product{};
  } else if constexpr (!std::is_same_v<typename left_product::execution_space,
                                       typename right_product::execution_space>) {
    using spaces = diagnostic::execution_spaces<typename left_product::execution_space,
                                                typename right_product::execution_space>;
    static_assert(spaces::agree, "ordo: a + b and a - b require a and b to live in the same execution space");
    return diagnostic::invalid_product{};
  } else if constexpr (extents_conflict(ls::static_rows, rs::static_rows) ||
                       extents_conflict(ls::static_cols, rs::static_cols)) {
    using a_is = diagnostic::left_term_is<diagnostic::extent_v<ls::static_rows>, diagnostic::extent_v<ls::static_cols>>;
    using b_is = diagnostic::right_term_is<diagnostic::extent_v<rs::static_rows>, diagnostic::extent_v<rs::static_cols>>;
    static_assert(a_is::template has_its_shape<b_is>, "ordo: a + b and a - b require a and b of one shape");
    return diagnostic::invalid_product{};
  } else {
    if (left.rows() != right.rows() || left.cols() != right.cols()) {
      throw_sum_shapes_differ(op, left.rows(), left.cols(), right.rows(), right.cols());
    }
    using scalar = typename left_product::scalar_type;
    auto terms = boost::hana::concat(signed_terms(left, scalar(1)), signed_terms(right, scalar(right_sign)));
    return boost::hana::unpack(std::move(terms), [](auto&&... t) {
      return sum_expression<std::remove_cvref_t<decltype(t)>...>(boost::hana::make_tuple(std::move(t)...));
    });
  }
}

}  // namespace detail

// a + b and a - b of products, matrices, transposes and sums of one shape.
template <class Left, class Right>
  requires sum_operand<Left> && sum_operand<Right>
auto operator+(const Left& left, const Right& right) {
  return detail::make_sum("operator+", left, right, 1);
}
template <class Left, class Right>
  requires sum_operand<Left> && sum_operand<Right>
auto operator-(const Left& left, const Right& right) {
  return detail::make_sum("operator-", left, right, -1);
}

// s * (a + b), (a + b) / s and -(a + b): every term scaled.
template <class Scalar, class... Terms>
  requires product_scalar<Scalar>
auto operator*(const Scalar& s, const sum_expression<Terms...>& sum) {
  using scalar = typename sum_expression<Terms...>::scalar_type;
  auto terms = detail::signed_terms(sum, static_cast<scalar>(s));
  return boost::hana::unpack(std::move(terms), [](auto&&... t) {
    return sum_expression<std::remove_cvref_t<decltype(t)>...>(boost::hana::make_tuple(std::move(t)...));
  });
}
template <class Scalar, class... Terms>
  requires product_scalar<Scalar>
auto operator*(const sum_expression<Terms...>& sum, const Scalar& s) {
  return s * sum;
}
template <class Scalar, class... Terms>
  requires product_scalar<Scalar>
auto operator/(const sum_expression<Terms...>& sum, const Scalar& s) {
  using scalar = typename sum_expression<Terms...>::scalar_type;
  static_assert(std::is_floating_point_v<scalar>,
                "ordo: a / s requires a floating-point scalar type (for integers 1 / s would round to 0)");
  return (scalar(1) / static_cast<scalar>(s)) * sum;
}
template <class... Terms>
auto operator-(const sum_expression<Terms...>& sum) {
  return -1 * sum;
}

// Evaluates the sum into result (result = t1 + t2 + ...), each term's products on the given GEMM
// backend; the same on an instance of the terms' execution space.
template <class... Terms, any_matrix R>
void evaluate(const sum_expression<Terms...>& sum, const R& result, gemm_backend backend = gemm_backend::automatic) {
  sum.evaluate_into(result, backend);
}
template <class ExecutionSpace, class... Terms, any_matrix R>
  requires Kokkos::is_execution_space<ExecutionSpace>::value
void evaluate(const ExecutionSpace& space, const sum_expression<Terms...>& sum, const R& result,
              gemm_backend backend = gemm_backend::automatic) {
  static_assert(std::is_same_v<ExecutionSpace, typename sum_expression<Terms...>::execution_space>,
                "ordo::evaluate(space, sum, result): space must be an instance of the terms' execution space");
  sum.evaluate_into(result, backend, space);
}

// c += a and c -= a of a matrix or a transpose (a product or a sum uses the members of matrix).
template <any_matrix C, product_leaf Leaf>
const C& operator+=(const C& c, const Leaf& leaf) {
  detail::as_product(leaf).accumulate_into(c, 1);
  return c;
}
template <any_matrix C, product_leaf Leaf>
const C& operator-=(const C& c, const Leaf& leaf) {
  detail::as_product(leaf).accumulate_into(c, -1);
  return c;
}

}  // namespace ordo

#endif
