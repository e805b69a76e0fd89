// A consumer of the MPI layer (find_package(ordo COMPONENTS mpi) or add_subdirectory), run as a
// singleton MPI process.
#include <ordo/mpi.hpp>

#include <cstdio>

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int status = 1;
  {
    Kokkos::ScopeGuard guard(argc, argv);
    Kokkos::View<double*, Kokkos::HostSpace> x("x", 3);
    x(0) = 1e16;
    x(1) = 1.0;
    x(2) = -1e16;
    const double s = ordo::mpi::sum(MPI_COMM_WORLD, x);  // exact: 1, where a float loop gives 0
    std::printf("consumer_mpi: exact sum %g\n", s);
    status = s == 1.0 ? 0 : 1;
  }
  MPI_Finalize();
  return status;
}
