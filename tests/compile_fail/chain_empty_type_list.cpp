// A type-level chain of no operands.
// expect: ordo: a chain needs at least one operand
#include <ordo/core/chain.hpp>

constexpr auto cost = ordo::chain_cost_v<>;
