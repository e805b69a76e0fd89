#ifndef ORDO_NN_HPP
#define ORDO_NN_HPP

// Neural-network layers on the Kokkos layer (CMake target ordo::ordo).
#include <ordo/nn/batch_norm.hpp>
#include <ordo/nn/loss_scaler.hpp>
#include <ordo/nn/softmax.hpp>

#endif
