// needs: kokkos
// expect: ordo::multiply(..., ordo::precision<Storage, Compute>) requires Storage to be the operands' scalar type
// The named pair's storage type must be the matrices' own.
#include <ordo/kernels/multiply.hpp>

void f() {
  ordo::matrix<float, 4, 5> a;
  ordo::matrix<float, 5, 6> b;
  auto r = ordo::multiply(a, b, ordo::precision<double, double>{});
}
