#ifndef ORDO_KERNELS_HPP
#define ORDO_KERNELS_HPP

// The Kokkos layer (CMake target ordo::ordo): matrices, GEMM, planned chain evaluation and a * b
// products,
// reductions and masks on any Kokkos execution space.
#include <ordo/kernels/chain_expression.hpp>
#include <ordo/kernels/diagonal.hpp>
#include <ordo/kernels/evaluate_chain.hpp>
#include <ordo/kernels/cholesky.hpp>
#include <ordo/kernels/evaluate_structured.hpp>
#include <ordo/kernels/execution.hpp>
#include <ordo/kernels/expression.hpp>
#include <ordo/kernels/gemm.hpp>
#include <ordo/kernels/mask.hpp>
#include <ordo/kernels/matrix.hpp>
#include <ordo/kernels/multiply.hpp>
#include <ordo/kernels/exact_sum.hpp>
#include <ordo/kernels/reduce.hpp>
#include <ordo/kernels/structured_expression.hpp>
#include <ordo/kernels/sum_expression.hpp>
#include <ordo/kernels/transpose.hpp>

#endif
