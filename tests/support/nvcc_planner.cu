// Compiled by nvcc (test nvcc.nvcc_planner): the planner's compile-time results hold in CUDA C++,
// and values taken from a compile-time plan are constants that device code can use.
#include <ordo/core/chain.hpp>

#include <array>

constexpr auto seed = ordo::plan_chain(std::array<std::size_t, 4>{100, 5, 200, 20});
static_assert(seed.cost() == 30'000 && seed.order() == "(A1(A2A3))");

using A = ordo::shape<30, 35>;
using B = ordo::shape<35, 15>;
using C = ordo::shape<15, 5>;
static_assert(ordo::chain_cost_v<A, B, C> == 30 * 35 * 5 + 35 * 15 * 5);

constexpr std::size_t first_product_rows = ordo::chain_plan_v<A, B, C>.products()[0].rows;
static_assert(first_product_rows == 35);

__global__ void store_first_product_rows(std::size_t* out) { *out = first_product_rows; }
