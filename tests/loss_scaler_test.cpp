#include <ordo/nn/loss_scaler.hpp>
#include <ordo/precision.hpp>

#include "support/execution_spaces.hpp"
#include "support/host_views.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace {

using ordo::detail::launch_shape;
using ordo_test::host_copy;

template <class T, class Space>
Kokkos::View<T*, typename Space::memory_space> filled(const char* name, std::size_t n, float first, float step) {
  Kokkos::View<T*, typename Space::memory_space> v(std::string(name), n);
  auto host = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < n; ++i) host(i) = ordo::to_storage<T>(first + step * static_cast<float>(i));
  Kokkos::deep_copy(v, host);
  return v;
}

// One step of PyTorch's _amp_update_scale_, written out from its definition: the oracle for the
// state machine.
struct reference_scaler {
  float scale;
  int tracker = 0;
  void step(bool found_inf, const ordo::nn::loss_scaler_options& o) {
    if (found_inf) {
      scale *= o.backoff_factor;
      tracker = 0;
    } else if (++tracker == o.growth_interval) {
      if (std::isfinite(scale * o.growth_factor)) scale *= o.growth_factor;
      tracker = 0;
    }
  }
};

}  // namespace

TEST_CASE("loss_scaler starts from GradScaler's defaults and refuses bad options") {
  const ordo::nn::loss_scaler scaler;
  CHECK(scaler.current_scale() == 65536.0f);
  CHECK(scaler.options().growth_factor == 2.0f);
  CHECK(scaler.options().backoff_factor == 0.5f);
  CHECK(scaler.options().growth_interval == 2000);
  CHECK(scaler.growth_tracker() == 0);
  CHECK(scaler.scale(ordo::half(0.5f)) == 32768.0f);
  CHECK(scaler.scale(0.25) == 16384.0);

  const auto refused = [](ordo::nn::loss_scaler_options o, const std::string& words) {
    try {
      ordo::nn::loss_scaler s(o);
      FAIL("options accepted");
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      INFO(what);
      CHECK(what.find("ordo::nn::loss_scaler") != std::string::npos);
      CHECK(what.find(words) != std::string::npos);
    }
  };
  refused({.init_scale = 0.0f}, "init_scale must be positive and finite");
  refused({.init_scale = -1.0f}, "init_scale must be positive and finite, got -1");
  refused({.init_scale = std::numeric_limits<float>::infinity()}, "init_scale");
  refused({.init_scale = std::numeric_limits<float>::quiet_NaN()}, "init_scale");
  refused({.growth_factor = 1.0f}, "growth_factor must be finite and greater than 1");
  refused({.backoff_factor = 1.0f}, "backoff_factor must lie in (0, 1)");
  refused({.backoff_factor = 0.0f}, "backoff_factor");
  refused({.growth_interval = 0}, "growth_interval must be at least 1, got 0");
}

TEST_CASE_TEMPLATE_DEFINE("loss_scaler unscales and checks gradients in one pass", Space, loss_scaler_unscale) {
  for (const auto shape : {launch_shape::host, launch_shape::device}) {
    CAPTURE(static_cast<int>(shape));
    // Gradients of different types and sizes, one of them longer than a host chunk.
    auto g_half = filled<ordo::half, Space>("g_half", 10000, -3.0f, 0.001f);
    auto g_bf16 = filled<ordo::bfloat16, Space>("g_bf16", 7, 1.0f, 2.0f);
    auto g_float = filled<float, Space>("g_float", 4097, 0.5f, 1.0f);
    // A different value in each element, so that an element unscaled twice, skipped, or read and
    // written at another element's place shows.
    Kokkos::View<double**, typename Space::memory_space> g_matrix("g_matrix", 3, 5);
    {
      auto host = Kokkos::create_mirror_view(g_matrix);
      for (std::size_t r = 0; r < 3; ++r)
        for (std::size_t c = 0; c < 5; ++c) host(r, c) = 32.0 * static_cast<double>(5 * r + c + 1);
      Kokkos::deep_copy(g_matrix, host);
    }
    Kokkos::View<float*, typename Space::memory_space> empty("empty", 0);
    const auto before_half = host_copy(g_half);
    const auto before_bf16 = host_copy(g_bf16);
    const auto before_float = host_copy(g_float);

    ordo::nn::loss_scaler scaler({.init_scale = 32.0f});
    CHECK(scaler.unscale_and_check(Space{}, shape, g_half, g_bf16, g_float, g_matrix, empty));
    CHECK(!scaler.found_non_finite());
    // 1/32 is a power of two: unscaling is exact in float, then rounded once into the storage type
    // (which only matters where a half leaves its range: 2.4e-7 / 32 underflows).
    const auto after_half = host_copy(g_half);
    const auto after_bf16 = host_copy(g_bf16);
    const auto after_float = host_copy(g_float);
    const auto after_matrix = host_copy(g_matrix);
    for (std::size_t i = 0; i < after_half.extent(0); ++i) {
      REQUIRE(after_half(i).bits() == ordo::half(static_cast<float>(before_half(i)) / 32.0f).bits());
    }
    for (std::size_t i = 0; i < after_bf16.extent(0); ++i) {
      CHECK(after_bf16(i).bits() == ordo::bfloat16(static_cast<float>(before_bf16(i)) / 32.0f).bits());
    }
    for (std::size_t i = 0; i < after_float.extent(0); ++i) REQUIRE(after_float(i) == before_float(i) / 32.0f);
    for (std::size_t r = 0; r < 3; ++r) {
      for (std::size_t c = 0; c < 5; ++c) {
        CAPTURE(r);
        CAPTURE(c);
        CHECK(after_matrix(r, c) == static_cast<double>(5 * r + c + 1));
      }
    }
    scaler.update();
    CHECK(scaler.growth_tracker() == 1);

    // One Inf or NaN anywhere in any of the Views is found; the step is to be skipped.
    for (int where = 0; where < 3; ++where) {
      CAPTURE(where);
      const float bad = where == 1 ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
      auto a = filled<ordo::half, Space>("a", 5000, 1.0f, 0.0f);
      auto b = filled<float, Space>("b", 300, 1.0f, 0.0f);
      if (where == 0) Kokkos::deep_copy(Kokkos::subview(a, std::make_pair(4999, 5000)), ordo::half(bad));
      if (where == 1) Kokkos::deep_copy(Kokkos::subview(b, std::make_pair(0, 1)), bad);
      if (where == 2) Kokkos::deep_copy(Kokkos::subview(a, std::make_pair(4096, 4097)), ordo::half(-bad));
      ordo::nn::loss_scaler s;
      CHECK(!s.unscale_and_check(Space{}, shape, b, a));
      CHECK(s.found_non_finite());
      s.update();
      CHECK(s.current_scale() == 32768.0f);
    }

    // A finite gradient that unscaling by a scale below 1 makes infinite counts as overflow.
    auto big = filled<ordo::half, Space>("big", 4, 60000.0f, 0.0f);
    ordo::nn::loss_scaler small({.init_scale = 0.5f});
    CHECK(!small.unscale_and_check(Space{}, shape, big));
    CHECK(host_copy(big)(0).is_inf());
  }
}
ORDO_TEST_ALL_SPACES(loss_scaler_unscale);

TEST_CASE("loss_scaler's state machine: growth, backoff, repeated overflow, the growth cap") {
  using Space = Kokkos::DefaultHostExecutionSpace;
  const ordo::nn::loss_scaler_options options{.init_scale = 1024.0f, .growth_factor = 4.0f, .backoff_factor = 0.25f,
                                              .growth_interval = 3};
  ordo::nn::loss_scaler scaler(options);
  reference_scaler reference{options.init_scale};
  Kokkos::View<float*, Kokkos::HostSpace> grad("grad", 8);
  // Clean, clean, clean (grow), clean, overflow (back off, reset), overflow, overflow, clean x3 (grow).
  const bool overflow[] = {false, false, false, false, true, true, true, false, false, false, false};
  const float expected_scale[] = {1024, 1024, 4096, 4096, 1024, 256, 64, 64, 64, 256, 256};
  const int expected_tracker[] = {1, 2, 0, 1, 0, 0, 0, 1, 2, 0, 1};
  for (int step = 0; step < 11; ++step) {
    CAPTURE(step);
    Kokkos::deep_copy(grad, overflow[step] ? std::numeric_limits<float>::infinity() : 1.0f);
    CHECK(scaler.unscale_and_check(Space{}, grad) == !overflow[step]);
    scaler.update();
    reference.step(overflow[step], options);
    CHECK(scaler.current_scale() == expected_scale[step]);
    CHECK(scaler.current_scale() == reference.scale);
    CHECK(scaler.growth_tracker() == expected_tracker[step]);
    CHECK(scaler.growth_tracker() == reference.tracker);
  }

  // Growth stops where the scale would leave float's range.
  ordo::nn::loss_scaler near_max({.init_scale = 0x1p126f, .growth_interval = 1});
  Kokkos::deep_copy(grad, 0.0f);
  near_max.unscale_and_check(Space{}, grad);
  near_max.update();
  CHECK(near_max.current_scale() == 0x1p127f);
  near_max.unscale_and_check(Space{}, grad);
  near_max.update();
  CHECK(near_max.current_scale() == 0x1p127f);

  // Misuse: two checks without an update, or an update without a check.
  ordo::nn::loss_scaler misuse;
  CHECK_THROWS_WITH_AS(misuse.update(), doctest::Contains("no unscale_and_check since the last update()"),
                       std::logic_error);
  misuse.unscale_and_check(Space{}, grad);
  CHECK_THROWS_WITH_AS(misuse.unscale_and_check(Space{}, grad), doctest::Contains("already called"), std::logic_error);
  Kokkos::View<float**, Kokkos::LayoutStride, Kokkos::HostSpace> strided(grad.data(), Kokkos::LayoutStride(4, 2, 1, 1));
  ordo::nn::loss_scaler fresh;
  CHECK_THROWS_WITH_AS(fresh.unscale_and_check(Space{}, grad, strided),
                       doctest::Contains("gradient 1 must be contiguous"), std::invalid_argument);
}

TEST_CASE("why scale: a small half gradient underflows unscaled and survives scaled") {
  // A gradient of 1e-8 is below half's smallest subnormal (2^-24, 6e-8): it becomes 0. Scaled by
  // 2^16 first, it is 6.6e-4, a normal half, and unscaling in float recovers it to 0.3%.
  const float gradient = 1e-8f;
  CHECK(static_cast<float>(ordo::half(gradient)) == 0.0f);
  const ordo::nn::loss_scaler scaler;
  const ordo::half scaled(scaler.scale(gradient));
  const float recovered = static_cast<float>(scaled) / scaler.current_scale();
  CHECK(std::abs(recovered - gradient) / gradient < 0.003f);
}
