#ifndef ORDO_KERNELS_DETAIL_CUBLAS_GEMM_HPP
#define ORDO_KERNELS_DETAIL_CUBLAS_GEMM_HPP

// The cuBLAS adapter of ordo::gemm for Kokkos::Cuda: float and double Views whose layouts BLAS
// can read (blas_operand.hpp). Compiled only in CUDA builds that found cuBLAS (ORDO_HAS_CUBLAS).

#include <ordo/kernels/detail/blas_gemv.hpp>
#include <ordo/kernels/detail/blas_operand.hpp>

#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_CUDA) && defined(ORDO_HAS_CUBLAS)
#include <ordo/kernels/detail/cuda_library_handles.hpp>

#include <cublas_v2.h>

#include <climits>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ordo::detail {

// This host thread's cuBLAS handle (cuda_library_handles.hpp), bound to the space's stream per call.
inline cublasHandle_t cublas_handle() {
  return cuda_library_handle<cublasHandle_t, &cublasCreate, &cublasDestroy>("ordo::gemm: cublasCreate");
}

template <class AView, class BView, class CView, class T>
bool try_cublas_gemm(const Kokkos::Cuda& space, T alpha, const AView& a, const BView& b, T beta, const CView& c) {
  const blas_operand da = describe_for_blas(a), db = describe_for_blas(b), dc = describe_for_blas(c);
  if (!da.usable || !db.usable || !dc.usable) return false;
  const int m = static_cast<int>(a.extent(0)), k = static_cast<int>(a.extent(1)), n = static_cast<int>(b.extent(1));
  if (m == 0 || n == 0) return true;
  cublasHandle_t handle = cublas_handle();
  cublasSetStream(handle, space.cuda_stream());
  const auto op = [](bool transposed) { return transposed ? CUBLAS_OP_T : CUBLAS_OP_N; };
  cublasStatus_t status;
  const bool row_major = dc.transposed;
  const auto call = [&](cublasOperation_t ta, cublasOperation_t tb, int mm, int nn, const T* x, int ldx, const T* y,
                        int ldy) {
    if constexpr (std::is_same_v<T, float>) {
      return cublasSgemm(handle, ta, tb, mm, nn, k, &alpha, x, ldx, y, ldy, &beta, c.data(), dc.ld);
    } else {
      return cublasDgemm(handle, ta, tb, mm, nn, k, &alpha, x, ldx, y, ldy, &beta, c.data(), dc.ld);
    }
  };
  if (!row_major) {
    status = call(op(da.transposed), op(db.transposed), m, n, a.data(), da.ld, b.data(), db.ld);
  } else {
    status = call(op(!db.transposed), op(!da.transposed), n, m, b.data(), db.ld, a.data(), da.ld);
  }
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("ordo::gemm: cuBLAS ") + (std::is_same_v<T, float> ? "Sgemm" : "Dgemm") +
                             " failed with status " + std::to_string(static_cast<int>(status)));
  }
  return true;
}

// C = alpha A B + beta C for a C with one row or one column, as cuBLAS GEMV (a 1 x 1 C too: cuBLAS'
// DOT returns its result to the host or to device memory without alpha and beta, GEMV applies
// them in the same call). False when the layouts do not suit cuBLAS or the shape is no vector
// product.
template <class AView, class BView, class CView, class T>
bool try_cublas_vector_product(const Kokkos::Cuda& space, T alpha, const AView& a, const BView& b, T beta,
                               const CView& c) {
  const std::size_t m = a.extent(0), k = a.extent(1), n = b.extent(1);
  if (vector_product_of(m, k, n) == vector_product::none || m > INT_MAX || k > INT_MAX || n > INT_MAX) return false;
  const bool column = n == 1;
  int inc_x = 1, inc_y = 1;
  if (column ? !blas_increment(b, 0, inc_x) || !blas_increment(c, 0, inc_y)
             : !blas_increment(a, 1, inc_x) || !blas_increment(c, 1, inc_y)) {
    return false;
  }
  const T* x = column ? b.data() : a.data();
  // The matrix is a in the column case and b in the row case (c^T = B^T a^T). a and b may be Views
  // of different types (layouts, subviews), so each case instantiates the call for its own.
  const auto gemv = [&](const auto& matrix) {
    const blas_operand d = describe_for_blas(matrix);
    if (!d.usable) return false;
    const int rows = static_cast<int>(matrix.extent(0)), cols = static_cast<int>(matrix.extent(1));
    // Column: y = M x with M = a (rows x cols). Row: y = M^T x with M = b (rows x cols).
    const bool transpose = column == d.transposed;
    const int blas_rows = d.transposed ? cols : rows, blas_cols = d.transposed ? rows : cols;
    cublasHandle_t handle = cublas_handle();
    cublasSetStream(handle, space.cuda_stream());
    const cublasOperation_t op = transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasStatus_t status;
    if constexpr (std::is_same_v<T, float>) {
      status = cublasSgemv(handle, op, blas_rows, blas_cols, &alpha, matrix.data(), d.ld, x, inc_x, &beta, c.data(),
                           inc_y);
    } else {
      status = cublasDgemv(handle, op, blas_rows, blas_cols, &alpha, matrix.data(), d.ld, x, inc_x, &beta, c.data(),
                           inc_y);
    }
    if (status != CUBLAS_STATUS_SUCCESS) {
      throw std::runtime_error(std::string("ordo::gemm: cuBLAS ") + (std::is_same_v<T, float> ? "Sgemv" : "Dgemv") +
                               " failed with status " + std::to_string(static_cast<int>(status)));
    }
    return true;
  };
  return column ? gemv(a) : gemv(b);
}

}  // namespace ordo::detail

#endif

#endif
