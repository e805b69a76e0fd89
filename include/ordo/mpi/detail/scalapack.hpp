#ifndef ORDO_MPI_DETAIL_SCALAPACK_HPP
#define ORDO_MPI_DETAIL_SCALAPACK_HPP

// The parts of ScaLAPACK, PBLAS and BLACS that distributed chains call, declared as the libraries
// export them (no header ships with Debian's libscalapack-openmpi-dev): BLACS's C interface for
// process grids, the Fortran tools for descriptors and local sizes, p?gemm and p?gemv for the
// products, and p?gemr2d (C interface) to move a matrix between grids (scatter and gather).

#if !defined(ORDO_HAS_SCALAPACK)
#error "ordo: distributed chains need ScaLAPACK (apt-get install libscalapack-openmpi-dev); link ordo::mpi from a build that found it (it defines ORDO_HAS_SCALAPACK)"
#endif

#include <mpi.h>

extern "C" {
int Csys2blacs_handle(MPI_Comm comm);
void Cfree_blacs_system_handle(int handle);
void Cblacs_gridinit(int* context, const char* order, int process_rows, int process_cols);
void Cblacs_gridmap(int* context, int* usermap, int ldumap, int process_rows, int process_cols);
void Cblacs_gridinfo(int context, int* process_rows, int* process_cols, int* my_row, int* my_col);
void Cblacs_gridexit(int context);

int numroc_(const int* n, const int* block, const int* process, const int* source_process, const int* processes);
void descinit_(int* descriptor, const int* m, const int* n, const int* mb, const int* nb, const int* row_source,
               const int* col_source, const int* context, const int* lld, int* info);

void pdgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
             const double* a, const int* ia, const int* ja, const int* desca, const double* b, const int* ib,
             const int* jb, const int* descb, const double* beta, double* c, const int* ic, const int* jc,
             const int* descc);
void psgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const float* alpha,
             const float* a, const int* ia, const int* ja, const int* desca, const float* b, const int* ib,
             const int* jb, const int* descb, const float* beta, float* c, const int* ic, const int* jc,
             const int* descc);
void pdgemv_(const char* trans, const int* m, const int* n, const double* alpha, const double* a, const int* ia,
             const int* ja, const int* desca, const double* x, const int* ix, const int* jx, const int* descx,
             const int* incx, const double* beta, double* y, const int* iy, const int* jy, const int* descy,
             const int* incy);
void psgemv_(const char* trans, const int* m, const int* n, const float* alpha, const float* a, const int* ia,
             const int* ja, const int* desca, const float* x, const int* ix, const int* jx, const int* descx,
             const int* incx, const float* beta, float* y, const int* iy, const int* jy, const int* descy,
             const int* incy);

void Cpdgemr2d(int m, int n, double* a, int ia, int ja, int* desca, double* b, int ib, int jb, int* descb, int context);
void Cpsgemr2d(int m, int n, float* a, int ia, int ja, int* desca, float* b, int ib, int jb, int* descb, int context);
}

namespace ordo::mpi::detail {

// ScaLAPACK's descriptor entries (its "array descriptor" of 9 integers).
enum descriptor_entry : int { dtype_ = 0, ctxt_, m_, n_, mb_, nb_, rsrc_, csrc_, lld_ };

template <class T>
struct pblas;

template <>
struct pblas<double> {
  static constexpr auto gemm = pdgemm_;
  static constexpr auto gemv = pdgemv_;
  static constexpr auto gemr2d = Cpdgemr2d;
};
template <>
struct pblas<float> {
  static constexpr auto gemm = psgemm_;
  static constexpr auto gemv = psgemv_;
  static constexpr auto gemr2d = Cpsgemr2d;
};

}  // namespace ordo::mpi::detail

#endif
