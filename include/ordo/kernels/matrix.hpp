#ifndef ORDO_KERNELS_MATRIX_HPP
#define ORDO_KERNELS_MATRIX_HPP

// ordo::matrix: a row-major Kokkos::View with static or dynamic extents that names its shape, so
// the chain planner accepts it directly.

#include <ordo/platform/shape_text.hpp>
#include <ordo/core/scalar_traits.hpp>
#include <ordo/core/shape.hpp>
#include <ordo/kernels/detail/huge_pages.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <initializer_list>
#include <ostream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ordo {

// Asks a matrix constructor to leave the elements uninitialized: for results that are about to be
// overwritten, a zero fill costs a pass over memory (and, on OpenMP, wakes threads that then spin
// while BLAS runs on the same cores).
struct uninitialized_t {
  explicit uninitialized_t() = default;
};
inline constexpr uninitialized_t uninitialized{};

// Asks a matrix constructor to use memory the caller owns, row-major, without copying:
// ordo::matrix<double, 2, 3> m(ordo::borrowed, pointer) or (ordo::borrowed, std_vector, ...).
// The caller keeps the memory alive while the matrix (or a copy of it) is used.
struct borrowed_t {
  explicit borrowed_t() = default;
};
inline constexpr borrowed_t borrowed{};

// A Rows x Cols matrix of T in the memory of ExecutionSpace. Extents given as ordo::dynamic are
// set at construction. Copies share the data, like Kokkos::View.
template <class T, std::size_t Rows, std::size_t Cols, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
class matrix {
 public:
  using value_type = T;
  using execution_space = ExecutionSpace;
  using memory_space = typename ExecutionSpace::memory_space;
  using view_type = Kokkos::View<T**, Kokkos::LayoutRight, memory_space>;
  using shape_type = ordo::shape<Rows, Cols>;
  static constexpr std::size_t static_rows = Rows;
  static constexpr std::size_t static_cols = Cols;

  static_assert(std::is_arithmetic_v<T> || floating_storage<T>,
                "ordo::matrix<T, ...> requires an arithmetic scalar type T or a storage type ordo::scalar_traits "
                "describes");

  // Allocates (zero-initialized). The constructor takes exactly the dynamic extents, rows first.
  matrix()
    requires shape_type::is_static
      : view_(allocate_zeroed(Rows, Cols)) {}

  // An empty matrix (its dynamic extents 0) that the first product assigned to it sizes:
  // ordo::matrix<double, ordo::dynamic, ordo::dynamic> m; m = a * b;
  matrix()
    requires(!shape_type::is_static)
      : view_(allocate(Rows == dynamic ? 0 : Rows, Cols == dynamic ? 0 : Cols)) {}

  // Row by row: ordo::matrix<double, 2, 3> m{{1, 2, 3}, {4, 5, 6}}; dynamic extents are taken from
  // the list, static ones must match it (std::invalid_argument otherwise), and rows must be equal.
  matrix(std::initializer_list<std::initializer_list<T>> rows)
      : view_(allocate(rows.size(), rows.size() == 0 ? 0 : rows.begin()->size())) {
    check_static_extents("ordo::matrix{{...}}: the list");
    // Host-accessible memory takes the elements in place: a mirror and deep_copy would
    // instantiate Kokkos' copy kernels for nothing (a third of a small program's compile time).
    if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible) {
      copy_rows(rows, view_);
    } else {
      auto host = Kokkos::create_mirror_view(view_);
      copy_rows(rows, host);
      Kokkos::deep_copy(view_, host);
    }
  }

  // The caller's row-major memory in memory_space, not copied (see borrowed_t); extents as for
  // allocation.
  matrix(borrowed_t, T* data)
    requires shape_type::is_static
      : view_(borrow(data, Rows, Cols)) {}
  matrix(borrowed_t, T* data, std::size_t dynamic_extent)
    requires(shape_type::dynamic_extent_count == 1)
      : view_(borrow(data, Rows == dynamic ? dynamic_extent : Rows, Cols == dynamic ? dynamic_extent : Cols)) {}
  matrix(borrowed_t, T* data, std::size_t rows, std::size_t cols)
    requires(shape_type::dynamic_extent_count == 2)
      : view_(borrow(data, rows, cols)) {}
  // A std::vector's elements, row-major; its size must be rows x cols (std::invalid_argument).
  template <class... Extents>
    requires(sizeof...(Extents) == shape_type::dynamic_extent_count &&
             bool(Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible))
  matrix(borrowed_t, std::vector<T>& elements, Extents... dynamic_extents)
      : matrix(borrowed, elements.data(), static_cast<std::size_t>(dynamic_extents)...) {
    if (elements.size() != view_.size()) {
      throw std::invalid_argument("ordo::matrix(borrowed, vector): the vector has " + std::to_string(elements.size()) +
                                  " elements, the matrix is " + detail::shape_text(rows(), cols()));
    }
  }

  explicit matrix(std::size_t dynamic_extent)
    requires(shape_type::dynamic_extent_count == 1)
      : view_(allocate_zeroed(Rows == dynamic ? dynamic_extent : Rows, Cols == dynamic ? dynamic_extent : Cols)) {}

  matrix(std::size_t rows, std::size_t cols)
    requires(shape_type::dynamic_extent_count == 2)
      : view_(allocate_zeroed(rows, cols)) {}

  // The same, without initializing the elements: ordo::matrix<T, R, C> m(ordo::uninitialized, ...).
  explicit matrix(uninitialized_t)
    requires shape_type::is_static
      : view_(allocate(Rows, Cols)) {}

  matrix(uninitialized_t, std::size_t dynamic_extent)
    requires(shape_type::dynamic_extent_count == 1)
      : view_(allocate(Rows == dynamic ? dynamic_extent : Rows, Cols == dynamic ? dynamic_extent : Cols)) {}

  matrix(uninitialized_t, std::size_t rows, std::size_t cols)
    requires(shape_type::dynamic_extent_count == 2)
      : view_(allocate(rows, cols)) {}

  // Wraps an existing View without copying. Its extents must match the static ones.
  explicit matrix(view_type view) : view_(std::move(view)) { check_static_extents("ordo::matrix: the View"); }

  const view_type& view() const noexcept { return view_; }
  std::size_t rows() const noexcept { return view_.extent(0); }
  std::size_t cols() const noexcept { return view_.extent(1); }
  shape_type shape() const noexcept {
    if constexpr (shape_type::dynamic_extent_count == 0) {
      return shape_type{};
    } else if constexpr (shape_type::dynamic_extent_count == 1) {
      return shape_type{Rows == dynamic ? rows() : cols()};
    } else {
      return shape_type{rows(), cols()};
    }
  }

  // Writes a lazy product (ordo::chain, a * b, ...) into this matrix's elements, which every copy
  // of the matrix shares; the product may read this matrix (a = a * b), and is then computed into
  // a temporary first (docs/expressions.md). Assigning a matrix shares its elements instead, like
  // Kokkos::View.
  template <class Expression>
    requires requires(const Expression& e, const matrix& m) { e.evaluate_into(m); }
  matrix& operator=(const Expression& expression) {
    // An empty matrix with dynamic extents takes the product's extents first (as Eigen resizes);
    // a matrix with elements keeps them, and shares them with its copies.
    if constexpr (!shape_type::is_static) {
      if (view_.size() == 0 && (rows() != expression.rows() || cols() != expression.cols())) {
        view_ = allocate(expression.rows(), expression.cols());
      }
    }
    expression.evaluate_into(*this);
    return *this;
  }

  // Adds (subtracts) a lazy product or sum into this matrix's elements: C += A * B runs the last
  // GEMM with beta = 1, no temporary of C's size (unless the product reads C).
  template <class Expression>
    requires requires(const Expression& e, const matrix& m) { e.accumulate_into(m, 1); }
  matrix& operator+=(const Expression& expression) {
    expression.accumulate_into(*this, 1);
    return *this;
  }
  template <class Expression>
    requires requires(const Expression& e, const matrix& m) { e.accumulate_into(m, -1); }
  matrix& operator-=(const Expression& expression) {
    expression.accumulate_into(*this, -1);
    return *this;
  }

  // Element access where memory_space is accessible (host code for host spaces, kernels).
  KOKKOS_INLINE_FUNCTION T& operator()(std::size_t i, std::size_t j) const { return view_(i, j); }

 private:
  static std::string default_label() { return "ordo::matrix"; }

  // Host allocations of 4 MiB and more ask for huge pages before anything touches them
  // (kernels/detail/huge_pages.hpp); zeros are written after that.
  // Two functions, not a flag: the fill is a Kokkos kernel, instantiated only where a constructor
  // zeroes.
  static view_type allocate(std::size_t rows, std::size_t cols) {
    view_type view(Kokkos::view_alloc(Kokkos::WithoutInitializing, default_label()), rows, cols);
    if constexpr (std::is_same_v<memory_space, Kokkos::HostSpace>) {
      detail::advise_huge_pages(view.data(), view.span() * sizeof(T));
    }
    return view;
  }
  static view_type allocate_zeroed(std::size_t rows, std::size_t cols) {
    view_type view = allocate(rows, cols);
    Kokkos::deep_copy(view, T(0));
    return view;
  }

  static view_type borrow(T* data, std::size_t rows, std::size_t cols) {
    return view_type(Kokkos::View<T**, Kokkos::LayoutRight, memory_space, Kokkos::MemoryUnmanaged>(data, rows, cols));
  }

  template <class HostView>
  void copy_rows(std::initializer_list<std::initializer_list<T>> rows, const HostView& host) const {
    std::size_t i = 0;
    for (const auto& row : rows) {
      if (row.size() != view_.extent(1)) {
        throw std::invalid_argument("ordo::matrix{{...}}: row " + std::to_string(i) + " has " +
                                    std::to_string(row.size()) + " elements, row 0 has " +
                                    std::to_string(view_.extent(1)));
      }
      std::size_t j = 0;
      for (const T& value : row) host(i, j++) = value;
      ++i;
    }
  }

  void check_static_extents(const char* what) const {
    if ((Rows != dynamic && view_.extent(0) != Rows) || (Cols != dynamic && view_.extent(1) != Cols)) {
      throw std::invalid_argument(std::string(what) + " is " + detail::shape_text(view_.extent(0), view_.extent(1)) +
                                  " but the matrix type is " + detail::shape_text(Rows, Cols));
    }
  }

  view_type view_;
};

namespace detail {

// A matrix of type M, uninitialized, with the given extents for its dynamic ones (its static
// extents are M's; the caller has checked that they agree): what products and sums evaluate into.
template <class M>
M uninitialized_matrix(std::size_t rows, std::size_t cols) {
  using shape = typename M::shape_type;
  if constexpr (shape::is_static) {
    return M{uninitialized};
  } else if constexpr (shape::dynamic_extent_count == 2) {
    return M{uninitialized, rows, cols};
  } else {
    return M{uninitialized, shape::static_rows == dynamic ? rows : cols};
  }
}

}  // namespace detail

// Prints the elements row by row, one row per line, copied to the host first:
//   [[1, 2, 3],
//    [4, 5, 6]]
template <class T, std::size_t Rows, std::size_t Cols, class ExecutionSpace>
std::ostream& operator<<(std::ostream& out, const matrix<T, Rows, Cols, ExecutionSpace>& m) {
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.view());
  out << '[';
  for (std::size_t i = 0; i < m.rows(); ++i) {
    out << (i == 0 ? "[" : ",\n [");
    for (std::size_t j = 0; j < m.cols(); ++j) {
      if (j > 0) out << ", ";
      if constexpr (std::is_arithmetic_v<T>) {
        out << host(i, j);
      } else {
        out << static_cast<float>(host(i, j));  // ordo::half, ordo::bfloat16: their value as float
      }
    }
    out << ']';
  }
  return out << ']';
}

// A column vector of N elements: an N x 1 matrix. Row vectors are ordo::transpose(v).
template <class T, std::size_t N, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
using vector = matrix<T, N, 1, ExecutionSpace>;

template <class T>
inline constexpr bool is_matrix_v = false;

template <class T, std::size_t Rows, std::size_t Cols, class ExecutionSpace>
inline constexpr bool is_matrix_v<matrix<T, Rows, Cols, ExecutionSpace>> = true;

// Any ordo::matrix, whatever its scalar type, extents and execution space.
template <class T>
concept any_matrix = is_matrix_v<std::remove_cvref_t<T>>;

}  // namespace ordo

#endif
