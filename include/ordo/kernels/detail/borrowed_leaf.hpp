#ifndef ORDO_KERNELS_DETAIL_BORROWED_LEAF_HPP
#define ORDO_KERNELS_DETAIL_BORROWED_LEAF_HPP

// What a product written with * holds of an lvalue ordo::matrix: a pointer to it, as Eigen's
// expressions hold plain matrices by reference. Building a * b * c then copies no Kokkos View (no
// reference counting) and destroys nothing, so each operator* compiles to a few pointer moves; a
// temporary matrix is moved into the expression instead, and transposes and diagonals are copied
// (kernels/expression.hpp's leaves_of). The matrices must outlive the expression: `auto e = a * b;`
// reads a and b when it is evaluated (docs/expressions.md, "Lifetimes").

#include <cstddef>
#include <type_traits>

namespace ordo::detail {

template <class Leaf>
class borrowed_leaf {
 public:
  using leaf_type = Leaf;
  using value_type = typename Leaf::value_type;
  using execution_space = typename Leaf::execution_space;
  using memory_space = typename Leaf::memory_space;
  using shape_type = typename Leaf::shape_type;
  static constexpr std::size_t static_rows = Leaf::static_rows;
  static constexpr std::size_t static_cols = Leaf::static_cols;

  explicit borrowed_leaf(const Leaf& leaf) noexcept : leaf_(&leaf) {}

  const Leaf& get() const noexcept { return *leaf_; }
  std::size_t rows() const noexcept { return leaf_->rows(); }
  std::size_t cols() const noexcept { return leaf_->cols(); }
  decltype(auto) view() const { return leaf_->view(); }

 private:
  const Leaf* leaf_;
};

// The leaf a stored leaf stands for: itself, or what a borrowed_leaf points to.
template <class T>
struct unborrowed {
  using type = T;
};
template <class Leaf>
struct unborrowed<borrowed_leaf<Leaf>> {
  using type = Leaf;
};
template <class T>
using unborrowed_t = typename unborrowed<std::remove_cvref_t<T>>::type;

}  // namespace ordo::detail

#endif
