// Question 12: the nested-loop make_mask, before and after.
//
// Before (Python): three nested loops call within_radius per voxel and store 8-byte floats:
//   mask = np.zeros(volume.shape)
//   for x ...: for y ...: for z ...: mask[x, y, z] = within_radius((x, y, z), roi, radius)
// After (ordo): one parallel pass over rows; along each row the inside voxels form one interval,
// found exactly, so every byte of a 1-byte mask is written once, at memory speed.
#include <ordo/kernels/mask.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>
#include "support/kokkos_session.hpp"

namespace {

// The original algorithm in C++: one function call and one 8-byte store per voxel.
bool within_radius(const double a[3], const double b[3], double radius) {
  const double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
  return std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) < radius;
}

std::vector<double> make_mask_before(std::size_t n, const double roi[3], double radius) {
  std::vector<double> mask(n * n * n, 0.0);
  for (std::size_t x = 0; x < n; ++x) {
    for (std::size_t y = 0; y < n; ++y) {
      for (std::size_t z = 0; z < n; ++z) {
        const double p[3] = {static_cast<double>(x), static_cast<double>(y), static_cast<double>(z)};
        mask[(x * n + y) * n + z] = within_radius(p, roi, radius) ? 1.0 : 0.0;
      }
    }
  }
  return mask;
}

}  // namespace

int main(int argc, char* argv[]) {
  const ordo_examples::kokkos_session kokkos(argc, argv);
  {
    const std::size_t n = 128;
    const double roi[3] = {40.5, 70.25, 64.0};
    const double radius = 30.7;

    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<double> before = make_mask_before(n, roi, radius);
    const auto t1 = std::chrono::steady_clock::now();
    const auto after = ordo::sphere_mask(Kokkos::DefaultExecutionSpace{}, {n, n, n}, {roi[0], roi[1], roi[2]}, radius);
    const auto t2 = std::chrono::steady_clock::now();

    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), after);
    std::size_t differences = 0, inside = 0;
    for (std::size_t x = 0; x < n; ++x) {
      for (std::size_t y = 0; y < n; ++y) {
        for (std::size_t z = 0; z < n; ++z) {
          differences += (before[(x * n + y) * n + z] == 1.0) != (host(x, y, z) == 1);
          inside += host(x, y, z);
        }
      }
    }
    const double ms_before = std::chrono::duration<double, std::milli>(t1 - t0).count();
    const double ms_after = std::chrono::duration<double, std::milli>(t2 - t1).count();
    std::printf("%zu^3 voxels, %zu inside; before: %.2f ms and %zu MB, after: %.2f ms and %zu MB; %zu differences\n",
                n, inside, ms_before, n * n * n * sizeof(double) >> 20, ms_after, n * n * n >> 20, differences);
    return differences == 0 ? 0 : 1;
  }
}
