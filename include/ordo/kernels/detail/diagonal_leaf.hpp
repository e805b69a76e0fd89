#ifndef ORDO_KERNELS_DETAIL_DIAGONAL_LEAF_HPP
#define ORDO_KERNELS_DETAIL_DIAGONAL_LEAF_HPP

// ordo::diagonal_matrix, the type of ordo::diagonal(d): a leaf of products (detail/transposed.hpp's
// product_leaf). The public header is kernels/diagonal.hpp, which adds the expression operators.

#include <ordo/core/shape.hpp>
#include <ordo/platform/shape_text.hpp>
#include <ordo/kernels/detail/one_leaf_product.hpp>
#include <ordo/kernels/matrix.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ordo {

namespace diagnostic {

// ordo::diagonal(d)'s error (kernels/diagonal.hpp) carries d's shape in its condition, as
// operator*'s errors do.
template <auto Rows, auto Cols>
struct diagonal_operand_is {
  static constexpr bool a_column_vector = false;
};

}  // namespace diagnostic

// A matrix that can be a column vector: one column, or a dynamic column count (checked at run time).
template <class M>
concept column_vector_like = any_matrix<M> && (std::remove_cvref_t<M>::static_cols == 1 ||
                                               std::remove_cvref_t<M>::static_cols == dynamic);

// diag(d) for an ordo::matrix d with one column (ordo::vector<T, N> or a dynamic matrix n x 1).
template <column_vector_like Vector>
class diagonal_matrix : public detail::converts_as_product<diagonal_matrix<Vector>> {
 public:
  using vector_type = std::remove_cvref_t<Vector>;
  using value_type = typename vector_type::value_type;
  using execution_space = typename vector_type::execution_space;
  using memory_space = typename vector_type::memory_space;
  using shape_type = diagonal_shape<vector_type::static_rows>;
  static constexpr std::size_t static_rows = vector_type::static_rows;
  static constexpr std::size_t static_cols = vector_type::static_rows;
  // Throws std::invalid_argument when d's dynamic column count is not 1.
  explicit diagonal_matrix(const vector_type& d) : vector_(d) {
    if (d.cols() != 1) {
      throw std::invalid_argument("ordo::diagonal(d): d is " + detail::shape_text(d.rows(), d.cols()) +
                                  " (a diagonal is a column vector, n x 1)");
    }
  }

  // The diagonal's elements (shared, as copies of a matrix share them).
  const vector_type& vector() const noexcept { return vector_; }
  std::size_t rows() const noexcept { return vector_.rows(); }
  std::size_t cols() const noexcept { return vector_.rows(); }
  // The diagonal as an n x 1 View: what the evaluator reads.
  const typename vector_type::view_type& view() const noexcept { return vector_.view(); }

 private:
  vector_type vector_;
};

template <class T>
inline constexpr bool is_diagonal_v = false;
template <class Vector>
inline constexpr bool is_diagonal_v<diagonal_matrix<Vector>> = true;

// A diagonal matrix is its own transpose.
template <class Vector>
const diagonal_matrix<Vector>& transpose(const diagonal_matrix<Vector>& d) noexcept {
  return d;
}

}  // namespace ordo

#endif
