#ifndef ORDO_CORE_PLANNED_PRODUCT_HPP
#define ORDO_CORE_PLANNED_PRODUCT_HPP

// ordo::planned_product: one product of a chain plan (core/chain_plan.hpp), what evaluators walk.

#include <cstddef>
#include <cstdint>

namespace ordo {

// How a product is computed: a general product (GEMM/GEMV), or a scaling when a factor is
// diagonal (operand_structure::diagonal): its rows by a left diagonal, its columns by a right
// one, or the element-wise product of two diagonals, which is diagonal again.
enum class product_kind : unsigned char { general, scale_rows, scale_cols, diagonal };

// One product of a plan. Nodes are numbered: 0 .. n-1 are the operands A1 .. An, and n + p is
// the p-th product in evaluation order (post-order, left subtree first); the root is last.
struct planned_product {
  std::size_t left = 0;   // node id of the left factor
  std::size_t right = 0;  // node id of the right factor
  std::size_t first = 0;  // first operand covered, 0-based
  std::size_t last = 0;   // last operand covered, 0-based, inclusive
  std::size_t rows = 0;
  std::size_t inner = 0;
  std::size_t cols = 0;
  // Where this product's result lives in a workspace of peak_temporary_elements() elements,
  // counted in elements; the root's result goes to the caller's matrix and has offset 0.
  std::uint64_t workspace_offset = 0;
  product_kind kind = product_kind::general;

  // Scalar multiplications of this product; it never overflows in a plan, whose total fits.
  constexpr std::uint64_t multiplications() const noexcept {
    switch (kind) {
      case product_kind::general: return std::uint64_t{rows} * inner * cols;
      case product_kind::diagonal: return rows;
      default: return std::uint64_t{rows} * cols;
    }
  }
  friend constexpr bool operator==(const planned_product&, const planned_product&) = default;
};

}  // namespace ordo

#endif
