// Converting a product into a matrix of other static extents fails to compile.
// needs: kokkos
// expect: the result's static extents differ from the chain's
#include <ordo/expression.hpp>

void f() {
  ordo::matrix<double, 4, 5> a;
  ordo::vector<double, 5> x;
  ordo::vector<double, 5> y = a * x;
}
