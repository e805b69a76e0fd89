// (a * b) / s on integer matrices would fold 1 / s into the scale and round it to 0: refused.
// needs: kokkos
// max-lines: 15
// expect: ordo: a / s requires a floating-point scalar type (for integers 1 / s would round to 0)
#include <ordo/expression.hpp>

void f() {
  ordo::matrix<int, 4, 5> a;
  ordo::matrix<int, 5, 6> b;
  ordo::matrix<int, 4, 6> r = (a * b) / 2;
}
