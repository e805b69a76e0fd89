// ordo::core needs no Kokkos: this program must not see Kokkos headers at all.
#include <ordo/core/chain.hpp>

#if __has_include(<Kokkos_Core.hpp>) && defined(KOKKOS_VERSION)
#error "ordo::core pulled in Kokkos"
#endif

int main() { return ordo::chain_cost_v<ordo::shape<2, 3>, ordo::shape<3, 4>> == 24 ? 0 : 1; }
