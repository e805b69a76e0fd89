#ifndef ORDO_CORE_SHAPE_HPP
#define ORDO_CORE_SHAPE_HPP

// Matrix shapes with static or dynamic extents. Pure C++20: no Kokkos.

#include <cstddef>
#include <span>
#include <type_traits>

namespace ordo {

// Marks an extent known only at run time; the same value as std::dynamic_extent.
inline constexpr std::size_t dynamic = std::dynamic_extent;

// What the planner knows about an operand's elements besides its extents. A diagonal operand is
// square and stored as its diagonal: a product with it scales rows or columns (rows x cols
// multiplications, not rows x inner x cols), and a product of two diagonals is diagonal.
enum class operand_structure : unsigned char { general, diagonal };

namespace detail {

// The stored extents of a shape with one or two dynamic extents; the constructor takes exactly
// those, rows first.
template <std::size_t Rows, std::size_t Cols, std::size_t DynamicExtents>
class shape_extents;

template <std::size_t Rows, std::size_t Cols>
class shape_extents<Rows, Cols, 1> {
 public:
  constexpr explicit shape_extents(std::size_t first_dynamic) noexcept : extent_(first_dynamic) {}
  constexpr std::size_t rows() const noexcept { return Rows == dynamic ? extent_ : Rows; }
  constexpr std::size_t cols() const noexcept { return Cols == dynamic ? extent_ : Cols; }

 private:
  std::size_t extent_;
};

template <std::size_t Rows, std::size_t Cols>
class shape_extents<Rows, Cols, 2> {
 public:
  constexpr shape_extents(std::size_t rows, std::size_t cols) noexcept : rows_(rows), cols_(cols) {}
  constexpr std::size_t rows() const noexcept { return rows_; }
  constexpr std::size_t cols() const noexcept { return cols_; }

 private:
  std::size_t rows_;
  std::size_t cols_;
};

}  // namespace detail

// The shape of a Rows x Cols matrix. Extents given as ordo::dynamic are stored; static ones cost
// nothing, so shape<3, 4> is an empty type usable at compile time. The constructor takes exactly
// the dynamic extents, in order (rows before columns).
//
// The static shape is the primary template, with no constructor and nothing stored: a
// type-level chain of 1024 matrices instantiates 1024 shapes, and constrained or inherited
// constructors and a friend operator== in each cost g++ about 0.05 s (docs/compile_time.md).
template <std::size_t Rows, std::size_t Cols>
class shape {
 public:
  static constexpr std::size_t static_rows = Rows;
  static constexpr std::size_t static_cols = Cols;
  static constexpr bool is_static = true;
  static constexpr operand_structure structure = operand_structure::general;
  static constexpr std::size_t dynamic_extent_count = 0;

  constexpr std::size_t rows() const noexcept { return Rows; }
  constexpr std::size_t cols() const noexcept { return Cols; }
};

// A shape with a dynamic extent: the same constants, the extents stored.
template <std::size_t Rows, std::size_t Cols>
  requires(Rows == dynamic || Cols == dynamic)
class shape<Rows, Cols> : public detail::shape_extents<Rows, Cols, std::size_t{Rows == dynamic} + std::size_t{Cols == dynamic}> {
  using extents = detail::shape_extents<Rows, Cols, std::size_t{Rows == dynamic} + std::size_t{Cols == dynamic}>;

 public:
  static constexpr std::size_t static_rows = Rows;
  static constexpr std::size_t static_cols = Cols;
  static constexpr bool is_static = false;
  static constexpr operand_structure structure = operand_structure::general;
  static constexpr std::size_t dynamic_extent_count = std::size_t{Rows == dynamic} + std::size_t{Cols == dynamic};

  using extents::extents;
};

// Equal extents; one function template for every shape rather than a friend in each.
template <std::size_t Rows, std::size_t Cols>
constexpr bool operator==(const shape<Rows, Cols>& a, const shape<Rows, Cols>& b) noexcept {
  return a.rows() == b.rows() && a.cols() == b.cols();
}

// The shape of an Extent x Extent diagonal operand (ordo::diagonal(d)): planned as a scaling.
template <std::size_t Extent>
class diagonal_shape : public shape<Extent, Extent> {
 public:
  static constexpr operand_structure structure = operand_structure::diagonal;
  using shape<Extent, Extent>::shape;
  constexpr explicit diagonal_shape(std::size_t extent) noexcept
    requires(Extent == dynamic)
      : shape<Extent, Extent>(extent, extent) {}
};

namespace diagnostic {

// An extent as compile errors print it: its number, or ordo::diagnostic::dynamic (not
// 18446744073709551615), for the shapes that error messages carry in template arguments.
enum dynamic_extent { dynamic };
template <std::size_t Extent>
inline constexpr auto extent_v = [] {
  if constexpr (Extent == ordo::dynamic) {
    return dynamic;
  } else if constexpr (Extent <= 2147483647u) {
    return static_cast<int>(Extent);  // clang prints an int as "30", a std::size_t as "30UL"
  } else {
    return Extent;
  }
}();

}  // namespace diagnostic

template <class T>
struct shape_of {};

template <std::size_t Rows, std::size_t Cols>
struct shape_of<shape<Rows, Cols>> {
  using type = shape<Rows, Cols>;
};
template <std::size_t Extent>
struct shape_of<diagonal_shape<Extent>> {
  using type = diagonal_shape<Extent>;
};

// Any type that names its shape, like ordo::matrix, is shaped.
template <class T>
  requires requires { typename T::shape_type; }
struct shape_of<T> {
  using type = typename T::shape_type;
};

template <class T>
using shape_of_t = typename shape_of<std::remove_cvref_t<T>>::type;

// A type with a row and a column extent, static or dynamic: ordo::shape or anything naming one.
template <class T>
concept shaped = requires { typename shape_of_t<T>; };

// A shaped type whose extents are both known at compile time.
template <class T>
concept statically_shaped = shaped<T> && shape_of_t<T>::is_static;

}  // namespace ordo

#endif
