// All operands of a chain share one scalar type.
// needs: kokkos
// expect: all operands must have the same scalar type
// expect: mixed_scalar_types<float, double>
#include <ordo/kernels/multiply.hpp>

void f() {
  ordo::matrix<float, 4, 5> a;
  ordo::matrix<double, 5, 6> b;
  auto r = ordo::multiply(a, b);
}
