// needs: mpi
// expect: ordo::mpi::batch_norm_forward_training: y must have x's value type
// A y of another value type than x: refused at the entry point, before anything is sent.
#include <ordo/mpi/batch_norm.hpp>

void forward(MPI_Comm comm, const Kokkos::View<float**>& x, const Kokkos::View<double**>& y,
             const Kokkos::View<float*>& parameters) {
  (void)ordo::mpi::batch_norm_forward_training(comm, x, parameters, parameters, parameters, parameters, y);
}
