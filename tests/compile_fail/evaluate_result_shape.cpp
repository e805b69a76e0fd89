// A static result matrix of the wrong shape is refused at compile time.
// needs: kokkos
// expect: the result's static extents differ from the chain's
// expect: result_shape_mismatch<ordo::shape<4, 6>, ordo::shape<4, 7>
#include <ordo/kernels/multiply.hpp>

void f() {
  ordo::matrix<double, 4, 5> a;
  ordo::matrix<double, 5, 6> b;
  ordo::matrix<double, 4, 7> r;
  ordo::evaluate(ordo::chain(a, b), r);
}
