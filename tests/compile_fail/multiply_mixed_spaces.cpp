// All operands of a chain live in one execution space.
// needs: kokkos
// expect: all operands must live in the same execution space
#include <ordo/kernels/multiply.hpp>

void f() {
  ordo::matrix<double, 4, 5, Kokkos::Serial> a;
  ordo::matrix<double, 5, 6, Kokkos::OpenMP> b;
  auto r = ordo::multiply(a, b);
}
