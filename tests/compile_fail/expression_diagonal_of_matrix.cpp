// ordo::diagonal(d) of a matrix with more than one column fails at the call, naming d's shape,
// with nothing after it.
// needs: kokkos
// max-lines: 15
// expect: ordo::diagonal(d) requires d to be a column vector (n x 1)
// expect: diagonal_operand_is<ordo::diagnostic::dynamic, 3>
// reject: no match for
#include <ordo/expression.hpp>

void f() {
  ordo::matrix<double, ordo::dynamic, 3> d(4);
  ordo::matrix<double, 4, 4> w;
  ordo::matrix<double, 4, 4> r = ordo::diagonal(d) * w;
}
