// An empty chain in constant evaluation does not compile.
// expect: ordo::plan_chain(dims) requires at least 2 dims
#include <ordo/core/chain.hpp>

#include <array>

constexpr auto plan = ordo::plan_chain(std::array<std::size_t, 1>{4});
