// A wrong * inside a longer product, a * b * c * d, gives one error that names the rule and both
// shapes (a dynamic extent as "dynamic", not 18446744073709551615, in the error line and its
// note; the operand types themselves still print ordo::dynamic as a number), and nothing after
// it: the failed * returns a type that absorbs the remaining ones and converts to any result.
// needs: kokkos
// max-lines: 15
// first-error-gcc: error: static assertion failed: ordo: operator*(a, b) requires a's columns to equal b's rows
// first-error-clang: 'left_operand_is<ordo::diagnostic::dynamic, 30>::times<ordo::diagnostic::right_operand_is<31, 5>>' "ordo: operator*(a, b) requires a's columns to equal b's rows"
// expect: left_operand_is<ordo::diagnostic::dynamic, 30>::times<ordo::diagnostic::right_operand_is<31, 5>
// reject: no match for
#include <ordo/expression.hpp>

void f() {
  ordo::matrix<double, ordo::dynamic, 20> a(10);
  ordo::matrix<double, 20, 30> b;
  ordo::matrix<double, 31, 5> c;
  ordo::matrix<double, 5, 7> d;
  auto e = a * b * c * d;
  ordo::matrix<double, ordo::dynamic, 7> r = a * b * c * d;
}
