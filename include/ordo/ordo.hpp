#ifndef ORDO_ORDO_HPP
#define ORDO_ORDO_HPP

// Everything ordo offers. Pure C++20 layer first, then the Kokkos layer.
#include <ordo/version.hpp>
#include <ordo/shape.hpp>
#include <ordo/chain.hpp>

#include <ordo/execution.hpp>
#include <ordo/gemm.hpp>
#include <ordo/mask.hpp>
#include <ordo/matrix.hpp>
#include <ordo/multiply.hpp>
#include <ordo/reduce.hpp>

#include <ordo/nn/batch_norm.hpp>

#endif
