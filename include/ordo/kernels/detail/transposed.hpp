#ifndef ORDO_KERNELS_DETAIL_TRANSPOSED_HPP
#define ORDO_KERNELS_DETAIL_TRANSPOSED_HPP

// ordo::transposed, the type of ordo::transpose(m), and product_leaf, what a product's operands
// are. chain_expression.hpp builds on them; kernels/transpose.hpp is the public header, which
// adds chain_expression.hpp for the conversions of a transpose to a matrix (ordo::chain, found
// by argument-dependent lookup when a conversion is instantiated).

#include <ordo/core/shape.hpp>
#include <ordo/kernels/detail/borrowed_leaf.hpp>
#include <ordo/kernels/detail/diagonal_leaf.hpp>
#include <ordo/kernels/detail/one_leaf_product.hpp>
#include <ordo/kernels/matrix.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>

namespace ordo {

// The transpose of the ordo::matrix Matrix: Matrix's cols x rows, reading Matrix's elements.
template <any_matrix Matrix>
class transposed : public detail::converts_as_product<transposed<Matrix>> {
 public:
  using matrix_type = std::remove_cvref_t<Matrix>;
  using value_type = typename matrix_type::value_type;
  using execution_space = typename matrix_type::execution_space;
  using memory_space = typename matrix_type::memory_space;
  using shape_type = ordo::shape<matrix_type::static_cols, matrix_type::static_rows>;
  static constexpr std::size_t static_rows = matrix_type::static_cols;
  static constexpr std::size_t static_cols = matrix_type::static_rows;
  // A View of the transposed elements: the matrix's memory with the strides swapped.
  using view_type = Kokkos::View<value_type**, Kokkos::LayoutStride, memory_space, Kokkos::MemoryUnmanaged>;

  explicit transposed(const matrix_type& m) : matrix_(m) {}

  // The matrix this is the transpose of (sharing its elements).
  const matrix_type& matrix() const noexcept { return matrix_; }
  std::size_t rows() const noexcept { return matrix_.cols(); }
  std::size_t cols() const noexcept { return matrix_.rows(); }

  // Valid while the matrix's elements live (this object keeps them alive).
  view_type view() const {
    const std::size_t r = matrix_.rows(), c = matrix_.cols();
    return view_type(matrix_.view().data(), Kokkos::LayoutStride(c, 1, r, c));
  }

  KOKKOS_INLINE_FUNCTION value_type& operator()(std::size_t i, std::size_t j) const { return matrix_(j, i); }

 private:
  matrix_type matrix_;
};

template <class T>
inline constexpr bool is_transposed_v = false;

template <class M>
inline constexpr bool is_transposed_v<transposed<M>> = true;

// A leaf of a product: an ordo::matrix, the transpose of one, or a diagonal (ordo::diagonal(d)),
// held by the expression or borrowed from an lvalue (detail/borrowed_leaf.hpp).
template <class T>
concept product_leaf = any_matrix<detail::unborrowed_t<T>> || is_transposed_v<detail::unborrowed_t<T>> ||
                       is_diagonal_v<detail::unborrowed_t<T>>;

template <any_matrix M>
transposed<std::remove_cvref_t<M>> transpose(const M& m) {
  return transposed<std::remove_cvref_t<M>>(m);
}

template <class M>
const M& transpose(const transposed<M>& t) noexcept {
  return t.matrix();
}

// The transpose of a borrowed leaf (transpose(a * b) reverses and transposes each leaf): the
// transpose of what it points to, as a value.
template <class Leaf>
auto transpose(const detail::borrowed_leaf<Leaf>& leaf) {
  return std::remove_cvref_t<decltype(transpose(leaf.get()))>(transpose(leaf.get()));
}

}  // namespace ordo

#endif
