#ifndef ORDO_KERNELS_DETAIL_HOST_LAPACK_HPP
#define ORDO_KERNELS_DETAIL_HOST_LAPACK_HPP

// The host BLAS level-3 and LAPACK routines that structured chains run (TRMM, TRSM, SYRK, the
// factorizations, solves and inversions), for float and double, through their Fortran names with
// LP64 integers, as blas_gemm.hpp declares GEMM. Compiled only with ORDO_HAS_LAPACK, which the
// CMake target ordo::ordo defines when it found LAPACK (OpenBLAS carries it).

#include <type_traits>

#if defined(ORDO_HAS_LAPACK)

#define ORDO_IMPL_LAPACK_DECLARE(T, p)                                                                             \
  void p##trmm_(const char*, const char*, const char*, const char*, const int*, const int*, const T*, const T*,    \
                const int*, T*, const int*);                                                                      \
  void p##trsm_(const char*, const char*, const char*, const char*, const int*, const int*, const T*, const T*,    \
                const int*, T*, const int*);                                                                      \
  void p##syrk_(const char*, const char*, const int*, const int*, const T*, const T*, const int*, const T*, T*,    \
                const int*);                                                                                      \
  void p##potrf_(const char*, const int*, T*, const int*, int*);                                                 \
  void p##potrs_(const char*, const int*, const int*, const T*, const int*, T*, const int*, int*);               \
  void p##potri_(const char*, const int*, T*, const int*, int*);                                                 \
  void p##sytrf_(const char*, const int*, T*, const int*, int*, T*, const int*, int*);                           \
  void p##sytrs_(const char*, const int*, const int*, const T*, const int*, const int*, T*, const int*, int*);    \
  void p##sytri_(const char*, const int*, T*, const int*, const int*, T*, int*);                                 \
  void p##getrf_(const int*, const int*, T*, const int*, int*, int*);                                            \
  void p##getrs_(const char*, const int*, const int*, const T*, const int*, const int*, T*, const int*, int*);   \
  void p##getri_(const int*, T*, const int*, const int*, T*, const int*, int*);                                  \
  void p##trtri_(const char*, const char*, const int*, T*, const int*, int*);                                     \
  void p##trmv_(const char*, const char*, const char*, const int*, const T*, const int*, T*, const int*);        \
  void p##trsv_(const char*, const char*, const char*, const int*, const T*, const int*, T*, const int*);

extern "C" {
ORDO_IMPL_LAPACK_DECLARE(float, s)
ORDO_IMPL_LAPACK_DECLARE(double, d)
}

#undef ORDO_IMPL_LAPACK_DECLARE

namespace ordo::detail {

// lapack<T>::name(...) calls s<name>_ or d<name>_.
template <class T>
struct lapack;

#define ORDO_IMPL_LAPACK_FORWARD(T, p)                                                                             \
  template <>                                                                                                      \
  struct lapack<T> {                                                                                               \
    template <class... A> static void trmm(A... a) { p##trmm_(a...); }                                            \
    template <class... A> static void trsm(A... a) { p##trsm_(a...); }                                            \
    template <class... A> static void syrk(A... a) { p##syrk_(a...); }                                            \
    template <class... A> static void potrf(A... a) { p##potrf_(a...); }                                          \
    template <class... A> static void potrs(A... a) { p##potrs_(a...); }                                          \
    template <class... A> static void potri(A... a) { p##potri_(a...); }                                          \
    template <class... A> static void sytrf(A... a) { p##sytrf_(a...); }                                          \
    template <class... A> static void sytrs(A... a) { p##sytrs_(a...); }                                          \
    template <class... A> static void sytri(A... a) { p##sytri_(a...); }                                          \
    template <class... A> static void getrf(A... a) { p##getrf_(a...); }                                          \
    template <class... A> static void getrs(A... a) { p##getrs_(a...); }                                          \
    template <class... A> static void getri(A... a) { p##getri_(a...); }                                          \
    template <class... A> static void trtri(A... a) { p##trtri_(a...); }                                          \
    template <class... A> static void trmv(A... a) { p##trmv_(a...); }                                            \
    template <class... A> static void trsv(A... a) { p##trsv_(a...); }                                            \
  };

ORDO_IMPL_LAPACK_FORWARD(float, s)
ORDO_IMPL_LAPACK_FORWARD(double, d)

#undef ORDO_IMPL_LAPACK_FORWARD

}  // namespace ordo::detail

#endif

#endif
