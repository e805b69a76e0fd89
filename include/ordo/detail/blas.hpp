#ifndef ORDO_DETAIL_BLAS_HPP
#define ORDO_DETAIL_BLAS_HPP

// The reference BLAS interface (Fortran symbols, LP64 integers) that OpenBLAS, BLIS, MKL and
// reference BLAS all export. Declared here rather than through cblas.h, whose location and
// provider differ between distributions. Only used when ORDO_HAS_BLAS is defined, which the
// CMake target ordo::ordo does when it found a BLAS and linked it.

#if defined(ORDO_HAS_BLAS)
extern "C" {
void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c,
            const int* ldc);
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc);
}
#endif

#endif
