#ifndef ORDO_KERNELS_DETAIL_BLAS_GEMV_HPP
#define ORDO_KERNELS_DETAIL_BLAS_GEMV_HPP

// The host BLAS adapter for ordo::gemm calls whose C has one row or one column (GEMV, and DOT
// for a 1 x 1 C of doubles) or whose inner extent is 1 (GER, the outer product). A GEMM routine
// given n = 1 still packs its operands for a matrix kernel; GEMV streams the matrix once. For
// k = 1, OpenBLAS 0.3.21's dgemm took 22 ms on a 3000 x 3000 C where clearing C and dger took 11
// (2 threads, this machine). Same interface and conditions as blas_gemm.hpp.
//
// DOT is used for double only: sdot_'s return value is a float in gfortran-built BLAS and a
// double in f2c-built ones (the ABI differs between providers), so a 1 x 1 float product goes
// through sgemv_ with one row, whose result is written through a pointer.

#include <ordo/kernels/detail/blas_operand.hpp>

#include <climits>
#include <cstddef>
#include <type_traits>

namespace ordo::detail {

// Which level-2/1 routine a product C = A B of m x k times k x n takes: GEMV when C is a column
// (n == 1) or a row (m == 1), DOT for 1 x 1.
enum class vector_product { none, gemv, dot };

constexpr vector_product vector_product_of(std::size_t m, std::size_t k, std::size_t n) noexcept {
  if (m == 0 || n == 0 || k == 0) return vector_product::none;  // nothing to multiply: GEMM's beta rule
  if (m == 1 && n == 1) return vector_product::dot;
  return m == 1 || n == 1 ? vector_product::gemv : vector_product::none;
}

// C = x y^T: an inner extent of 1 between a column and a row of more than one element.
constexpr bool is_outer_product(std::size_t m, std::size_t k, std::size_t n) noexcept {
  return k == 1 && m > 1 && n > 1;
}

// The increment of a vector stored along one axis of a rank-2 View; extent-1 axes have arbitrary
// strides, and BLAS wants a positive increment even for one element.
template <class View>
bool blas_increment(const View& v, int axis, int& increment) {
  const std::size_t stride = v.extent(axis) <= 1 ? 1 : static_cast<std::size_t>(v.stride(axis));
  if (stride == 0 || stride > INT_MAX) return false;
  increment = static_cast<int>(stride);
  return true;
}

}  // namespace ordo::detail

#if defined(ORDO_HAS_BLAS)

extern "C" {
void sgemv_(const char* trans, const int* m, const int* n, const float* alpha, const float* a, const int* lda,
            const float* x, const int* incx, const float* beta, float* y, const int* incy);
void dgemv_(const char* trans, const int* m, const int* n, const double* alpha, const double* a, const int* lda,
            const double* x, const int* incx, const double* beta, double* y, const int* incy);
double ddot_(const int* n, const double* x, const int* incx, const double* y, const int* incy);
void sger_(const int* m, const int* n, const float* alpha, const float* x, const int* incx, const float* y,
           const int* incy, float* a, const int* lda);
void dger_(const int* m, const int* n, const double* alpha, const double* x, const int* incx, const double* y,
           const int* incy, double* a, const int* lda);
}

namespace ordo::detail {

template <class T>
void call_blas_gemv(char trans, int rows, int cols, T alpha, const T* a, int lda, const T* x, int incx, T beta, T* y,
                    int incy) {
  if constexpr (std::is_same_v<T, float>) {
    sgemv_(&trans, &rows, &cols, &alpha, a, &lda, x, &incx, &beta, y, &incy);
  } else {
    dgemv_(&trans, &rows, &cols, &alpha, a, &lda, x, &incx, &beta, y, &incy);
  }
}

// y = alpha op(M) x + beta y where op(M) is the rows x depth matrix view `m` read as BLAS sees it.
template <class MView, class T>
bool blas_gemv_of(const MView& m, T alpha, const T* x, int incx, T beta, T* y, int incy) {
  const blas_operand d = describe_for_blas(m);
  if (!d.usable) return false;
  const int rows = static_cast<int>(m.extent(0)), depth = static_cast<int>(m.extent(1));
  if (!d.transposed) {
    call_blas_gemv<T>('N', rows, depth, alpha, m.data(), d.ld, x, incx, beta, y, incy);
  } else {
    call_blas_gemv<T>('T', depth, rows, alpha, m.data(), d.ld, x, incx, beta, y, incy);
  }
  return true;
}

// C = alpha A B + beta C for a C with one row or one column; false when the layouts do not suit
// BLAS (the caller then uses another path) or the shape is not a vector product.
template <class AView, class BView, class CView, class T>
bool try_blas_vector_product(T alpha, const AView& a, const BView& b, T beta, const CView& c) {
  const std::size_t m = a.extent(0), k = a.extent(1), n = b.extent(1);
  const vector_product kind = vector_product_of(m, k, n);
  if (kind == vector_product::none || m > INT_MAX || k > INT_MAX || n > INT_MAX) return false;
  if constexpr (std::is_same_v<T, double>) {
    if (kind == vector_product::dot) {
      int inc_a = 1, inc_b = 1;
      if (!blas_increment(a, 1, inc_a) || !blas_increment(b, 0, inc_b)) return false;
      const int depth = static_cast<int>(k);
      const double dot = ddot_(&depth, a.data(), &inc_a, b.data(), &inc_b);
      c(0, 0) = beta == 0 ? alpha * dot : alpha * dot + beta * c(0, 0);
      return true;
    }
  }
  if (n == 1) {
    // The column c(:, 0) = alpha A b(:, 0) + beta c(:, 0).
    int inc_x = 1, inc_y = 1;
    if (!blas_increment(b, 0, inc_x) || !blas_increment(c, 0, inc_y)) return false;
    return blas_gemv_of(a, alpha, b.data(), inc_x, beta, c.data(), inc_y);
  }
  // The row c(0, :) = alpha a(0, :) B + beta c(0, :), that is c^T = alpha B^T a^T + beta c^T.
  int inc_x = 1, inc_y = 1;
  if (!blas_increment(a, 1, inc_x) || !blas_increment(c, 1, inc_y)) return false;
  const blas_operand d = describe_for_blas(b);
  if (!d.usable) return false;
  if (!d.transposed) {
    call_blas_gemv<T>('T', static_cast<int>(k), static_cast<int>(n), alpha, b.data(), d.ld, a.data(), inc_x, beta,
                      c.data(), inc_y);
  } else {
    call_blas_gemv<T>('N', static_cast<int>(n), static_cast<int>(k), alpha, b.data(), d.ld, a.data(), inc_x, beta,
                      c.data(), inc_y);
  }
  return true;
}

// C = alpha a b + beta C for an inner extent of 1 (a a column, b a row) and beta 0 or 1: GER adds
// alpha a b to C, which beta == 0 clears first (C is not read, as in GEMM: it may hold NaN). False
// when the layouts or beta do not suit; the caller then uses GEMM.
template <class AView, class BView, class CView, class T>
bool try_blas_outer_product(T alpha, const AView& a, const BView& b, T beta, const CView& c) {
  const std::size_t m = a.extent(0), n = b.extent(1);
  if (!is_outer_product(m, a.extent(1), n) || m > INT_MAX || n > INT_MAX || (beta != T(0) && beta != T(1))) {
    return false;
  }
  int inc_x = 1, inc_y = 1;
  const blas_operand dc = describe_for_blas(c);
  if (!dc.usable || !blas_increment(a, 0, inc_x) || !blas_increment(b, 1, inc_y)) return false;
  // Column-major C (m x n, ld) = alpha x y^T; row-major C is a column-major C^T = alpha y x^T.
  const int rows = static_cast<int>(dc.transposed ? n : m), cols = static_cast<int>(dc.transposed ? m : n);
  if (beta == T(0)) {
    for (int j = 0; j < cols; ++j) {
      T* column = c.data() + static_cast<std::size_t>(j) * static_cast<std::size_t>(dc.ld);
      for (int i = 0; i < rows; ++i) column[i] = T(0);
    }
  }
  const T* x = dc.transposed ? b.data() : a.data();
  const T* y = dc.transposed ? a.data() : b.data();
  const int incx = dc.transposed ? inc_y : inc_x, incy = dc.transposed ? inc_x : inc_y;
  if constexpr (std::is_same_v<T, float>) {
    sger_(&rows, &cols, &alpha, x, &incx, y, &incy, c.data(), &dc.ld);
  } else {
    dger_(&rows, &cols, &alpha, x, &incx, y, &incy, c.data(), &dc.ld);
  }
  return true;
}

}  // namespace ordo::detail

#endif

#endif
