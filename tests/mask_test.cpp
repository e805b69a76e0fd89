#include <ordo/kernels/mask.hpp>

#include "support/execution_spaces.hpp"
#include "support/host_views.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
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
  // x, y, z order (row-major) whatever the View's layout.
  auto h = ordo_test::download(v);
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

// Calls f(view, name) with five outputs of an n grid in ExecutionSpace's memory, each holding 7
// before: LayoutRight, LayoutLeft (what users get by default on hosts and on CUDA), and strided
// (LayoutStride) Views whose fastest axis is z, x and y. Afterwards the memory around the strided ones must still
// hold 7: a mask writes inside its View only.
template <class ExecutionSpace, class F>
void for_each_output(const std::array<std::size_t, 3>& n, F&& f) {
  using memory = typename ExecutionSpace::memory_space;
  using pair = Kokkos::pair<std::size_t, std::size_t>;
  const auto untouched = [](const auto& v, std::size_t expected_sevens) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
    std::size_t sevens = 0;
    for (std::size_t e = 0; e < h.extent(0); ++e) sevens += h(e) == 7;
    return sevens == expected_sevens;
  };
  {
    Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, memory> right("right", n[0], n[1], n[2]);
    f(right, "LayoutRight");
    Kokkos::View<std::uint8_t***, Kokkos::LayoutLeft, memory> left("left", n[0], n[1], n[2]);
    f(left, "LayoutLeft");
  }
  const std::size_t size = n[0] * n[1] * n[2];
  {
    // The upper half of the last axis of a LayoutRight View: z fastest, stride 1, rows 2 nz apart.
    Kokkos::View<std::uint8_t*, memory> buffer("buffer", 2 * size);
    Kokkos::deep_copy(buffer, 7);
    Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, memory, Kokkos::MemoryUnmanaged> big(buffer.data(), n[0], n[1],
                                                                                             2 * n[2]);
    const auto z_fastest = Kokkos::subview(big, Kokkos::ALL, Kokkos::ALL, pair(n[2], 2 * n[2]));
    static_assert(std::is_same_v<typename decltype(z_fastest)::array_layout, Kokkos::LayoutStride>);
    f(z_fastest, "strided, z fastest");
    CHECK(untouched(buffer, size));
  }
  {
    // x fastest, then y, then z, with a gap of 2 bytes after every x row.
    const std::size_t row = n[0] + 2;
    Kokkos::View<std::uint8_t*, memory> buffer("buffer", row * n[1] * n[2]);
    Kokkos::deep_copy(buffer, 7);
    const Kokkos::View<std::uint8_t***, Kokkos::LayoutStride, memory, Kokkos::MemoryUnmanaged> x_fastest(
        buffer.data(), Kokkos::LayoutStride(n[0], 1, n[1], row, n[2], row * n[1]));
    f(x_fastest, "strided, x fastest");
    CHECK(untouched(buffer, row * n[1] * n[2] - size));
  }
  {
    // y fastest, then x, then z, with a gap of 3 bytes after every y row.
    const std::size_t row = n[1] + 3;
    Kokkos::View<std::uint8_t*, memory> buffer("buffer", row * n[0] * n[2]);
    Kokkos::deep_copy(buffer, 7);
    const Kokkos::View<std::uint8_t***, Kokkos::LayoutStride, memory, Kokkos::MemoryUnmanaged> y_fastest(
        buffer.data(), Kokkos::LayoutStride(n[0], row, n[1], 1, n[2], row * n[0]));
    f(y_fastest, "strided, y fastest");
    CHECK(untouched(buffer, row * n[0] * n[2] - size));
  }
}

// Grids of odd shapes, flat ones and lines along each axis, for the launch-shape comparison.
std::vector<mask_case> odd_grid_cases() {
  std::vector<mask_case> cases;
  const std::array<std::size_t, 3> grids[] = {{1, 1, 7},   {7, 1, 1},    {1, 7, 1},     {3, 5, 7},
                                              {17, 1, 33}, {31, 29, 37}, {64, 3, 65},   {2, 100, 3},
                                              {33, 2, 2},  {1, 1, 1},    {40, 40, 1},   {5, 64, 64}};
  for (const auto& n : grids) {
    const std::array<double, 3> middle{static_cast<double>(n[0]) / 2, static_cast<double>(n[1]) / 2,
                                       static_cast<double>(n[2]) / 2};
    const double largest = static_cast<double>(std::max({n[0], n[1], n[2]}));
    cases.push_back({n, middle, largest / 3});
    cases.push_back({n, {middle[0] - 0.3, middle[1] + 0.7, middle[2] - 1.1}, largest / 2 + 0.25});
    cases.push_back({n, {0, 0, 0}, std::sqrt(static_cast<double>(n[0] * n[0] / 4 + n[2] * n[2] / 4))});
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

TEST_CASE_TEMPLATE_DEFINE("both launch shapes of the sphere mask give the reference's bits in every output layout",
                          ExecutionSpace, shapes_id) {
  using ordo::detail::launch_shape;
  std::vector<mask_case> cases = mask_cases();
  const std::vector<mask_case> odd = odd_grid_cases();
  cases.insert(cases.end(), odd.begin(), odd.end());
  for (const auto& c : cases) {
    const auto expected = reference_mask(c.n, c.center, c.radius);
    const ordo::detail::sphere s = ordo::detail::make_sphere(c.center, c.radius, "test");
    for_each_output<ExecutionSpace>(c.n, [&](const auto& view, const char* layout) {
      CAPTURE(layout);
      CAPTURE(c.n[0]);
      CAPTURE(c.n[1]);
      CAPTURE(c.n[2]);
      CAPTURE(c.radius);
      const ExecutionSpace space;
      Kokkos::deep_copy(view, 7);
      ordo::detail::fill_sphere_mask<launch_shape::host>(space, view, s);
      space.fence();
      const auto host_shape = to_host(view);
      Kokkos::deep_copy(view, 7);
      ordo::detail::fill_sphere_mask<launch_shape::device>(space, view, s);
      space.fence();
      const auto device_shape = to_host(view);
      // The host shape with stream stores, forced on these small grids (Views whose runs are not
      // contiguous keep the plain stores).
      Kokkos::deep_copy(view, 7);
      ordo::detail::fill_sphere_mask<launch_shape::host>(space, view, s, 0);
      space.fence();
      const auto streamed = to_host(view);
      CHECK(host_shape == expected);
      CHECK(device_shape == expected);
      CHECK(device_shape == host_shape);
      CHECK(streamed == expected);
      // And through the public entry point, on this space.
      Kokkos::deep_copy(view, 7);
      ordo::fill_sphere_mask(space, view, c.center, c.radius);
      CHECK(to_host(view) == expected);
    });
  }
}
ORDO_TEST_ALL_SPACES(shapes_id);

TEST_CASE_TEMPLATE_DEFINE("streamed host masks and device blocks at every alignment write their own bytes only", ExecutionSpace,
                          streamed_id) {
  // A LayoutRight mask that starts 0 to 17 bytes into a buffer of 7s: the streamed blocks, the
  // plain head and tail bytes and the blocks where runs meet must give the reference's bits and
  // leave every byte outside the mask untouched. Runs of 1 to 40 bytes, one or many per work item.
  using memory = typename ExecutionSpace::memory_space;
  const ExecutionSpace space;
  const std::array<std::size_t, 3> grids[] = {{9, 7, 13}, {3, 4, 40}, {2, 50, 1}, {5, 5, 16}, {1, 1, 33}};
  for (const auto& n : grids) {
    const std::size_t size = n[0] * n[1] * n[2];
    const std::array<double, 3> center{static_cast<double>(n[0]) / 2 - 0.3, static_cast<double>(n[1]) / 2 + 0.2,
                                       static_cast<double>(n[2]) / 2 - 0.45};
    const double radius = static_cast<double>(std::max({n[0], n[1], n[2]})) / 2.5;
    const auto expected = reference_mask(n, center, radius);
    const ordo::detail::sphere s = ordo::detail::make_sphere(center, radius, "test");
    for (std::size_t offset = 0; offset < 18; ++offset) {
      CAPTURE(offset);
      CAPTURE(n[2]);
      Kokkos::View<std::uint8_t*, memory> buffer("buffer", size + 40);
      Kokkos::deep_copy(buffer, 7);
      const Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, memory, Kokkos::MemoryUnmanaged> mask(
          buffer.data() + offset, n[0], n[1], n[2]);
      // The streamed host shape, then the device shape's 16-byte blocks (aligned to memory, so
      // the offset moves where the runs meet the blocks).
      for (const auto shape : {ordo::detail::launch_shape::host, ordo::detail::launch_shape::device}) {
        CAPTURE(static_cast<int>(shape));
        Kokkos::deep_copy(buffer, 7);
        if (shape == ordo::detail::launch_shape::host) {
          ordo::detail::fill_sphere_mask<ordo::detail::launch_shape::host>(space, mask, s, 0);
        } else {
          ordo::detail::fill_sphere_mask<ordo::detail::launch_shape::device>(space, mask, s);
        }
        space.fence();
        CHECK(to_host(mask) == expected);
        const auto bytes = ordo_test::download(buffer);
        std::size_t sevens_outside = 0;
        for (std::size_t i = 0; i < bytes.extent(0); ++i) sevens_outside += (i < offset || i >= offset + size) && bytes(i) == 7;
        CHECK(sevens_outside == 40);
      }
    }
  }
}
ORDO_TEST_ALL_SPACES(streamed_id);

namespace {

// The device ids of the kernels named "ordo::fill_sphere_mask" launched while alive.
class mask_launch_recorder {
 public:
  mask_launch_recorder() {
    devices().clear();
    Kokkos::Tools::Experimental::set_begin_parallel_for_callback(&on_begin);
  }
  ~mask_launch_recorder() { Kokkos::Tools::Experimental::set_begin_parallel_for_callback(nullptr); }
  mask_launch_recorder(const mask_launch_recorder&) = delete;
  mask_launch_recorder& operator=(const mask_launch_recorder&) = delete;
  static std::vector<std::uint32_t>& devices() {
    static std::vector<std::uint32_t> d;
    return d;
  }

 private:
  static void on_begin(const char* name, const std::uint32_t device, std::uint64_t* id) {
    *id = 0;
    if (std::string(name) == "ordo::fill_sphere_mask") devices().push_back(device);
  }
};

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("sphere masks run on the execution space they are given", ExecutionSpace, space_id) {
  // A Serial mask in a build whose default host space is OpenMP used to run on OpenMP.
  const ExecutionSpace space;
  const std::uint32_t expected = Kokkos::Tools::Experimental::device_id(space);
  std::vector<std::uint32_t> seen;
  {
    const mask_launch_recorder recorder;
    const auto m = ordo::sphere_mask(space, {9, 8, 7}, {4, 4, 3}, 3.5);
    Kokkos::View<std::uint8_t***, Kokkos::LayoutLeft, typename ExecutionSpace::memory_space> left("left", 9, 8, 7);
    ordo::fill_sphere_mask(space, left, {4, 4, 3}, 3.5);
    CHECK(to_host(left) == to_host(m));
    seen = mask_launch_recorder::devices();
  }
  CHECK(seen.size() == 2);
  for (const std::uint32_t device : seen) CHECK(device == expected);
}
ORDO_TEST_ALL_SPACES(space_id);
