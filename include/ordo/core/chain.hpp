#ifndef ORDO_CORE_CHAIN_HPP
#define ORDO_CORE_CHAIN_HPP

// The matrix-chain planner: the optimal parenthesization of A1 A2 ... An as a value, a string and
// a type. Pure C++20 (+ Boost.MP11): no Kokkos.
//
//   constexpr auto p = ordo::plan_chain(std::array<std::size_t, 4>{100, 5, 200, 20});
//   static_assert(p.cost() == 30'000 && p.order() == "(A1(A2A3))");
//
// Cost model: scalar multiplications, sum over the tree's products of rows * inner * cols
// (CLRS 15.2, numpy.linalg.multi_dot); flops() = 2 * cost().
//
// Planners (docs/chain.md): ordo::planner::dynamic_programming (CLRS 15.2, O(n^3), ties to the
// smallest split as numpy), hu_shing (Hu and Shing 1982/1984, exact, O(n log n)), approximate
// (O(n), within 15.5% of the optimum) and automatic, the default: the DP up to
// planner::automatic_dp_limit matrices, Hu–Shing beyond. Exact planners agree on cost(); their
// trees may differ only between orders of equal cost.

// The values (plan_chain, chain_plan, chain_tables) are core/chain_plan.hpp, the type level
// (chain_plan_v, chain_tree_t, the diagnostics) core/chain_type.hpp.

#include <ordo/core/chain_plan.hpp>
#include <ordo/core/chain_type.hpp>

#endif
