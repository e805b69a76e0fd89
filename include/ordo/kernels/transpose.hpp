#ifndef ORDO_KERNELS_TRANSPOSE_HPP
#define ORDO_KERNELS_TRANSPOSE_HPP

// ordo::transpose(m): the transpose of a matrix as a view of the same elements, never a copy. In
// a product it swaps the extents the planner sees and becomes the transpose flag of the GEMM or
// GEMV call (BLAS, cuBLAS) or a strided read (the portable kernels):
//
//   ordo::matrix<double, 300, 20> h;
//   auto g = ordo::transpose(h);              // 20 x 300, shares h's elements
//   static_assert(ordo::shape_of_t<decltype(g)>::static_rows == 20);
//   auto same = ordo::transpose(g);           // h itself: transpose(transpose(m)) is m

#include <ordo/kernels/chain_expression.hpp>
#include <ordo/kernels/detail/transposed.hpp>

#endif
