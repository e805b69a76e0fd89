#ifndef ORDO_PLATFORM_KOKKOS_MATH_HPP
#define ORDO_PLATFORM_KOKKOS_MATH_HPP

#include <Kokkos_Core.hpp>

// Kokkos 3.4 keeps its math functions in Kokkos::Experimental; 3.7 promoted them to Kokkos::
// and 4.x removed the Experimental spelling. Only functions both spellings provide are listed. Kernels call ordo::detail::math::* so that the
// same source builds against both, on host and device.
namespace ordo::detail::math {
#if KOKKOS_VERSION >= 30700
using Kokkos::exp;
using Kokkos::fabs;
using Kokkos::isfinite;
using Kokkos::isinf;
using Kokkos::isnan;
using Kokkos::log;
using Kokkos::sqrt;
#else
using Kokkos::Experimental::exp;
using Kokkos::Experimental::fabs;
using Kokkos::Experimental::isfinite;
using Kokkos::Experimental::isinf;
using Kokkos::Experimental::isnan;
using Kokkos::Experimental::log;
using Kokkos::Experimental::sqrt;
#endif
}  // namespace ordo::detail::math

#endif
