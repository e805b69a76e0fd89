// needs: mpi
// expect: ordo::mpi::sum/mean(comm, x) requires a View of float, double, ordo::half or ordo::bfloat16
// ordo::mpi::sum of integers: refused at the entry point, before anything is sent to other ranks.
#include <ordo/mpi/sum.hpp>

double sum_of_integers(MPI_Comm comm, const Kokkos::View<int*>& x) { return ordo::mpi::sum<double>(comm, x); }
