#ifndef ORDO_KERNELS_DETAIL_CUDA_SOLVERS_HPP
#define ORDO_KERNELS_DETAIL_CUDA_SOLVERS_HPP

// The solves of a structured chain on Kokkos::Cuda through the vendor libraries, for float and
// double: triangular solves by cuBLAS TRSM, SPD and general solves by cuSOLVER's POTRF/POTRS and
// GETRF/GETRS (LAPACK's algorithms, blocked for the GPU). The portable kernels factor in one team
// and solve a column per thread (structured_portable_kernels.hpp), which leaves a GPU nearly idle:
// 5.9 ms for the normal equations of a 4096 x 256 X on an H200 (docs/gpu.md). Compiled only in
// CUDA builds that found cuSOLVER (ORDO_HAS_CUSOLVER); the portable kernels call these first.
//
// Each function works on column-major compute-type copies that the caller made (the right-hand
// sides, and A for the factorizations), so its operands' layouts never reach the libraries, and
// returns what LAPACK's info would: 0, or the 1-based column where the factorization stopped.

#include <ordo/kernels/detail/cublas_gemm.hpp>
#include <ordo/kernels/detail/cuda_library_handles.hpp>
#include <ordo/kernels/detail/structured_node.hpp>

#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_CUDA) && defined(ORDO_HAS_CUBLAS) && defined(ORDO_HAS_CUSOLVER)
#define ORDO_IMPL_CUDA_SOLVERS 1
#include <cublas_v2.h>
#include <cusolverDn.h>

#include <climits>
#include <cstddef>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ordo::detail {

inline cusolverDnHandle_t cusolver_handle() {
  return cuda_library_handle<cusolverDnHandle_t, &cusolverDnCreate, &cusolverDnDestroy>(
      "ordo::evaluate(structured chain): cusolverDnCreate");
}

template <class T>
inline constexpr bool cuda_solver_type_v = std::is_same_v<T, float> || std::is_same_v<T, double>;

// Whether every extent fits the libraries' int arguments (else the portable kernels solve).
inline bool cuda_solver_extents_fit(std::initializer_list<std::size_t> extents) {
  for (const std::size_t e : extents) {
    if (e > static_cast<std::size_t>(INT_MAX)) return false;
  }
  return true;
}

inline void check_cuda_library(int status, const char* call) {
  if (status != 0) {
    throw std::runtime_error(std::string("ordo::evaluate(structured chain): ") + call + " failed with status " +
                             std::to_string(status));
  }
}

// y = tri^-1 y in place: y is rows x cols, column-major with leading dimension ldy; tri as its node
// reads it (the triangle BLAS sees, transposed or not, unit diagonal or not). The other triangle
// of tri is not read.
template <class T>
void cuda_triangular_solve(const Kokkos::Cuda& space, const structured_node<T>& tri, T* y, int rows, int cols,
                           int ldy) {
  if (rows == 0 || cols == 0) return;
  cublasHandle_t handle = cublas_handle();
  check_cuda_library(static_cast<int>(cublasSetStream(handle, space.cuda_stream())), "cublasSetStream");
  const cublasFillMode_t fill = tri.uplo() == 'L' ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
  const cublasOperation_t op = tri.trans() == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasDiagType_t diag = tri.unit() == 'U' ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
  const T one = 1;
  const int lda = tri.blas_ld();
  if constexpr (std::is_same_v<T, float>) {
    check_cuda_library(static_cast<int>(cublasStrsm(handle, CUBLAS_SIDE_LEFT, fill, op, diag, rows, cols, &one,
                                                    tri.data, lda, y, ldy)),
                       "cublasStrsm");
  } else {
    check_cuda_library(static_cast<int>(cublasDtrsm(handle, CUBLAS_SIDE_LEFT, fill, op, diag, rows, cols, &one,
                                                    tri.data, lda, y, ldy)),
                       "cublasDtrsm");
  }
}

// Factors the n x n column-major a (leading dimension lda) in place: lower Cholesky (cholesky
// true; a's upper triangle is not read) or LU with partial pivoting (pivots: n device ints).
// Returns LAPACK's info (0, or the 1-based column where it stopped).
template <class T>
int cuda_factor(const Kokkos::Cuda& space, T* a, int n, int lda, int* pivots, bool cholesky) {
  if (n == 0) return 0;
  cusolverDnHandle_t handle = cusolver_handle();
  check_cuda_library(static_cast<int>(cusolverDnSetStream(handle, space.cuda_stream())), "cusolverDnSetStream");
  int lwork = 0;
  if constexpr (std::is_same_v<T, float>) {
    check_cuda_library(static_cast<int>(cholesky ? cusolverDnSpotrf_bufferSize(handle, CUBLAS_FILL_MODE_LOWER, n, a,
                                                                                lda, &lwork)
                                                 : cusolverDnSgetrf_bufferSize(handle, n, n, a, lda, &lwork)),
                       cholesky ? "cusolverDnSpotrf_bufferSize" : "cusolverDnSgetrf_bufferSize");
  } else {
    check_cuda_library(static_cast<int>(cholesky ? cusolverDnDpotrf_bufferSize(handle, CUBLAS_FILL_MODE_LOWER, n, a,
                                                                                lda, &lwork)
                                                 : cusolverDnDgetrf_bufferSize(handle, n, n, a, lda, &lwork)),
                       cholesky ? "cusolverDnDpotrf_bufferSize" : "cusolverDnDgetrf_bufferSize");
  }
  const Kokkos::View<T*, Kokkos::CudaSpace> work(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ordo::evaluate structured: cuSOLVER workspace"),
      lwork > 0 ? lwork : 1);
  const Kokkos::View<int, Kokkos::CudaSpace> info(Kokkos::view_alloc(space, "ordo::evaluate structured: info"));
  int status;
  if constexpr (std::is_same_v<T, float>) {
    status = static_cast<int>(
        cholesky ? cusolverDnSpotrf(handle, CUBLAS_FILL_MODE_LOWER, n, a, lda, work.data(), lwork, info.data())
                 : cusolverDnSgetrf(handle, n, n, a, lda, work.data(), pivots, info.data()));
  } else {
    status = static_cast<int>(
        cholesky ? cusolverDnDpotrf(handle, CUBLAS_FILL_MODE_LOWER, n, a, lda, work.data(), lwork, info.data())
                 : cusolverDnDgetrf(handle, n, n, a, lda, work.data(), pivots, info.data()));
  }
  check_cuda_library(status, cholesky ? "cusolverDn potrf" : "cusolverDn getrf");
  int host_info = 0;
  Kokkos::deep_copy(host_info, info);
  return host_info;
}

// y = a^-1 y in place from cuda_factor's factors (n x n, leading dimension lda) and pivots: y is
// n x cols, column-major with leading dimension ldy.
template <class T>
void cuda_factored_solve(const Kokkos::Cuda& space, const T* factor, int n, int lda, const int* pivots, T* y,
                         int cols, int ldy, bool cholesky) {
  if (n == 0 || cols == 0) return;
  cusolverDnHandle_t handle = cusolver_handle();
  check_cuda_library(static_cast<int>(cusolverDnSetStream(handle, space.cuda_stream())), "cusolverDnSetStream");
  const Kokkos::View<int, Kokkos::CudaSpace> info(Kokkos::view_alloc(space, "ordo::evaluate structured: info"));
  int status;
  if constexpr (std::is_same_v<T, float>) {
    status = static_cast<int>(
        cholesky ? cusolverDnSpotrs(handle, CUBLAS_FILL_MODE_LOWER, n, cols, factor, lda, y, ldy, info.data())
                 : cusolverDnSgetrs(handle, CUBLAS_OP_N, n, cols, factor, lda, pivots, y, ldy, info.data()));
  } else {
    status = static_cast<int>(
        cholesky ? cusolverDnDpotrs(handle, CUBLAS_FILL_MODE_LOWER, n, cols, factor, lda, y, ldy, info.data())
                 : cusolverDnDgetrs(handle, CUBLAS_OP_N, n, cols, factor, lda, pivots, y, ldy, info.data()));
  }
  check_cuda_library(status, cholesky ? "cusolverDn potrs" : "cusolverDn getrs");
}

}  // namespace ordo::detail

#endif

#endif
