// a * b of matrices in two execution spaces is refused at the *.
// needs: kokkos
// expect: ordo: operator*(a, b) requires a and b to live in the same execution space
// expect: execution_spaces<
#include <ordo/expression.hpp>

void f() {
  ordo::matrix<double, 4, 5, Kokkos::Serial> a;
  ordo::matrix<double, 5, 6, Kokkos::OpenMP> b;
  auto r = a * b;
}
