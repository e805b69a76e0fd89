#ifndef ORDO_KERNELS_MASK_HPP
#define ORDO_KERNELS_MASK_HPP

// 3-D masks on Kokkos (question 12 of the interview chapter):
//   auto m = ordo::sphere_mask(space, {nx, ny, nz}, {cx, cy, cz}, radius);  // uint8_t, 1 inside
//   ordo::fill_sphere_mask(view, {cx, cy, cz}, radius);                     // into a user's View
//   ordo::fill_sphere_mask(space, view, {cx, cy, cz}, radius);              // ... on a given space
//   auto g = ordo::mask(space, {nx, ny, nz}, KOKKOS_LAMBDA(double x, double y, double z) { ... });
// Voxel (x, y, z) is inside the sphere exactly when sqrt((x-cx)^2 + (y-cy)^2 + (z-cz)^2) < radius
// in double, the sum taken left to right, every operation rounded once: the original
// np.linalg.norm(a - b) < radius test, bit for bit.

#include <ordo/kernels/detail/sphere_mask_kernels.hpp>
#include <ordo/platform/execution.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace ordo {

// Fills a rank-3 View of std::uint8_t (LayoutRight, LayoutLeft or strided) with the sphere mask,
// on `space` (by default the View's execution space), in the launch shape made for that space.
// NaN center or radius throws std::invalid_argument; radius <= 0 gives all zeros. Returns when
// done.
template <class ExecutionSpace, class View>
  requires(Kokkos::is_execution_space<ExecutionSpace>::value && Kokkos::is_view<View>::value)
void fill_sphere_mask(const ExecutionSpace& space, const View& mask, const std::array<double, 3>& center,
                      double radius) {
  static_assert(View::rank == 3 && std::is_same_v<typename View::value_type, std::uint8_t>,
                "ordo::fill_sphere_mask(space, view, center, radius) requires a rank-3 View of std::uint8_t");
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, typename View::memory_space>::accessible,
                "ordo::fill_sphere_mask(space, view, center, radius) requires a View whose memory the "
                "execution space can access");
  const detail::sphere s = detail::make_sphere(center, radius, "ordo::fill_sphere_mask");
  detail::fill_sphere_mask<detail::default_launch_shape_v<ExecutionSpace>>(space, mask, s);
  space.fence();
}

template <class View>
  requires(Kokkos::is_view<View>::value)
void fill_sphere_mask(const View& mask, const std::array<double, 3>& center, double radius) {
  fill_sphere_mask(typename View::execution_space(), mask, center, radius);
}

// A new nx x ny x nz mask (LayoutRight, 1 byte per voxel) of the sphere, in space's memory,
// filled on space.
template <class ExecutionSpace>
  requires(Kokkos::is_execution_space<ExecutionSpace>::value)
Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, typename ExecutionSpace::memory_space> sphere_mask(
    const ExecutionSpace& space, const std::array<std::size_t, 3>& extents, const std::array<double, 3>& center,
    double radius) {
  const detail::sphere s = detail::make_sphere(center, radius, "ordo::sphere_mask");
  Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, typename ExecutionSpace::memory_space> m(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("ordo::sphere_mask")), extents[0], extents[1],
      extents[2]);
  detail::fill_sphere_mask<detail::default_launch_shape_v<ExecutionSpace>>(space, m, s);  // every voxel once
  space.fence();
  return m;
}

// A mask from any predicate of the voxel coordinates (as doubles), evaluated once per voxel.
template <class ExecutionSpace, class Predicate>
  requires(Kokkos::is_execution_space<ExecutionSpace>::value)
Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, typename ExecutionSpace::memory_space> mask(
    const ExecutionSpace& space, const std::array<std::size_t, 3>& extents, const Predicate& predicate) {
  Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, typename ExecutionSpace::memory_space> m(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("ordo::mask")), extents[0], extents[1], extents[2]);
  const std::int64_t ny = static_cast<std::int64_t>(extents[1]), nz = static_cast<std::int64_t>(extents[2]);
  const std::int64_t total = static_cast<std::int64_t>(extents[0]) * ny * nz;
  // A flat range: on CPUs it beats MDRangePolicy with default tiles, and z stays contiguous.
  Kokkos::parallel_for(
      "ordo::mask", Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>(space, 0, total),
      KOKKOS_LAMBDA(std::int64_t i) {
        const std::int64_t z = i % nz, y = (i / nz) % ny, x = i / (nz * ny);
        m(x, y, z) = predicate(static_cast<double>(x), static_cast<double>(y), static_cast<double>(z)) ? 1 : 0;
      });
  space.fence();
  return m;
}

}  // namespace ordo

#endif
