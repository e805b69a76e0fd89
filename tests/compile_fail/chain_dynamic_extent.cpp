// chain_cost_v needs static extents; dynamic chains are planned at run time.
// expect-gcc: ordo: A2 is ?x200: a compile-time chain plan needs static extents
// expect-clang: dynamic_extent_in_compile_time_chain<ordo::diagnostic::A<2>::is<18446744073709551615, 200>
// expect: a compile-time chain plan needs static extents
#include <ordo/core/chain.hpp>

constexpr auto cost =
    ordo::chain_cost_v<ordo::shape<100, 5>, ordo::shape<ordo::dynamic, 200>, ordo::shape<200, 20>>;
