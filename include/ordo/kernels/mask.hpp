#ifndef ORDO_KERNELS_MASK_HPP
#define ORDO_KERNELS_MASK_HPP

// 3-D masks on Kokkos (question 12 of the interview chapter):
//   auto m = ordo::sphere_mask(space, {nx, ny, nz}, {cx, cy, cz}, radius);  // uint8_t, 1 inside
//   ordo::fill_sphere_mask(view, {cx, cy, cz}, radius);                     // into a user's View
//   auto g = ordo::mask(space, {nx, ny, nz}, KOKKOS_LAMBDA(double x, double y, double z) { ... });
// Voxel (x, y, z) is inside the sphere exactly when sqrt((x-cx)^2 + (y-cy)^2 + (z-cz)^2) < radius
// in double, the sum taken left to right, every operation rounded once: the original
// np.linalg.norm(a - b) < radius test, bit for bit.

#include <ordo/core/config.hpp>
#include <ordo/kernels/detail/kokkos_math.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ordo {

namespace detail {

// x * y and x + y rounded once each, never fused into an FMA: compilers may contract a*b + c
// when FMA instructions are enabled, which would change the boundary voxels.
KOKKOS_INLINE_FUNCTION double multiply_rounded(double x, double y) {
#if ORDO_DEVICE_COMPILE
  return __dmul_rn(x, y);
#else
  double p = x * y;
#if defined(__GNUC__)
  __asm__("" : "+m"(p));  // the product must exist as a double before it is used
#else
  volatile double v = p;
  p = v;
#endif
  return p;
#endif
}

// fl(fl(fl(dx^2) + fl(dy^2)) + fl(dz^2)), the squared distance exactly as the reference rounds it.
KOKKOS_INLINE_FUNCTION double squared_distance(double dx, double dy, double dz) {
  return (multiply_rounded(dx, dx) + multiply_rounded(dy, dy)) + multiply_rounded(dz, dz);
}

// The smallest double t with fl(sqrt(t)) >= radius. Because the correctly rounded square root is
// monotone, fl(sqrt(d)) < radius exactly when d < t: the sphere test needs no square root.
inline double inside_threshold(double radius) {
  if (!(radius > 0)) return 0.0;  // nothing is inside
  if (std::isinf(radius)) return std::numeric_limits<double>::infinity();
  double t = radius * radius;
  if (std::isinf(t)) return t;  // sqrt of every finite d is below radius
  while (t > 0 && std::sqrt(std::nextafter(t, 0.0)) >= radius) t = std::nextafter(t, 0.0);
  while (std::sqrt(t) < radius) t = std::nextafter(t, std::numeric_limits<double>::infinity());
  return t;
}

struct sphere {
  double cx, cy, cz;
  double threshold;  // inside when the squared distance is below it
};

inline sphere make_sphere(const std::array<double, 3>& center, double radius, const char* operation) {
  if (std::isnan(center[0]) || std::isnan(center[1]) || std::isnan(center[2]) || std::isnan(radius)) {
    throw std::invalid_argument(std::string(operation) + ": the center and the radius must not be NaN");
  }
  return {center[0], center[1], center[2], inside_threshold(radius)};
}

// Writes one run of the mask along its contiguous axis, n voxels whose run coordinate c is
// measured from cc; a and b are the offsets of the other two axes, in the reference's order
// (for a run along z: (a^2 + b^2) + dc^2 with a = dx, b = dy; along x: (dc^2 + a^2) + b^2 with
// a = dy, b = dz).
// Along the run the test is monotone in |c - cc|, so the inside voxels form one interval, found
// from the square-root estimate and corrected with the exact test; every voxel is then written
// once, 0 or 1.
template <class Row>
KOKKOS_INLINE_FUNCTION void write_run(const Row& row, std::int64_t n, double a, double b, double cc,
                                      double threshold, bool run_is_x) {
  const auto inside = [&](std::int64_t c) {
    const double dc = static_cast<double>(c) - cc;
    return run_is_x ? squared_distance(dc, a, b) < threshold : squared_distance(a, b, dc) < threshold;
  };
  std::int64_t first = 0, last = -1;  // the inside interval [first, last]
  if (n > 0) {
    double nearest = cc < 0 ? 0.0 : (cc > static_cast<double>(n - 1) ? static_cast<double>(n - 1) : cc);
    std::int64_t middle = static_cast<std::int64_t>(nearest + 0.5);
    if (middle > n - 1) middle = n - 1;
    if (inside(middle)) {
      // An estimate of the half-width, then exact corrections (a step or two at most).
      const double room = threshold - (a * a + b * b);
      const double half = room > 0 ? math::sqrt(room) : 0.0;
      double low_estimate = cc - half, high_estimate = cc + half;
      first = low_estimate <= 0 ? 0 : (low_estimate >= static_cast<double>(middle) ? middle : static_cast<std::int64_t>(low_estimate));
      last = high_estimate >= static_cast<double>(n - 1) ? n - 1
                                                         : (high_estimate <= static_cast<double>(middle) ? middle : static_cast<std::int64_t>(high_estimate));
      while (first < middle && !inside(first)) ++first;
      while (first > 0 && inside(first - 1)) --first;
      while (last > middle && !inside(last)) --last;
      while (last < n - 1 && inside(last + 1)) ++last;
    }
  }
  // Three plain fills, which compilers turn into memset or vector stores; a select per byte
  // would not vectorize (64-bit compares) and ran at a tenth of memset speed.
  if (row.stride(0) == 1) {
    std::uint8_t* p = row.data();
    for (std::int64_t c = 0; c < first; ++c) p[c] = 0;
    for (std::int64_t c = first; c <= last; ++c) p[c] = 1;
    for (std::int64_t c = last + 1; c < n; ++c) p[c] = 0;
  } else {
    for (std::int64_t c = 0; c < first; ++c) row(c) = 0;
    for (std::int64_t c = first; c <= last; ++c) row(c) = 1;
    for (std::int64_t c = last + 1; c < n; ++c) row(c) = 0;
  }
}

}  // namespace detail

// Fills a rank-3 View of std::uint8_t (LayoutRight, LayoutLeft or strided) with the sphere mask,
// on the View's execution space. NaN center or radius throws std::invalid_argument; radius <= 0
// gives all zeros. Returns when done.
template <class View>
  requires(Kokkos::is_view<View>::value)
void fill_sphere_mask(const View& mask, const std::array<double, 3>& center, double radius) {
  static_assert(View::rank == 3 && std::is_same_v<typename View::value_type, std::uint8_t>,
                "ordo::fill_sphere_mask(view, center, radius) requires a rank-3 View of std::uint8_t");
  using space = typename View::execution_space;
  const detail::sphere s = detail::make_sphere(center, radius, "ordo::fill_sphere_mask");
  const std::int64_t nx = static_cast<std::int64_t>(mask.extent(0));
  const std::int64_t ny = static_cast<std::int64_t>(mask.extent(1));
  const std::int64_t nz = static_cast<std::int64_t>(mask.extent(2));
  if (nx == 0 || ny == 0 || nz == 0) return;
  if constexpr (std::is_same_v<typename View::array_layout, Kokkos::LayoutLeft>) {
    // x is contiguous: one run per (y, z).
    Kokkos::parallel_for(
        "ordo::fill_sphere_mask", Kokkos::RangePolicy<space, Kokkos::IndexType<std::int64_t>>(0, ny * nz),
        KOKKOS_LAMBDA(std::int64_t yz) {
          const std::int64_t y = yz % ny, z = yz / ny;
          const double dy = static_cast<double>(y) - s.cy, dz = static_cast<double>(z) - s.cz;
          detail::write_run(Kokkos::subview(mask, Kokkos::ALL, y, z), nx, dy, dz, s.cx, s.threshold, true);
        });
  } else {
    // z is contiguous (LayoutRight), or the layout is strided: one run per (x, y).
    Kokkos::parallel_for(
        "ordo::fill_sphere_mask", Kokkos::RangePolicy<space, Kokkos::IndexType<std::int64_t>>(0, nx * ny),
        KOKKOS_LAMBDA(std::int64_t xy) {
          const std::int64_t x = xy / ny, y = xy % ny;
          const double dx = static_cast<double>(x) - s.cx, dy = static_cast<double>(y) - s.cy;
          detail::write_run(Kokkos::subview(mask, x, y, Kokkos::ALL), nz, dx, dy, s.cz, s.threshold, false);
        });
  }
  space().fence();
}

// A new nx x ny x nz mask (LayoutRight, 1 byte per voxel) of the sphere, in space's memory.
template <class ExecutionSpace>
  requires(Kokkos::is_execution_space<ExecutionSpace>::value)
Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, typename ExecutionSpace::memory_space> sphere_mask(
    const ExecutionSpace&, const std::array<std::size_t, 3>& extents, const std::array<double, 3>& center,
    double radius) {
  (void)detail::make_sphere(center, radius, "ordo::sphere_mask");
  Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, typename ExecutionSpace::memory_space> m(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("ordo::sphere_mask")), extents[0], extents[1],
      extents[2]);
  fill_sphere_mask(m, center, radius);  // writes every voxel once
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
