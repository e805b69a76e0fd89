#ifndef ORDO_CORE_MATRIX_KIND_HPP
#define ORDO_CORE_MATRIX_KIND_HPP

// What a generalized chain knows about each operand (docs/structured_chains.md): its kind
// (general, symmetric, SPD, lower/upper triangular with or without a unit diagonal, diagonal,
// orthogonal), whether it is transposed or inverted, and which stored matrix it reads, and the
// rules that give a product's kind from its factors'. Pure C++20. The kind predicates are also
// device functions: the portable structured kernels read triangles in GPU code.

#include <ordo/core/config.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ordo {

// A matrix's structure as far as the planner uses it. Every kind but general is square. A
// symmetric or SPD operand is stored in full (both triangles); a triangular one may hold
// anything in its other triangle, which no kernel reads; a diagonal one is stored as its diagonal.
enum class matrix_kind : unsigned char {
  general,
  symmetric,
  spd,  // symmetric positive definite: Cholesky applies
  lower,
  upper,
  unit_lower,  // lower triangular with ones on the diagonal (not read)
  unit_upper,
  diagonal,
  orthogonal,  // Q^T Q = I: Q^-1 is Q^T
};

constexpr std::string_view kind_name(matrix_kind kind) noexcept {
  switch (kind) {
    case matrix_kind::general: return "general";
    case matrix_kind::symmetric: return "symmetric";
    case matrix_kind::spd: return "spd";
    case matrix_kind::lower: return "lower";
    case matrix_kind::upper: return "upper";
    case matrix_kind::unit_lower: return "unit_lower";
    case matrix_kind::unit_upper: return "unit_upper";
    case matrix_kind::diagonal: return "diagonal";
    case matrix_kind::orthogonal: return "orthogonal";
  }
  return "?";
}

ORDO_HOST_DEVICE constexpr bool is_triangular(matrix_kind kind) noexcept {
  return kind == matrix_kind::lower || kind == matrix_kind::upper || kind == matrix_kind::unit_lower ||
         kind == matrix_kind::unit_upper;
}
ORDO_HOST_DEVICE constexpr bool is_lower_family(matrix_kind kind) noexcept {
  return kind == matrix_kind::lower || kind == matrix_kind::unit_lower || kind == matrix_kind::diagonal;
}
ORDO_HOST_DEVICE constexpr bool is_upper_family(matrix_kind kind) noexcept {
  return kind == matrix_kind::upper || kind == matrix_kind::unit_upper || kind == matrix_kind::diagonal;
}

// The kind of A^T given A's: the triangles swap, the rest is kept (an orthogonal Q^T is
// orthogonal, a symmetric one is itself).
ORDO_HOST_DEVICE constexpr matrix_kind transposed_kind(matrix_kind kind) noexcept {
  switch (kind) {
    case matrix_kind::lower: return matrix_kind::upper;
    case matrix_kind::upper: return matrix_kind::lower;
    case matrix_kind::unit_lower: return matrix_kind::unit_upper;
    case matrix_kind::unit_upper: return matrix_kind::unit_lower;
    default: return kind;
  }
}

// The kind of A B from the kinds of A and B, as far as it follows from the kinds alone:
//   diagonal x diagonal is diagonal; triangular (or diagonal) x triangular (or diagonal) of one
//   side stays triangular of that side, unit only when both are unit; orthogonal x orthogonal is
//   orthogonal; anything else, symmetric and SPD factors included, is general.
// The rule is associative, so the kind of A_i .. A_j does not depend on the order of the products
// (tests/planner_test.cpp checks both facts, and each rule on explicit matrices). A^T A of one
// stored matrix is symmetric by identity, not by kind: the planner recognizes it (SYRK).
constexpr matrix_kind product_kind_of(matrix_kind a, matrix_kind b) noexcept {
  using k = matrix_kind;
  if (a == k::diagonal && b == k::diagonal) return k::diagonal;
  if (a == k::orthogonal && b == k::orthogonal) return k::orthogonal;
  if (is_lower_family(a) && is_lower_family(b)) {
    return a == k::unit_lower && b == k::unit_lower ? k::unit_lower : k::lower;
  }
  if (is_upper_family(a) && is_upper_family(b)) {
    return a == k::unit_upper && b == k::unit_upper ? k::unit_upper : k::upper;
  }
  return k::general;
}

// One operand of a generalized chain as the user wrote it: A, A^T, A^-1 or A^-T, where A has the
// given kind. `source` names the stored matrix (0: none given): two operands with one nonzero
// source read the same matrix, which is how the planner sees X^T X (SYRK) in X^T X.
// The chain's dims describe the operands as written (after the transpose and the inverse).
struct chain_operand {
  matrix_kind kind = matrix_kind::general;
  bool transposed = false;
  bool inverted = false;
  std::uint32_t source = 0;

  friend constexpr bool operator==(const chain_operand&, const chain_operand&) = default;
};

// The operand as the planner uses it: the kind of what is multiplied (the triangle of A^T is the
// other one), and an orthogonal A^-1 taken as A^T, which needs no solve.
constexpr chain_operand normalized(chain_operand operand) noexcept {
  if (operand.inverted && operand.kind == matrix_kind::orthogonal) {
    operand.inverted = false;
    operand.transposed = !operand.transposed;
  }
  return operand;
}
constexpr matrix_kind effective_kind(const chain_operand& operand) noexcept {
  return operand.transposed ? transposed_kind(operand.kind) : operand.kind;
}

// Shorthands for operand lists: ordo::operands::lower.inverse(), ordo::operands::general.transpose().
namespace operands {

struct operand_builder : chain_operand {
  constexpr operand_builder transpose() const noexcept {
    operand_builder t = *this;
    t.transposed = !t.transposed;
    return t;
  }
  constexpr operand_builder inverse() const noexcept {
    operand_builder t = *this;
    t.inverted = !t.inverted;
    return t;
  }
  constexpr operand_builder from(std::uint32_t stored_matrix) const noexcept {
    operand_builder t = *this;
    t.source = stored_matrix;
    return t;
  }
};

inline constexpr operand_builder general{{matrix_kind::general}};
inline constexpr operand_builder symmetric{{matrix_kind::symmetric}};
inline constexpr operand_builder spd{{matrix_kind::spd}};
inline constexpr operand_builder lower{{matrix_kind::lower}};
inline constexpr operand_builder upper{{matrix_kind::upper}};
inline constexpr operand_builder unit_lower{{matrix_kind::unit_lower}};
inline constexpr operand_builder unit_upper{{matrix_kind::unit_upper}};
inline constexpr operand_builder diagonal{{matrix_kind::diagonal}};
inline constexpr operand_builder orthogonal{{matrix_kind::orthogonal}};

}  // namespace operands

}  // namespace ordo

#endif
