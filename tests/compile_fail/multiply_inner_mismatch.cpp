// ordo::multiply on static matrices that do not conform fails with the planner's message.
// needs: kokkos
// expect-gcc: ordo: A2 is 5x200 but A3 is 100x20 (inner dimensions 200 != 100)
// expect-clang: inner_dimensions_mismatch<ordo::diagnostic::A<2>::is<5, 200>, ordo::diagnostic::A<3>::is<100, 20>
// expect: ordo: chain operands do not conform
#include <ordo/kernels/multiply.hpp>

void f() {
  ordo::matrix<double, 100, 5> a;
  ordo::matrix<double, 5, 200> b;
  ordo::matrix<double, 100, 20> c;
  auto r = ordo::multiply(a, b, c);
}
