#ifndef ORDO_KERNELS_DETAIL_BLAS_GEMM_HPP
#define ORDO_KERNELS_DETAIL_BLAS_GEMM_HPP

// The host BLAS adapter of ordo::gemm: sgemm_/dgemm_ for float and double Views whose layouts
// BLAS can read (blas_operand.hpp). Compiled only when ORDO_HAS_BLAS is defined, which the CMake
// target ordo::ordo does when it found a BLAS and linked it. The symbols are the reference BLAS
// interface (Fortran names, LP64 integers) that OpenBLAS, BLIS, MKL and reference BLAS all
// export, declared here rather than through cblas.h, whose location and provider differ between
// distributions.

#include <ordo/kernels/detail/blas_operand.hpp>

#include <type_traits>

#if defined(ORDO_HAS_BLAS)

extern "C" {
void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c,
            const int* ldc);
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc);
}

namespace ordo::detail {

template <class T>
void call_blas_gemm(char ta, char tb, int m, int n, int k, T alpha, const T* a, int lda, const T* b, int ldb, T beta,
                    T* c, int ldc) {
  if constexpr (std::is_same_v<T, float>) {
    sgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
  } else {
    dgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
  }
}

// Returns false when the Views' layouts do not suit BLAS.
template <class AView, class BView, class CView, class T>
bool try_blas_gemm(T alpha, const AView& a, const BView& b, T beta, const CView& c) {
  const blas_operand da = describe_for_blas(a), db = describe_for_blas(b), dc = describe_for_blas(c);
  if (!da.usable || !db.usable || !dc.usable) return false;
  const int m = static_cast<int>(a.extent(0)), k = static_cast<int>(a.extent(1)), n = static_cast<int>(b.extent(1));
  if (m == 0 || n == 0) return true;
  if (!dc.transposed) {
    // Column-major C = op(A) op(B).
    call_blas_gemm<T>(da.transposed ? 'T' : 'N', db.transposed ? 'T' : 'N', m, n, k, alpha, a.data(), da.ld, b.data(),
                      db.ld, beta, c.data(), dc.ld);
  } else {
    // Row-major C is a column-major C^T = B^T A^T.
    call_blas_gemm<T>(db.transposed ? 'N' : 'T', da.transposed ? 'N' : 'T', n, m, k, alpha, b.data(), db.ld, a.data(),
                      da.ld, beta, c.data(), dc.ld);
  }
  return true;
}

}  // namespace ordo::detail

#endif

#endif
