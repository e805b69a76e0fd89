// Question 12: what is wrong with this code, and how would you improve it?
//
//   def within_radius(a, b, radius):
//       if np.linalg.norm(a - b) < radius: return 1
//       return 0
//   def make_mask(volume, roi, radius):
//       mask = np.zeros(volume.shape)
//       for x ...: for y ...: for z ...: mask[x, y, z] = within_radius((x, y, z), roi, radius)
//
// What is wrong: three interpreted loops call a Python function (and numpy, on a 3-element array)
// once per voxel, so it runs at microseconds per voxel; the mask is float64, 8 bytes for one bit of
// information; it runs on one core; and it tests every voxel although only a sphere's bounding
// box can be inside. Semantics to keep: inside when the Euclidean distance is strictly less than
// the radius; roi and radius may be non-integers; the sphere may stick out of the volume.
//
// This example runs three C++ versions and checks that all give the same mask, voxel by voxel:
//   1. the original algorithm ported as is (a function call, a sqrt and an 8-byte store per voxel);
//   2. the textbook improvement: a 1-byte mask zeroed first, then only the bounding box visited;
//   3. ordo::sphere_mask: one parallel pass that writes each byte once, the inside of each row
//      found as an interval, exact to the last bit (docs/masks.md).
// numpy vectorization (the usual first answer) removes the interpreter overhead of step 1 but
// still builds float64 temporaries of the whole volume; step 1 in C++ already runs without an
// interpreter, so the speed-ups printed here understate the gain over the Python original.
// Used by q12_mask.cpp and the tour.
#pragma once

#include "harness.hpp"

#include <ordo/kernels/mask.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace ordo_examples::q12 {

using space = Kokkos::DefaultHostExecutionSpace;

struct volume {
  std::size_t nx, ny, nz;
  std::size_t size() const { return nx * ny * nz; }
  std::size_t index(std::size_t x, std::size_t y, std::size_t z) const { return (x * ny + y) * nz + z; }
};

// 1. The original, line by line: norm(a - b) < radius, as np.linalg.norm computes it for three
//    values (the square root of the sum of squares, left to right).
inline int within_radius(const double a[3], const double b[3], double radius) {
  const double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
  if (std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) < radius) return 1;
  return 0;
}

inline std::vector<double> make_mask_original(const volume& v, const double roi[3], double radius) {
  std::vector<double> mask(v.size(), 0.0);  // np.zeros(volume.shape): float64
  for (std::size_t x = 0; x < v.nx; ++x) {
    for (std::size_t y = 0; y < v.ny; ++y) {
      for (std::size_t z = 0; z < v.nz; ++z) {
        const double p[3] = {static_cast<double>(x), static_cast<double>(y), static_cast<double>(z)};
        mask[v.index(x, y, z)] = within_radius(p, roi, radius);
      }
    }
  }
  return mask;
}

// 2. One byte per voxel, zeroed at memset speed, then only the bounding box of the sphere,
//    clipped to the volume, gets the test. The same test, so the same bits. The box has one voxel
//    of margin on each side, so that rounding in roi -/+ radius cannot drop a voxel the original keeps.
inline std::size_t first_index(double low) { return low <= 0 ? 0 : static_cast<std::size_t>(std::ceil(low)); }
inline std::size_t end_index(double high, std::size_t extent) {
  if (high < 0) return 0;
  return std::min(extent, static_cast<std::size_t>(std::floor(high)) + 1);
}

inline std::vector<std::uint8_t> make_mask_bounding_box(const volume& v, const double roi[3], double radius) {
  std::vector<std::uint8_t> mask(v.size());
  std::memset(mask.data(), 0, mask.size());
  if (!(radius > 0)) return mask;
  const std::size_t extents[3] = {v.nx, v.ny, v.nz};
  std::size_t begin[3], end[3];
  for (int axis = 0; axis < 3; ++axis) {
    begin[axis] = first_index(roi[axis] - radius - 1);
    end[axis] = end_index(roi[axis] + radius + 1, extents[axis]);
  }
  for (std::size_t x = begin[0]; x < end[0]; ++x) {
    for (std::size_t y = begin[1]; y < end[1]; ++y) {
      for (std::size_t z = begin[2]; z < end[2]; ++z) {
        const double p[3] = {static_cast<double>(x), static_cast<double>(y), static_cast<double>(z)};
        mask[v.index(x, y, z)] = static_cast<std::uint8_t>(within_radius(p, roi, radius));
      }
    }
  }
  return mask;
}

using host_mask = decltype(ordo::sphere_mask(space(), {1, 1, 1}, {0.0, 0.0, 0.0}, 1.0));

// The three masks of one sphere, each timed as the median of its runs.
struct masks {
  std::vector<double> original;
  std::vector<std::uint8_t> box;
  host_mask ordo;
  double original_milliseconds, box_milliseconds, ordo_milliseconds;
};

inline masks make_masks(const volume& v, const double roi[3], double radius, int loop_repetitions = 1,
                        int ordo_repetitions = 1) {
  masks r;
  r.original_milliseconds =
      median_time<std::milli>([&] { r.original = make_mask_original(v, roi, radius); }, loop_repetitions);
  r.box_milliseconds =
      median_time<std::milli>([&] { r.box = make_mask_bounding_box(v, roi, radius); }, loop_repetitions);
  r.ordo_milliseconds = median_time<std::milli>(
      [&] { r.ordo = ordo::sphere_mask(space(), {v.nx, v.ny, v.nz}, {roi[0], roi[1], roi[2]}, radius); },
      ordo_repetitions);
  return r;
}

struct comparison {
  std::size_t inside, box_differences, ordo_differences;
  bool same() const { return box_differences == 0 && ordo_differences == 0; }
};

// Compares the three masks voxel by voxel against the original.
inline comparison compare(const volume& v, const masks& m) {
  comparison c{0, 0, 0};
  for (std::size_t x = 0; x < v.nx; ++x) {
    for (std::size_t y = 0; y < v.ny; ++y) {
      for (std::size_t z = 0; z < v.nz; ++z) {
        const std::size_t i = v.index(x, y, z);
        const bool in = m.original[i] == 1.0;
        c.inside += in ? 1 : 0;
        c.box_differences += (m.box[i] == 1) != in ? 1 : 0;
        c.ordo_differences += (m.ordo(x, y, z) == 1) != in ? 1 : 0;
      }
    }
  }
  return c;
}

inline std::size_t print_comparison(const volume& v, const masks& m, const std::string& what) {
  const comparison c = compare(v, m);
  std::printf("  %zu voxels inside; differences from the original: bounding box %zu, ordo %zu\n", c.inside,
              c.box_differences, c.ordo_differences);
  expect(c.same(), what + ": every voxel must match the original");
  return c.inside;
}

// Voxel (13, 10, 10) is exactly 3 from (10, 10, 10): outside, because the test is strict.
inline constexpr volume small{24, 20, 16};
inline const double edge_centre[3] = {10.0, 10.0, 10.0};
inline bool edge_is_strict(const masks& m) {
  return m.ordo(12, 10, 10) == 1 && m.ordo(13, 10, 10) == 0 && m.original[small.index(13, 10, 10)] == 0.0;
}

// The speed test: a 128^3 volume and a sphere of radius 33.7 off its centre.
inline constexpr volume large{128, 128, 128};
inline const double large_centre[3] = {56.5, 70.25, 64.0};
inline constexpr double large_radius = 33.7;

inline double mebibytes(std::size_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// The whole answer, as q12_mask prints it; returns whether every check held.
inline bool demonstrate() {
  const int wrong_before = wrong_results;
  std::printf("Question 12: make_mask, the original loop against its improvements\n");

  std::printf("\n== Semantics on a small volume: strict <, a sphere sticking out, non-integer centre ==\n");
  const masks edge = make_masks(small, edge_centre, 3.0);
  std::printf("radius 3 around (10, 10, 10): voxel (12, 10, 10) -> %d, voxel (13, 10, 10) at distance 3 -> %d\n",
              edge.ordo(12, 10, 10), edge.ordo(13, 10, 10));
  expect(edge_is_strict(edge), "a voxel exactly at the radius must be outside");
  print_comparison(small, edge, "radius 3");
  // Centre near a corner and partly outside the volume, non-integer centre and radius.
  const double corner[3] = {-2.5, 18.75, 3.2};
  std::printf("radius 7.3 around (-2.5, 18.75, 3.2), mostly outside the volume:\n");
  print_comparison(small, make_masks(small, corner, 7.3), "sphere sticking out");

  std::printf("\n== Speed and memory on a 128^3 volume ==\n");
  const masks m = make_masks(large, large_centre, large_radius, 3, 11);
  print_comparison(large, m, "128^3");
  std::printf("  original loop (C++ port), float64 mask: %8.2f ms, %6.1f MiB\n", m.original_milliseconds,
              mebibytes(m.original.size() * sizeof(double)));
  std::printf("  1-byte mask, bounding box only:         %8.2f ms, %6.1f MiB (%.1fx faster)\n", m.box_milliseconds,
              mebibytes(m.box.size()), m.original_milliseconds / m.box_milliseconds);
  std::printf("  ordo::sphere_mask, %d threads:           %8.2f ms, %6.1f MiB (%.1fx faster)\n",
              space().concurrency(), m.ordo_milliseconds, mebibytes(m.ordo.span()),
              m.original_milliseconds / m.ordo_milliseconds);
#if defined(KOKKOS_ENABLE_SERIAL)
  // One thread: what the algorithm gains by itself, apart from the parallel loop.
  const double t_serial = median_time<std::milli>(
      [&] {
        (void)ordo::sphere_mask(Kokkos::Serial(), {large.nx, large.ny, large.nz},
                                {large_centre[0], large_centre[1], large_centre[2]}, large_radius);
      },
      11);
  std::printf("  ordo::sphere_mask on Kokkos::Serial:    %8.2f ms, %6.1f MiB (%.1fx faster)\n", t_serial,
              mebibytes(m.ordo.span()), m.original_milliseconds / t_serial);
#endif
  std::printf("  (times measured, not asserted; the Python original is slower still, by the interpreter's\n"
              "   cost of a function call and a numpy norm per voxel)\n");
  return wrong_results == wrong_before;
}

}  // namespace ordo_examples::q12
