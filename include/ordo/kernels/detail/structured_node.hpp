#ifndef ORDO_KERNELS_DETAIL_STRUCTURED_NODE_HPP
#define ORDO_KERNELS_DETAIL_STRUCTURED_NODE_HPP

// One matrix of a structured chain's evaluation (an operand, an intermediate or the result) as
// both backends see it (structured_host_kernels.hpp, structured_portable_kernels.hpp): a
// column-major S with leading dimension ld, or S^T, the way blas_operand.hpp describes Views; an
// ordo::matrix (row-major) is S^T. The element accessors are device functions: the portable
// kernels read nodes in GPU code.

#include <ordo/core/config.hpp>
#include <ordo/core/matrix_kind.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace ordo::detail {

inline constexpr std::size_t not_an_operand = ~std::size_t{0};

template <class T>
struct structured_node {
  T* data = nullptr;
  std::size_t rows = 0, cols = 0, ld = 1;
  bool transposed = false;  // the node is S^T
  matrix_kind kind = matrix_kind::general;
  bool diagonal_vector = false;  // stored as its diagonal: element i at data[i]
  bool clean = true;             // a triangular node holds zeros outside its triangle (not a user's leaf)
  std::size_t operand = not_an_operand;  // which operand it is, for error messages
  matrix_kind declared = matrix_kind::general;  // the operand's kind as the user declared it (messages)

  // Where element (i, j) lives (not for a diagonal stored as its diagonal).
  ORDO_HOST_DEVICE std::size_t offset(std::size_t i, std::size_t j) const noexcept {
    return transposed ? j + i * ld : i + j * ld;
  }
  ORDO_HOST_DEVICE T at(std::size_t i, std::size_t j) const noexcept {
    if (diagonal_vector) return i == j ? data[i] : T(0);
    return data[offset(i, j)];
  }
  // As a triangular operand reads it: zero outside its triangle, one on a unit diagonal.
  ORDO_HOST_DEVICE T masked_at(std::size_t i, std::size_t j) const noexcept {
    if (is_triangular(kind)) {
      if (is_lower_family(kind) ? j > i : j < i) return T(0);
      if (i == j && (kind == matrix_kind::unit_lower || kind == matrix_kind::unit_upper)) return T(1);
    }
    return at(i, j);
  }
  ORDO_HOST_DEVICE structured_node flipped() const noexcept {
    structured_node t = *this;
    t.rows = cols, t.cols = rows, t.transposed = !transposed, t.kind = transposed_kind(kind);
    return t;
  }
  ORDO_HOST_DEVICE bool unit_diagonal() const noexcept {
    return kind == matrix_kind::unit_lower || kind == matrix_kind::unit_upper;
  }
  // BLAS's view of S: which triangle it stores, and whether the node is its transpose.
  char uplo() const noexcept { return is_lower_family(kind) != transposed ? 'L' : 'U'; }
  char trans() const noexcept { return transposed ? 'T' : 'N'; }
  char unit() const noexcept { return unit_diagonal() ? 'U' : 'N'; }
  int blas_ld() const noexcept { return static_cast<int>(ld); }
};

// x scaled by a diagonal entry d: x d, or x / d for an inverted diagonal (a division, not a
// multiplication by a rounded reciprocal: docs/structured_chains.md). Both backends use it.
template <class C>
ORDO_HOST_DEVICE C apply_diagonal(C x, C d, bool inverted) noexcept {
  return inverted ? x / d : d * x;
}

// The product of two diagonal entries, each maybe inverted, rounded once when one is.
template <class C>
ORDO_HOST_DEVICE C diagonal_entry_product(C l, bool l_inverted, C r, bool r_inverted) noexcept {
  if (l_inverted && r_inverted) return C(1) / (l * r);
  if (l_inverted) return r / l;
  if (r_inverted) return l / r;
  return l * r;
}

template <class T>
structured_node<T> column_major_node(T* data, std::size_t rows, std::size_t cols, matrix_kind kind) {
  return {data, rows, cols, rows > 0 ? rows : 1, false, kind, false, true, not_an_operand, kind};
}

// The error for an operand a solve cannot use, naming it: "A2 (spd, 3x3) is not positive definite ...".
template <class T>
[[noreturn]] void throw_singular(const structured_node<T>& a, const std::string& what) {
  const std::size_t operand = a.operand, order = a.rows;
  const matrix_kind kind = a.declared;
  throw std::runtime_error("ordo::evaluate(structured chain): A" + std::to_string(operand + 1) + " (" +
                           std::string(kind_name(kind)) + ", " + std::to_string(order) + "x" + std::to_string(order) +
                           ") " + what);
}

}  // namespace ordo::detail

#endif
