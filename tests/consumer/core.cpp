// ordo::core needs no Kokkos: this program must not see Kokkos headers at all. It includes the
// pure umbrella headers a core-only install must hold: <ordo/core.hpp> and <ordo/precision.hpp>
// (docs/precision.md presents the 16-bit types as pure C++20).
#include <ordo/core.hpp>
#include <ordo/precision.hpp>

#if __has_include(<Kokkos_Core.hpp>) && defined(KOKKOS_VERSION)
#error "ordo::core pulled in Kokkos"
#endif

int main() {
  const float widened = static_cast<float>(ordo::bfloat16(1.5f));  // exact in bfloat16
  return ordo::chain_cost_v<ordo::shape<2, 3>, ordo::shape<3, 4>> == 24 && widened == 1.5f ? 0 : 1;
}
