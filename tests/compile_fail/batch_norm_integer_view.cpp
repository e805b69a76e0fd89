// needs: kokkos
// expect: ordo::nn::batch_norm takes float or double
// Batch norm of integers: refused where the statistics phase starts.
#include <ordo/nn/batch_norm.hpp>

auto statistics_of_integers(const Kokkos::View<int**>& x) { return ordo::nn::batch_norm_local_statistics(x); }
