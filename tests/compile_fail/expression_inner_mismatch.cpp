// a * b on static matrices that do not conform fails at that *, naming both shapes and the rule.
// expect-gcc: ordo: operator*: the left operand is 20x200 and the right operand is 5x100 (inner extents 200 != 5)
// needs: kokkos
// expect-gcc: ordo: operator*: the left operand is 100x5 and the right operand is 200x20 (inner extents 5 != 200)
// expect-clang: product_inner_extents_mismatch<ordo::diagnostic::left_operand_is<100, 5>, ordo::diagnostic::right_operand_is<200, 20>
// expect: ordo: operator*(a, b) requires a's columns to equal b's rows
#include <ordo/expression.hpp>

void f() {
  ordo::matrix<double, 100, 5> a;
  ordo::matrix<double, 200, 20> b;
  auto r = ordo::transpose(b) * ordo::transpose(a);  // 20x200 times 5x100: the same rule, other shapes
  auto s = a * b;
}
