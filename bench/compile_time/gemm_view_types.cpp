// Six View types of one layout and scalar type through ordo::gemm: before canonicalization each
// type combination instantiated the whole dispatch and its kernels; after, once.
#include <ordo/kernels/gemm.hpp>
#include <Kokkos_Core.hpp>
using space = Kokkos::DefaultExecutionSpace;
using plain = Kokkos::View<double**, Kokkos::LayoutRight, space>;
void run(const plain& a, const plain& b, const plain& c) {
  const space s;
  const Kokkos::View<const double**, Kokkos::LayoutRight, space> ca = a;
  const Kokkos::View<double**, Kokkos::LayoutRight, space, Kokkos::MemoryTraits<Kokkos::Unmanaged>> ua = a, ub = b, uc = c;
  const auto sa = Kokkos::subview(a, Kokkos::make_pair(0, 2), Kokkos::ALL);
  const auto sc = Kokkos::subview(c, Kokkos::make_pair(0, 2), Kokkos::ALL);
  const Kokkos::View<const double**, Kokkos::LayoutRight, space, Kokkos::MemoryTraits<Kokkos::RandomAccess>> ra = a;
  ordo::gemm(s, 1.0, a, b, 0.0, c);
  ordo::gemm(s, 1.0, ca, b, 0.0, c);
  ordo::gemm(s, 1.0, ua, ub, 0.0, uc);
  ordo::gemm(s, 1.0, sa, b, 0.0, sc);
  ordo::gemm(s, 1.0, ra, ub, 0.0, c);
  ordo::gemm(s, 1.0, ua, b, 0.0, uc);
}
