// This source compiles, so the harness must report the case as failed; ctest inverts that.
// expect-compiles
#include <ordo/core/chain.hpp>

constexpr auto cost = ordo::chain_cost_v<ordo::shape<2, 3>, ordo::shape<3, 4>>;
static_assert(cost == 24);
