#ifndef ORDO_CORE_HPP
#define ORDO_CORE_HPP

// The pure C++20 layer (CMake target ordo::core): shapes, the chain planner, scalar traits and the
// 16-bit storage types.
// Needs Boost only, never Kokkos.
#include <ordo/core/config.hpp>
#include <ordo/core/version.hpp>
#include <ordo/core/shape.hpp>
#include <ordo/core/scalar_traits.hpp>
#include <ordo/core/float16.hpp>
#include <ordo/core/precision.hpp>
#include <ordo/core/chain.hpp>
#include <ordo/core/structured_chain.hpp>

#endif
