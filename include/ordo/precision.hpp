#ifndef ORDO_PRECISION_HPP
#define ORDO_PRECISION_HPP

// Mixed precision (pure C++20, no Kokkos): the 16-bit storage types ordo::half and
// ordo::bfloat16, their std::numeric_limits, and the ordo::precision<Storage, Compute> policy.
// The kernels that take them: ordo::sum/mean, ordo::multiply, ordo::nn::batch_norm_*,
// ordo::nn::softmax and friends. Guide: docs/precision.md.
#include <ordo/core/float16.hpp>
#include <ordo/core/precision.hpp>

#endif
