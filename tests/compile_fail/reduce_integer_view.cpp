// needs: kokkos
// expect: ordo::sum/mean(x) requires a View of a floating-point storage type
// ordo::sum of integers: the scalar-traits check at the entry point names the requirement.
#include <ordo/kernels/reduce.hpp>

int sum_of_integers(const Kokkos::View<int*>& x) { return static_cast<int>(ordo::sum<double>(x)); }
