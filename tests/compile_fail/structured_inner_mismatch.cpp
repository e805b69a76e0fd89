// A structured product whose static extents do not conform fails with operator*'s message, naming
// both shapes, as a plain product does.
// needs: kokkos
// first-error-gcc: error: static assertion failed: ordo: operator*(a, b) requires a's columns to equal b's rows
// expect-clang: left_operand_is<3, 3>::times<ordo::diagnostic::right_operand_is<4, 2>
// expect: ordo: operator*(a, b) requires a's columns to equal b's rows
#include <ordo/kernels/structured_expression.hpp>

void f() {
  ordo::matrix<double, 3, 3> l;
  ordo::matrix<double, 4, 2> b;
  auto e = ordo::lower(l) * b;
}
