#ifndef ORDO_ORDO_HPP
#define ORDO_ORDO_HPP

// Everything ordo offers, layer by layer: pure C++20 planning, Kokkos kernels, neural-network
// layers. (MPI, when it lands, stays out of this header: it needs MPI's own target.)
#include <ordo/core.hpp>
#include <ordo/kernels.hpp>
#include <ordo/nn.hpp>

#endif
