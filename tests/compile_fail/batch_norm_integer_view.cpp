// needs: kokkos
// expect: ordo::nn::batch_norm takes float or double
// expect: operand_types<ordo::nn::detail::operation::batch_norm_local_statistics
// Batch norm of integers: refused where the statistics phase starts.
#include <ordo/nn/batch_norm.hpp>

auto statistics_of_integers(const Kokkos::View<int**>& x) { return ordo::nn::batch_norm_local_statistics(x); }
