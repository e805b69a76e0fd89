// a * b of a float and a double matrix is refused at the *: ordo never converts operands.
// needs: kokkos
// expect: ordo: operator*(a, b) requires a and b to have the same scalar type
// expect: scalar_types<float, double>::agree
#include <ordo/expression.hpp>

void f() {
  ordo::matrix<float, 4, 5> a;
  ordo::matrix<double, 5, 6> b;
  auto s = a * b;
}
