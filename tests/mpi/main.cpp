// Main of the MPI tests, run by ctest under mpirun with 1 to 4 ranks: MPI around Kokkos around
// doctest. Every rank runs every case; rank 0 reports in full, the others only their failures,
// and every rank exits with the worst result of all ranks.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int result = 0;
  {
    Kokkos::ScopeGuard guard(argc, argv);
    doctest::Context context(argc, argv);
    if (rank != 0) context.setOption("minimal", true);
    result = context.run();
  }
  int worst = 0;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
