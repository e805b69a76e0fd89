// a * b + c with static shapes that differ fails at the +, naming both terms' shapes, with
// nothing after it.
// needs: kokkos
// max-lines: 15
// expect: ordo: a + b and a - b require a and b of one shape
// expect: left_term_is<4, 6>::has_its_shape<ordo::diagnostic::right_term_is<6, 4>
// reject: no match for
#include <ordo/expression.hpp>

void f() {
  ordo::matrix<double, 4, 5> a;
  ordo::matrix<double, 5, 6> b;
  ordo::matrix<double, 6, 4> c;
  ordo::matrix<double, 4, 6> r = a * b + c;
}
