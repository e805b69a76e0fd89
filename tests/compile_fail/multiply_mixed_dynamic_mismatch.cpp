// Static extents that disagree are caught at compile time even when other extents are dynamic.
// needs: kokkos
// expect-gcc: ordo: A1 is ?x64 but A2 is 63x8 (inner dimensions 64 != 63)
// expect: ordo: chain operands do not conform
#include <ordo/kernels/multiply.hpp>

void f(std::size_t n) {
  ordo::matrix<float, ordo::dynamic, 64> x(n);
  ordo::matrix<float, 63, 8> w;
  auto r = ordo::multiply(x, w);
}
