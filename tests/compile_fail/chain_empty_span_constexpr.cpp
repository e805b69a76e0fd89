// A chain of fewer than 2 dims given as a span fails constant evaluation at its throw.
// expect: ordo::plan_chain(dims) requires at least 2 dims
#include <ordo/core/chain.hpp>

#include <array>
#include <span>

constexpr std::array<std::size_t, 1> dims{4};
constexpr auto cost = ordo::plan_chain(std::span<const std::size_t>(dims)).cost();
