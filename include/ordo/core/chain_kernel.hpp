#ifndef ORDO_CORE_CHAIN_KERNEL_HPP
#define ORDO_CORE_CHAIN_KERNEL_HPP

// The kernels a generalized chain's products run (BLAS/LAPACK names), and what each costs in
// floating-point operations and in elements moved, the two quantities the cost models
// (core/cost_model.hpp) weigh. Pure C++20.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ordo {

// A product's kernel. The order is the planner's tie rule: between plans of equal cost, the one
// whose kernels come first here (after the smaller split) is chosen.
enum class chain_kernel : unsigned char {
  gemm,              // general x general
  gemv,              // general x vector, or vector^T x general
  dot,               // row x column: a 1 x 1 result
  trmm,              // triangular x general (either side)
  trmv,              // triangular x vector
  syrk,              // X^T X or X X^T of one stored X: half a GEMM, a symmetric result
  trsm,              // triangular^-1 x general (a triangular solve, either side)
  trsv,              // triangular^-1 x vector
  posv,              // SPD^-1 x general: Cholesky (POTRF), then two triangular solves (POTRS)
  sysv,              // symmetric^-1 x general: LDL^T (SYTRF), then SYTRS
  gesv,              // general^-1 x general: LU with partial pivoting (GETRF), then GETRS
  scale_rows,        // diagonal x general: each row scaled (divided, for an inverted diagonal)
  scale_cols,        // general x diagonal
  diagonal_product,  // diagonal x diagonal: element-wise, diagonal again
  // Explicit inverses, run before a product only where the inverse policy allows them.
  trtri,
  potri,  // with its POTRF
  sytri,  // with its SYTRF
  getri,  // with its GETRF
  reciprocal,  // of a diagonal
};

inline constexpr std::size_t chain_kernel_count = 19;

constexpr std::string_view kernel_name(chain_kernel kernel) noexcept {
  constexpr std::string_view names[chain_kernel_count] = {
      "gemm", "gemv",       "dot",        "trmm",  "trmv",  "syrk",  "trsm",  "trsv",  "posv",       "sysv",
      "gesv", "scale_rows", "scale_cols", "diagonal_product", "trtri", "potri", "sytri", "getri", "reciprocal"};
  return names[static_cast<std::size_t>(kernel)];
}

constexpr bool is_explicit_inverse(chain_kernel kernel) noexcept { return kernel >= chain_kernel::trtri; }

// One kernel call: a product rows x inner times inner x cols (for a solve, the inverted factor is
// inner x inner on either side; for an explicit inverse, all three are its order).
struct kernel_call {
  chain_kernel kernel = chain_kernel::gemm;
  std::uint64_t rows = 0, inner = 0, cols = 0;
};

namespace detail {

constexpr std::uint64_t clamp_mul(std::uint64_t a, std::uint64_t b) noexcept {
  if (a == 0 || b == 0) return 0;
  return a > ~std::uint64_t{0} / b ? ~std::uint64_t{0} : a * b;
}
constexpr std::uint64_t clamp_add(std::uint64_t a, std::uint64_t b) noexcept {
  return a > ~std::uint64_t{0} - b ? ~std::uint64_t{0} : a + b;
}
constexpr std::uint64_t clamp_mul3(std::uint64_t a, std::uint64_t b, std::uint64_t c) noexcept {
  return clamp_mul(clamp_mul(a, b), c);
}

// LAPACK Working Note 41's operation counts, multiplications plus additions: POTRF
// s^3/3 + s^2/2 + s/6 = s(s+1)(2s+1)/6, GETRF 2s^3/3 - s^2/2 - s/6.
constexpr std::uint64_t cholesky_flops(std::uint64_t s) noexcept {
  return clamp_mul3(s, s + 1, 2 * s + 1) / 6;
}
constexpr std::uint64_t lu_flops(std::uint64_t s) noexcept {
  const std::uint64_t cubic = clamp_mul3(4 * s, s, s);
  return cubic == ~std::uint64_t{0} ? cubic : (cubic - 3 * s * s - s) / 6;
}

}  // namespace detail

// Floating-point operations (LAWN 41 counts, leading terms exact where they are integers;
// saturated at 2^64 - 1). GEMM 2mkn; a triangular multiply or solve mkn (half a GEMM); SYRK
// m(m+1)k; POSV/SYSV/GESV their factorization of the inner x inner factor plus two triangular
// solves; scalings one operation per element.
constexpr std::uint64_t kernel_flops(const kernel_call& call) noexcept {
  using detail::clamp_add, detail::clamp_mul, detail::clamp_mul3;
  const std::uint64_t m = call.rows, k = call.inner, n = call.cols;
  switch (call.kernel) {
    case chain_kernel::gemm:
    case chain_kernel::gemv:
    case chain_kernel::dot: return clamp_mul(2, clamp_mul3(m, k, n));
    case chain_kernel::trmm:
    case chain_kernel::trmv:
    case chain_kernel::trsm:
    case chain_kernel::trsv: return clamp_mul3(m, k, n);
    case chain_kernel::syrk: return clamp_mul3(m, m + 1, k);
    case chain_kernel::posv:
    case chain_kernel::sysv: return clamp_add(detail::cholesky_flops(k), clamp_mul(2, clamp_mul3(m, k, n)));
    case chain_kernel::gesv: return clamp_add(detail::lu_flops(k), clamp_mul(2, clamp_mul3(m, k, n)));
    case chain_kernel::scale_rows:
    case chain_kernel::scale_cols: return clamp_mul(m, n);
    case chain_kernel::diagonal_product: return m;
    case chain_kernel::trtri: return clamp_mul3(k, k, k) / 3 + 2 * k / 3;
    case chain_kernel::potri:
    case chain_kernel::sytri: return clamp_mul3(k, k, k);
    case chain_kernel::getri: return clamp_mul(2, clamp_mul3(k, k, k));
    case chain_kernel::reciprocal: return k;
  }
  return 0;
}

// Elements read plus elements written, the memory traffic when nothing stays in cache: a
// triangular factor counts its triangle, a diagonal its diagonal, a solve reads and rewrites its
// right-hand side, a factorization reads and writes its copy of the factor.
constexpr std::uint64_t kernel_elements_moved(const kernel_call& call) noexcept {
  using detail::clamp_add, detail::clamp_mul;
  const std::uint64_t m = call.rows, k = call.inner, n = call.cols;
  const std::uint64_t triangle = clamp_mul(k, k + 1) / 2;
  switch (call.kernel) {
    case chain_kernel::gemm:
    case chain_kernel::gemv:
    case chain_kernel::dot: return clamp_add(clamp_add(clamp_mul(m, k), clamp_mul(k, n)), clamp_mul(m, n));
    case chain_kernel::trmm:
    case chain_kernel::trmv:
    case chain_kernel::trsm:
    case chain_kernel::trsv: return clamp_add(triangle, clamp_mul(2, clamp_mul(m == k ? n : m, k)));
    case chain_kernel::syrk: return clamp_add(clamp_mul(m, k), clamp_mul(m, m + 1) / 2);
    case chain_kernel::posv:
    case chain_kernel::sysv:
    case chain_kernel::gesv: return clamp_add(clamp_mul(3, clamp_mul(k, k)), clamp_mul(2, clamp_mul(m == k ? n : m, k)));
    case chain_kernel::scale_rows:
    case chain_kernel::scale_cols: return clamp_add(clamp_mul(2, clamp_mul(m, n)), k);
    case chain_kernel::diagonal_product: return clamp_mul(3, m);
    case chain_kernel::trtri: return clamp_mul(2, triangle);
    case chain_kernel::potri:
    case chain_kernel::sytri:
    case chain_kernel::getri: return clamp_mul(3, clamp_mul(k, k));
    case chain_kernel::reciprocal: return clamp_mul(2, k);
  }
  return 0;
}

}  // namespace ordo

#endif
