#ifndef ORDO_EXPRESSION_HPP
#define ORDO_EXPRESSION_HPP

// Matrix products written as they read, planned as a whole (Kokkos layer, ordo::ordo):
//   auto y = ordo::evaluate(ordo::transpose(h) * h * x);   // computed as h^T (h x)
//   r = a * b * c + d;  c += a * b;                        // sums: the BLAS beta
// See docs/expressions.md.
#include <ordo/kernels/chain_expression.hpp>
#include <ordo/kernels/diagonal.hpp>
#include <ordo/kernels/evaluate_chain.hpp>
#include <ordo/kernels/expression.hpp>
#include <ordo/kernels/matrix.hpp>
#include <ordo/kernels/multiply.hpp>
#include <ordo/kernels/sum_expression.hpp>
#include <ordo/kernels/transpose.hpp>

#endif
