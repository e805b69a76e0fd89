#ifndef ORDO_TESTS_SUPPORT_HOST_VIEWS_HPP
#define ORDO_TESTS_SUPPORT_HOST_VIEWS_HPP

// Reading a kernel's results on the host, two ways that differ when the View already lives in
// host memory:
// - host_copy(v) always allocates: a snapshot that later kernels cannot change.
// - readable_on_host(v) is v itself when v's memory is host memory (Kokkos::create_mirror_view),
//   a copy otherwise: cheap, but it changes with v.

#include <Kokkos_Core.hpp>

namespace ordo_test {

template <class View>
auto host_copy(const View& v) {
  auto copy = Kokkos::create_mirror(v);
  Kokkos::deep_copy(copy, v);
  return copy;
}

template <class View>
auto readable_on_host(const View& v) {
  auto mirror = Kokkos::create_mirror_view(v);
  Kokkos::deep_copy(mirror, v);
  return mirror;
}

}  // namespace ordo_test

#endif
