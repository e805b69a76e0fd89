#ifndef ORDO_TESTS_SUPPORT_HOST_VIEWS_HPP
#define ORDO_TESTS_SUPPORT_HOST_VIEWS_HPP

// Reading a kernel's results on the host, two ways that differ when the View already lives in
// host memory:
// - host_copy(v) always allocates: a snapshot that later kernels cannot change.
// - readable_on_host(v) is v itself when v's memory is host memory (Kokkos::create_mirror_view),
//   a copy otherwise: cheap, but it changes with v.
// - contiguous_copy(v), download(v) and upload(v, host) for Views that need not be contiguous:
//   Kokkos copies between memory spaces only contiguous Views of one layout ("no available copy
//   mechanism" for a strided device View; host spaces never see the limit), but within one memory
//   space between any two layouts. The first GPU run found tests that read strided Views directly.

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>
#include <utility>

namespace ordo_test {

// A LayoutRight View of v's memory space and extents holding v's values.
template <class View>
auto contiguous_copy(const View& v) {
  using right = Kokkos::View<typename View::non_const_data_type, Kokkos::LayoutRight, typename View::memory_space>;
  return [&]<std::size_t... Axis>(std::index_sequence<Axis...>) {
    const right copy(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("ordo_test::contiguous_copy")),
                     v.extent(Axis)...);
    Kokkos::deep_copy(copy, v);
    return copy;
  }(std::make_index_sequence<View::rank>{});
}

// v's values on the host in a LayoutRight View, whatever v's layout and memory space.
template <class View>
auto download(const View& v) {
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), contiguous_copy(v));
}

// v = host, where host is a LayoutRight host View of v's extents (from download or contiguous_copy's
// mirror), whatever v's layout and memory space.
template <class View, class HostView>
void upload(const View& v, const HostView& host) {
  auto same_space = Kokkos::create_mirror_view_and_copy(typename View::memory_space(), host);
  Kokkos::deep_copy(v, same_space);
}

// Whether the host may read v's memory directly (then any layout copies to a host mirror).
template <class View>
inline constexpr bool host_readable_v =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename View::memory_space>::accessible;

template <class View>
auto host_copy(const View& v) {
  if constexpr (host_readable_v<View>) {
    auto copy = Kokkos::create_mirror(v);
    Kokkos::deep_copy(copy, v);
    return copy;
  } else {
    return download(v);  // a strided device View has no direct copy to the host
  }
}

template <class View>
auto readable_on_host(const View& v) {
  if constexpr (host_readable_v<View>) {
    auto mirror = Kokkos::create_mirror_view(v);
    Kokkos::deep_copy(mirror, v);
    return mirror;
  } else {
    return download(v);
  }
}

}  // namespace ordo_test

#endif
