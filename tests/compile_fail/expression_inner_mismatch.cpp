// a * b on static matrices that do not conform fails at that *, naming both shapes and the rule.
// needs: kokkos
// expect: ordo: operator*(a, b) requires a's columns to equal b's rows
// expect: left_operand_is<100, 5>::times<ordo::diagnostic::right_operand_is<200, 20>
// expect: left_operand_is<20, 200>::times<ordo::diagnostic::right_operand_is<5, 100>
#include <ordo/expression.hpp>

void f() {
  ordo::matrix<double, 100, 5> a;
  ordo::matrix<double, 200, 20> b;
  auto r = ordo::transpose(b) * ordo::transpose(a);  // 20x200 times 5x100: the same rule, other shapes
  auto s = a * b;
}
