// A type-level chain whose inner dimensions differ names both operands and their shapes.
// expect-gcc: ordo: A2 is 5x200 but A3 is 100x20 (inner dimensions 200 != 100)
// expect-clang: inner_dimensions_mismatch<ordo::diagnostic::A<2>::is<5, 200>, ordo::diagnostic::A<3>::is<100, 20>
// expect: ordo: chain operands do not conform
#include <ordo/core/chain.hpp>

using a = ordo::shape<100, 5>;
using b = ordo::shape<5, 200>;
using c = ordo::shape<100, 20>;
constexpr auto cost = ordo::chain_cost_v<a, b, c>;
