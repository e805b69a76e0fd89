#include <ordo/kernels/mask.hpp>

#include "support/execution_spaces.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "support/cpu_requirements.hpp"

namespace {

// The question's nested loops, with every product and sum stored through volatile so that no
// compiler setting can fuse them: sqrt(dx*dx + dy*dy + dz*dz) < radius, left to right.
std::vector<std::uint8_t> reference_mask(std::array<std::size_t, 3> n, std::array<double, 3> c, double radius) {
  std::vector<std::uint8_t> out(n[0] * n[1] * n[2]);
  for (std::size_t x = 0; x < n[0]; ++x) {
    for (std::size_t y = 0; y < n[1]; ++y) {
      for (std::size_t z = 0; z < n[2]; ++z) {
        volatile double dx = static_cast<double>(x) - c[0];
        volatile double dy = static_cast<double>(y) - c[1];
        volatile double dz = static_cast<double>(z) - c[2];
        volatile double xx = dx * dx;
        volatile double yy = dy * dy;
        volatile double zz = dz * dz;
        volatile double partial = xx + yy;
        volatile double sum = partial + zz;
        out[(x * n[1] + y) * n[2] + z] = std::sqrt(sum) < radius ? 1 : 0;
      }
    }
  }
  return out;
}

template <class View>
std::vector<std::uint8_t> to_host(const View& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<std::uint8_t> out(v.extent(0) * v.extent(1) * v.extent(2));
  for (std::size_t x = 0; x < v.extent(0); ++x) {
    for (std::size_t y = 0; y < v.extent(1); ++y) {
      for (std::size_t z = 0; z < v.extent(2); ++z) out[(x * v.extent(1) + y) * v.extent(2) + z] = h(x, y, z);
    }
  }
  return out;
}

struct mask_case {
  std::array<std::size_t, 3> n;
  std::array<double, 3> center;
  double radius;
};

std::vector<mask_case> mask_cases() {
  std::vector<mask_case> cases{
      {{1, 1, 1}, {0, 0, 0}, 0.5},
      {{1, 1, 1}, {0, 0, 0}, 0.0},            // radius 0: nothing
      {{7, 9, 11}, {3, 4, 5}, 3.0},
      {{7, 9, 11}, {3.3, 4.7, 5.1}, 3.7},     // non-integer center and radius
      {{12, 10, 8}, {-2.5, 11.0, 3.0}, 6.5},  // partly outside
      {{6, 6, 6}, {40.0, -40.0, 3.0}, 5.0},   // entirely outside
      {{9, 9, 9}, {0, 0, 0}, 5.0},            // (3,4,0) and (0,3,4) at distance exactly 5: outside
      {{13, 13, 13}, {6, 6, 6}, std::sqrt(8.0)},  // radius^2 rounds: boundary voxels at squared distance 8
      {{5, 17, 3}, {2, 8, 1}, 100.0},          // everything inside
      {{8, 8, 8}, {3.5, 3.5, 3.5}, -1.0},      // negative radius: nothing
      {{4, 5, 6}, {1, 2, 3}, std::numeric_limits<double>::infinity()},
  };
  std::mt19937_64 rng(12);
  std::uniform_int_distribution<std::size_t> extent(1, 23);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int i = 0; i < 40; ++i) {
    mask_case c{{extent(rng), extent(rng), extent(rng)}, {}, 0.0};
    for (std::size_t a = 0; a < 3; ++a) c.center[a] = (unit(rng) * 1.4 - 0.2) * static_cast<double>(c.n[a]);
    if (i % 2 == 0) {
      // Centers on the grid and radii at exact voxel distances, or one ulp either side.
      for (auto& v : c.center) v = std::round(v);
      const double r = std::sqrt(static_cast<double>(rng() % 200));
      c.radius = i % 4 == 0 ? r : std::nextafter(r, i % 8 == 2 ? 0.0 : 1e9);
    } else {
      c.radius = unit(rng) * 12.0;
    }
    cases.push_back(c);
  }
  // Non-integer centers with the sphere's boundary passing through a voxel: the radius is the
  // reference's own rounded distance to that voxel, or one ulp either side. Any change in how the
  // squared distance is rounded (a fused multiply-add, another order) flips such voxels.
  for (int i = 0; i < 60; ++i) {
    mask_case c{{15, 14, 13}, {}, 0.0};
    for (std::size_t a = 0; a < 3; ++a) c.center[a] = unit(rng) * static_cast<double>(c.n[a]);
    volatile double dx = static_cast<double>(rng() % 15) - c.center[0];
    volatile double dy = static_cast<double>(rng() % 14) - c.center[1];
    volatile double dz = static_cast<double>(rng() % 13) - c.center[2];
    volatile double xx = dx * dx, yy = dy * dy, zz = dz * dz;
    volatile double partial = xx + yy;
    volatile double sum = partial + zz;
    const double r = std::sqrt(sum);
    c.radius = i % 3 == 0 ? r : std::nextafter(r, i % 3 == 1 ? 0.0 : 1e9);
    cases.push_back(c);
  }
  return cases;
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("sphere masks are bit-identical to the nested-loop reference", ExecutionSpace, sphere_id) {
  for (const auto& c : mask_cases()) {
    CAPTURE(c.n[0]);
    CAPTURE(c.n[1]);
    CAPTURE(c.n[2]);
    CAPTURE(c.radius);
    const auto expected = reference_mask(c.n, c.center, c.radius);
    const auto m = ordo::sphere_mask(ExecutionSpace(), c.n, c.center, c.radius);
    static_assert(std::is_same_v<typename decltype(m)::array_layout, Kokkos::LayoutRight>);
    CHECK(to_host(m) == expected);

    using memory = typename ExecutionSpace::memory_space;
    Kokkos::View<std::uint8_t***, Kokkos::LayoutLeft, memory> left("left", c.n[0], c.n[1], c.n[2]);
    Kokkos::deep_copy(left, 7);
    ordo::fill_sphere_mask(left, c.center, c.radius);
    CHECK(to_host(left) == expected);

    // A strided View: the upper half of the last axis of a larger View.
    Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, memory> big("big", c.n[0], c.n[1], 2 * c.n[2]);
    Kokkos::deep_copy(big, 7);
    auto strided = Kokkos::subview(big, Kokkos::ALL, Kokkos::ALL, Kokkos::pair<std::size_t, std::size_t>(c.n[2], 2 * c.n[2]));
    static_assert(std::is_same_v<typename decltype(strided)::array_layout, Kokkos::LayoutStride>);
    ordo::fill_sphere_mask(strided, c.center, c.radius);
    CHECK(to_host(strided) == expected);
  }
}
ORDO_TEST_ALL_SPACES(sphere_id);

TEST_CASE_TEMPLATE_DEFINE("bad input and edge cases of sphere masks", ExecutionSpace, edges_id) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(ordo::sphere_mask(ExecutionSpace(), {3, 3, 3}, {nan, 0, 0}, 1.0), std::invalid_argument);
  CHECK_THROWS_WITH_AS(ordo::sphere_mask(ExecutionSpace(), {3, 3, 3}, {0, 0, 0}, nan),
                       "ordo::sphere_mask: the center and the radius must not be NaN", std::invalid_argument);
  const auto empty = ordo::sphere_mask(ExecutionSpace(), {0, 4, 4}, {0, 0, 0}, 3.0);
  CHECK(empty.size() == 0);
  CHECK(empty.extent(1) == 4);
  const auto zero = ordo::sphere_mask(ExecutionSpace(), {4, 4, 4}, {1, 1, 1}, 0.0);
  const auto host = to_host(zero);
  CHECK(std::count(host.begin(), host.end(), std::uint8_t{0}) == 64);
}
ORDO_TEST_ALL_SPACES(edges_id);

TEST_CASE_TEMPLATE_DEFINE("ordo::mask evaluates any predicate once per voxel", ExecutionSpace, predicate_id) {
  const auto m = ordo::mask(ExecutionSpace(), {5, 6, 7}, KOKKOS_LAMBDA(double x, double y, double z) {
    return x + 2 * y > z;
  });
  const auto host = to_host(m);
  std::size_t mismatches = 0, inside = 0;
  for (std::size_t x = 0; x < 5; ++x) {
    for (std::size_t y = 0; y < 6; ++y) {
      for (std::size_t z = 0; z < 7; ++z) {
        const std::uint8_t expected = static_cast<double>(x) + 2 * static_cast<double>(y) > static_cast<double>(z) ? 1 : 0;
        mismatches += host[(x * 6 + y) * 7 + z] != expected;
        inside += expected;
      }
    }
  }
  CHECK(mismatches == 0);
  CHECK(inside > 0);
}
ORDO_TEST_ALL_SPACES(predicate_id);
