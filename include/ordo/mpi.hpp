#ifndef ORDO_MPI_HPP
#define ORDO_MPI_HPP

// ordo across MPI ranks (target ordo::mpi, CMake component `mpi`): synchronized batch norm and
// sums and means whose exact results do not depend on the number of ranks.

#include <ordo/mpi/batch_norm.hpp>
#include <ordo/mpi/error.hpp>
#include <ordo/mpi/sum.hpp>

#endif
