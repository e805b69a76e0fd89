#ifndef ORDO_MPI_HPP
#define ORDO_MPI_HPP

// ordo across MPI ranks (target ordo::mpi, CMake component `mpi`): synchronized batch norm and
// sums and means whose exact results do not depend on the number of ranks, and, in a build that
// found ScaLAPACK, matrix chains planned with communication and evaluated on ScaLAPACK.

#include <ordo/mpi/batch_norm.hpp>
#include <ordo/mpi/error.hpp>
#include <ordo/mpi/sum.hpp>
#if defined(ORDO_HAS_SCALAPACK)
#include <ordo/mpi/distributed_chain.hpp>
#endif

#endif
