// A cost beyond 64 bits in constant evaluation does not compile (never a wrapped number).
// expect: does not fit in 64 bits
#include <ordo/core/chain.hpp>

#include <array>

constexpr std::size_t big = std::size_t{1} << 32;
constexpr auto plan = ordo::plan_chain(std::array<std::size_t, 4>{big, big, big, big});
