#ifndef ORDO_CORE_HPP
#define ORDO_CORE_HPP

// The pure C++20 layer (CMake target ordo::core): shapes, the chain planner and scalar traits.
// Needs Boost only, never Kokkos.
#include <ordo/core/config.hpp>
#include <ordo/core/version.hpp>
#include <ordo/core/shape.hpp>
#include <ordo/core/scalar_traits.hpp>
#include <ordo/core/chain.hpp>

#endif
