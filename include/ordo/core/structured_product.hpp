#ifndef ORDO_CORE_STRUCTURED_PRODUCT_HPP
#define ORDO_CORE_STRUCTURED_PRODUCT_HPP

// ordo::structured_product: one product of a generalized chain's plan
// (core/structured_chain.hpp), what an evaluator walks: its factors, its kernel, how each inverted
// factor enters it, and the kind of its result. Pure C++20.

#include <ordo/core/chain_kernel.hpp>
#include <ordo/core/matrix_kind.hpp>

#include <cstddef>
#include <cstdint>

namespace ordo {

// Which factor carries the kernel's structure: the triangle of TRMM/TRSM, the inverted factor of
// a solve, the diagonal of a scaling. General products and SYRK say left.
enum class factor_side : unsigned char { left, right };

// How a factor that is an inverse enters its product: not inverted, solved against (the kernel is
// a solve, or a division by a diagonal), or inverted explicitly first (only where the caller's
// inverse policy allows it; the inversion kernel is explicit_inverse_kernel(kind)).
enum class inverse_use : unsigned char { none, solve, explicit_inverse };

// The kernel that forms A^-1 explicitly for A of this kind.
constexpr chain_kernel explicit_inverse_kernel(matrix_kind kind) noexcept {
  switch (kind) {
    case matrix_kind::spd: return chain_kernel::potri;
    case matrix_kind::symmetric: return chain_kernel::sytri;
    case matrix_kind::diagonal: return chain_kernel::reciprocal;
    case matrix_kind::general:
    case matrix_kind::orthogonal: return chain_kernel::getri;
    default: return chain_kernel::trtri;
  }
}

// One product of a plan. Nodes: 0 .. n-1 are the operands, n + p the p-th product in evaluation
// order (post-order, left subtree first); the root is last.
struct structured_product {
  std::size_t left = 0, right = 0;  // node ids of the factors
  std::size_t first = 0, last = 0;  // operands covered, 0-based, inclusive
  std::size_t rows = 0, inner = 0, cols = 0;
  chain_kernel kernel = chain_kernel::gemm;
  factor_side side = factor_side::left;
  inverse_use left_inverse = inverse_use::none, right_inverse = inverse_use::none;
  matrix_kind kind = matrix_kind::general;  // of the result
  std::uint64_t cost = 0;                   // in the plan's cost model, explicit inversions included
  // Where the result lives in a workspace of the plan's peak (elements); the root's goes to the
  // caller's matrix. A diagonal result is stored as its diagonal (rows elements).
  std::uint64_t workspace_offset = 0;

  friend constexpr bool operator==(const structured_product&, const structured_product&) = default;
};

}  // namespace ordo

#endif
