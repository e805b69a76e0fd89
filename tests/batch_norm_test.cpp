#include <ordo/core/float16.hpp>
#include <ordo/nn/batch_norm.hpp>

#include "support/execution_spaces.hpp"
#include "support/fixtures.hpp"
#include "support/host_views.hpp"

#include <array>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "support/cpu_requirements.hpp"

#if defined(KOKKOS_ENABLE_OPENMP)
#include <omp.h>
#endif

namespace {

// A case written by scripts/make_batch_norm_fixtures.py from PyTorch 1.13.
struct fixture {
  std::string name, dtype, layout;
  std::vector<std::size_t> shape;
  double eps = 0, momentum = 0;
  std::map<std::string, std::vector<double>> arrays;
};

fixture read_fixture(const std::string& name) {
  std::ifstream in(ordo_test::fixture_path("batch_norm/" + name + ".txt"));
  if (!in) throw std::runtime_error("cannot open fixture " + name);
  fixture f;
  f.name = name;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string key;
    words >> key;
    if (key == "dtype") {
      words >> f.dtype;
    } else if (key == "layout") {
      words >> f.layout;
    } else if (key == "shape") {
      std::size_t d = 0;
      while (words >> d) f.shape.push_back(d);
    } else if (key == "eps" || key == "momentum") {
      std::string hex;
      words >> hex;
      (key == "eps" ? f.eps : f.momentum) = std::strtod(hex.c_str(), nullptr);
    } else {
      std::size_t count = 0;
      words >> count;
      std::vector<double> values(count);
      for (auto& v : values) {
        std::string hex;
        words >> hex;
        v = std::strtod(hex.c_str(), nullptr);  // hexadecimal floats: PyTorch's exact values
      }
      f.arrays[key] = values;
    }
  }
  return f;
}

template <class T, class Memory, std::size_t Rank, class Layout = Kokkos::LayoutRight>
struct nd_view;
template <class T, class Memory, class Layout>
struct nd_view<T, Memory, 2, Layout> {
  using type = Kokkos::View<T**, Layout, Memory>;
};
template <class T, class Memory, class Layout>
struct nd_view<T, Memory, 3, Layout> {
  using type = Kokkos::View<T***, Layout, Memory>;
};
template <class T, class Memory, class Layout>
struct nd_view<T, Memory, 4, Layout> {
  using type = Kokkos::View<T****, Layout, Memory>;
};
template <class T, class Memory, class Layout>
struct nd_view<T, Memory, 5, Layout> {
  using type = Kokkos::View<T*****, Layout, Memory>;
};

// LayoutStride Views are made dense with their axes in a mixed order: axis 0 fastest, then axis
// 2, then axis 1 (for rank 2, LayoutLeft's order).
template <class View>
View make_view(const std::string& label, const std::vector<std::size_t>& s) {
  if constexpr (std::is_same_v<typename View::array_layout, Kokkos::LayoutStride>) {
    constexpr int rank = static_cast<int>(View::rank);
    const int order[5] = {0, rank > 2 ? 2 : 1, 1, 3, 4};
    std::size_t dims[5] = {};
    for (int r = 0; r < rank; ++r) dims[r] = s[static_cast<std::size_t>(r)];
    return View(label, Kokkos::LayoutStride::order_dimensions(rank, order, dims));
  } else if constexpr (View::rank == 2) {
    return View(label, s[0], s[1]);
  } else if constexpr (View::rank == 3) {
    return View(label, s[0], s[1], s[2]);
  } else if constexpr (View::rank == 4) {
    return View(label, s[0], s[1], s[2], s[3]);
  } else {
    return View(label, s[0], s[1], s[2], s[3], s[4]);
  }
}

// f(k, element) for the elements of a host View in row-major order (k = 0, 1, ...), whatever
// its layout: the tests' values are row-major like PyTorch's.
template <class HostView, class F>
void for_each_row_major(const HostView& h, F f) {
  constexpr std::size_t rank = HostView::rank;
  std::array<std::size_t, rank> index{};
  for (std::size_t k = 0; k < h.size(); ++k) {
    std::size_t offset = 0;
    for (std::size_t r = 0; r < rank; ++r) offset += index[r] * h.stride(r);
    f(k, h.data()[offset]);
    for (std::size_t r = rank; r-- > 0;) {
      if (++index[r] < h.extent(r)) break;
      index[r] = 0;
    }
  }
}

template <class View>
void upload(const View& v, const std::vector<double>& values) {
  REQUIRE(values.size() == v.size());
  auto host = ordo_test::download(v);  // any layout, any memory space (support/host_views.hpp)
  for_each_row_major(host, [&](std::size_t k, auto& e) { e = static_cast<typename View::non_const_value_type>(values[k]); });
  ordo_test::upload(v, host);
}

template <class View>
std::vector<double> download(const View& v) {
  auto host = ordo_test::download(v);
  std::vector<double> out(v.size());
  for_each_row_major(host, [&](std::size_t k, const auto& e) { out[k] = static_cast<double>(e); });
  return out;
}

// |a - b| <= tolerance * max(|b|, 1) elementwise.
bool close(const std::vector<double>& a, const std::vector<double>& b, double tolerance) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!(std::fabs(a[i] - b[i]) <= tolerance * std::max(std::fabs(b[i]), 1.0))) return false;
  }
  return true;
}

// Within `ulps` units in the last place of bfloat16 (8 significant bits) of b, elementwise.
bool close_in_bfloat16(const std::vector<double>& a, const std::vector<double>& b, double ulps) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    int e = 0;
    (void)std::frexp(b[i], &e);
    if (!(std::fabs(a[i] - b[i]) <= ulps * std::ldexp(1.0, std::max(e, -125) - 8))) return false;
  }
  return true;
}

template <class T, std::size_t Rank, class Space>
void check_fixture(const fixture& f) {
  using memory = typename Space::memory_space;
  using view = typename nd_view<T, memory, Rank>::type;
  using vec = Kokkos::View<ordo::compute_type_t<T>*, memory>;  // float parameters for bfloat16 x
  // bfloat16 cases: the statistics and float outputs as for float; y and dx within one bfloat16
  // ulp of PyTorch's (both compute in float and round once; they may round a value near a tie
  // apart).
  constexpr bool narrow = std::is_same_v<T, ordo::bfloat16>;
  const double tolerance = std::is_same_v<T, double> ? 1e-12 : 1e-5;
  const auto close_output = [&](const std::vector<double>& a, const std::vector<double>& b) {
    return narrow ? close_in_bfloat16(a, b, 1.0) : close(a, b, tolerance);
  };
  const std::size_t c = f.arrays.at("gamma").size();
  ordo::nn::batch_norm_options opt{.eps = f.eps, .momentum = f.momentum,
                                   .layout = f.layout == "channels_last" ? ordo::nn::channels_last : ordo::nn::channels_first};
  const view x = make_view<view>("x", f.shape), y = make_view<view>("y", f.shape), dy = make_view<view>("dy", f.shape),
             dx = make_view<view>("dx", f.shape), y_inference = make_view<view>("yi", f.shape);
  const vec gamma("gamma", c), beta("beta", c), rm("rm", c), rv("rv", c), rm0("rm0", c), rv0("rv0", c),
      dgamma("dgamma", c), dbeta("dbeta", c);
  upload(x, f.arrays.at("x"));
  upload(dy, f.arrays.at("dy"));
  upload(gamma, f.arrays.at("gamma"));
  upload(beta, f.arrays.at("beta"));
  upload(rm, f.arrays.at("running_mean_in"));
  upload(rv, f.arrays.at("running_var_in"));
  upload(rm0, f.arrays.at("running_mean_in"));
  upload(rv0, f.arrays.at("running_var_in"));

  const auto saved = ordo::nn::batch_norm_forward_training(x, gamma, beta, rm, rv, y, opt);
  CHECK(close_output(download(y), f.arrays.at("y")));
  CHECK(close(download(saved.mean), f.arrays.at("save_mean"), tolerance));
  CHECK(close(download(saved.invstd), f.arrays.at("save_invstd"), tolerance));
  CHECK(close(download(rm), f.arrays.at("running_mean_out"), tolerance));
  CHECK(close(download(rv), f.arrays.at("running_var_out"), tolerance));
  ordo::nn::batch_norm_backward(dy, x, gamma, saved, dx, dgamma, dbeta, opt);
  CHECK(close_output(download(dx), f.arrays.at("dx")));
  CHECK(close(download(dgamma), f.arrays.at("dgamma"), tolerance));
  CHECK(close(download(dbeta), f.arrays.at("dbeta"), tolerance));
  ordo::nn::batch_norm_forward_inference(x, gamma, beta, rm0, rv0, y_inference, opt);
  CHECK(close_output(download(y_inference), f.arrays.at("y_inference")));
}

template <class Space>
void check_fixture_by_rank(const fixture& f) {
  CAPTURE(f.name);
  const bool is_float = f.dtype == "float";
  if (f.dtype == "bfloat16") {
    REQUIRE(f.shape.size() == 4);
    check_fixture<ordo::bfloat16, 4, Space>(f);
    return;
  }
  switch (f.shape.size()) {
    case 2: is_float ? check_fixture<float, 2, Space>(f) : check_fixture<double, 2, Space>(f); break;
    case 3: is_float ? check_fixture<float, 3, Space>(f) : check_fixture<double, 3, Space>(f); break;
    case 4: is_float ? check_fixture<float, 4, Space>(f) : check_fixture<double, 4, Space>(f); break;
    case 5: is_float ? check_fixture<float, 5, Space>(f) : check_fixture<double, 5, Space>(f); break;
    default: FAIL("fixture of unexpected rank");
  }
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("batch norm matches PyTorch 1.13 (forward, running stats, backward, inference)", ExecutionSpace,
                          parity_id) {
  for (const char* name : {"bn1d_float", "bn1d_double", "ncl_float", "nchw_float", "nchw_double", "nhwc_float",
                           "nhwc_double", "ncdhw_float", "ndhwc_double", "nchw_bfloat16", "nhwc_bfloat16"}) {
    check_fixture_by_rank<ExecutionSpace>(read_fixture(name));
  }
}
ORDO_TEST_ALL_SPACES(parity_id);

TEST_CASE_TEMPLATE_DEFINE("backward agrees with central finite differences in double", ExecutionSpace, gradient_id) {
  using memory = typename ExecutionSpace::memory_space;
  using view = Kokkos::View<double***, Kokkos::LayoutRight, memory>;
  using vec = Kokkos::View<double*, memory>;
  const std::vector<std::size_t> shape{3, 2, 4};
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> xs(24), ws(24);
  for (auto& v : xs) v = normal(rng) + 1.0;
  for (auto& v : ws) v = normal(rng);
  const vec gamma("gamma", 2), beta("beta", 2), rm("rm", 2), rv("rv", 2), dgamma("dgamma", 2), dbeta("dbeta", 2);
  upload(gamma, {1.3, 0.7});
  upload(beta, {0.2, -0.4});
  Kokkos::deep_copy(rv, 1.0);
  // loss(x, gamma, beta) = sum w * y
  const auto loss = [&](const std::vector<double>& xv, const std::vector<double>& gv, const std::vector<double>& bv) {
    const view x = make_view<view>("x", shape), y = make_view<view>("y", shape);
    upload(x, xv);
    upload(gamma, gv);
    upload(beta, bv);
    (void)ordo::nn::batch_norm_forward_training(x, gamma, beta, rm, rv, y);
    const auto yv = download(y);
    double s = 0;
    for (std::size_t i = 0; i < yv.size(); ++i) s += ws[i] * yv[i];
    return s;
  };
  const std::vector<double> g0{1.3, 0.7}, b0{0.2, -0.4};
  const view x = make_view<view>("x", shape), y = make_view<view>("y", shape), dy = make_view<view>("dy", shape),
             dx = make_view<view>("dx", shape);
  upload(x, xs);
  upload(dy, ws);
  upload(gamma, g0);
  upload(beta, b0);
  const auto saved = ordo::nn::batch_norm_forward_training(x, gamma, beta, rm, rv, y);
  ordo::nn::batch_norm_backward(dy, x, gamma, saved, dx, dgamma, dbeta);
  const auto analytic = download(dx);
  const auto analytic_gamma = download(dgamma);
  const auto analytic_beta = download(dbeta);
  const double h = 1e-6;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    auto up = xs, down = xs;
    up[i] += h;
    down[i] -= h;
    const double numeric = (loss(up, g0, b0) - loss(down, g0, b0)) / (2 * h);
    CHECK(std::fabs(numeric - analytic[i]) <= 1e-6 * std::max(1.0, std::fabs(numeric)));
  }
  for (std::size_t c = 0; c < 2; ++c) {
    auto gu = g0, gd = g0, bu = b0, bd = b0;
    gu[c] += h;
    gd[c] -= h;
    bu[c] += h;
    bd[c] -= h;
    CHECK(std::fabs((loss(xs, gu, b0) - loss(xs, gd, b0)) / (2 * h) - analytic_gamma[c]) <= 1e-6);
    CHECK(std::fabs((loss(xs, g0, bu) - loss(xs, g0, bd)) / (2 * h) - analytic_beta[c]) <= 1e-6);
  }
}
ORDO_TEST_ALL_SPACES(gradient_id);

TEST_CASE_TEMPLATE_DEFINE("statistics of 1e4 + N(0, 1) in float stay accurate; a constant channel gives beta", ExecutionSpace,
                          stability_id) {
  using memory = typename ExecutionSpace::memory_space;
  using view = Kokkos::View<float**, Kokkos::LayoutRight, memory>;
  using vec = Kokkos::View<float*, memory>;
  const std::size_t n = 200'000;
  std::mt19937_64 rng(9);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> values(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    values[2 * i] = static_cast<float>(1e4 + normal(rng));
    values[2 * i + 1] = 3.25f;  // channel 1 is constant
  }
  view x("x", n, 2), y("y", n, 2);
  upload(x, values);
  vec gamma("gamma", 2), beta("beta", 2), rm("rm", 2), rv("rv", 2);
  upload(gamma, {1.0, 2.0});
  upload(beta, {0.0, 0.625});
  Kokkos::deep_copy(rv, 1.0f);
  const auto saved = ordo::nn::batch_norm_forward_training(x, gamma, beta, rm, rv, y);
  // Reference: two passes in long double over the float values.
  long double sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += values[2 * i];
  const long double mean = sum / n;
  long double m2 = 0;
  for (std::size_t i = 0; i < n; ++i) m2 += (values[2 * i] - mean) * (values[2 * i] - mean);
  const long double invstd = 1.0L / std::sqrt(m2 / n + 1e-5L);
  const auto mean_got = download(saved.mean);
  const auto invstd_got = download(saved.invstd);
  CHECK(std::fabs(mean_got[0] - static_cast<double>(mean)) <= 1e-9 * static_cast<double>(mean));
  CHECK(std::fabs(invstd_got[0] - static_cast<double>(invstd)) <= 1e-7 * static_cast<double>(invstd));
  // Question 4: var = 0, yet 1/sqrt(0 + eps) is finite and x - mean is exactly 0, so y = beta.
  CHECK(invstd_got[1] == 1.0 / std::sqrt(1e-5));
  const auto ys = download(y);
  bool constant_channel_is_beta = true;
  for (std::size_t i = 0; i < n; ++i) constant_channel_is_beta = constant_channel_is_beta && ys[2 * i + 1] == 0.625;
  CHECK(constant_channel_is_beta);
}
ORDO_TEST_ALL_SPACES(stability_id);

TEST_CASE_TEMPLATE_DEFINE("bad input is refused with messages naming what is wrong", ExecutionSpace, errors_id) {
  using memory = typename ExecutionSpace::memory_space;
  using vec = Kokkos::View<float*, memory>;
  vec gamma("gamma", 3), beta("beta", 3), rm("rm", 3), rv("rv", 3), wrong("wrong", 4);
  Kokkos::View<float**, Kokkos::LayoutRight, memory> one("one", 1, 3), one_y("one_y", 1, 3), empty("empty", 0, 3),
      x("x", 5, 3), y("y", 5, 3), y_bad("y_bad", 5, 4);
  CHECK_THROWS_WITH_AS(ordo::nn::batch_norm_forward_training(one, gamma, beta, rm, rv, one_y),
                       "ordo::nn::batch_norm_forward_training: expected more than 1 value per channel when training, "
                       "got input of shape (1, 3)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(ordo::nn::batch_norm_forward_training(empty, gamma, beta, rm, rv, empty),
                       "ordo::nn::batch_norm_forward_training: empty batch: x has shape (0, 3), so N * spatial = 0 "
                       "values per channel",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(ordo::nn::batch_norm_forward_training(x, wrong, beta, rm, rv, y),
                       "ordo::nn::batch_norm_forward_training: gamma has 4 entries but x has 3 channels",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(ordo::nn::batch_norm_forward_inference(x, gamma, beta, rm, wrong, y),
                       "ordo::nn::batch_norm_forward_inference: running_var has 4 entries but x has 3 channels",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(ordo::nn::batch_norm_forward_training(x, gamma, beta, rm, rv, y_bad),
                       "ordo::nn::batch_norm_forward_training: x has shape (5, 3) but y has shape (5, 4)",
                       std::invalid_argument);
  // The seams that check without running (ordo::mpi's): the same messages, under the caller's name.
  CHECK_THROWS_WITH_AS(ordo::nn::batch_norm_check_training_arguments("caller", x, wrong, beta, rm, rv, y),
                       "caller: gamma has 4 entries but x has 3 channels", std::invalid_argument);
  CHECK_THROWS_WITH_AS(ordo::nn::batch_norm_check_training_arguments("caller", x, gamma, beta, rm, rv, y_bad),
                       "caller: x has shape (5, 3) but y has shape (5, 4)", std::invalid_argument);
  CHECK_NOTHROW(ordo::nn::batch_norm_check_training_arguments("caller", empty, gamma, beta, rm, rv, empty));
  CHECK(ordo::nn::batch_norm_channels(x) == 3);
  ordo::nn::batch_norm_options last;
  last.layout = ordo::nn::channels_last;
  CHECK(ordo::nn::batch_norm_channels(x, last) == 3);
  // Contiguous Views are read in place, so they must agree on their strides.
  Kokkos::View<float**, Kokkos::LayoutLeft, memory> y_left("y_left", 5, 3), dx_left("dx_left", 5, 3);
  CHECK_THROWS_WITH_AS(ordo::nn::batch_norm_forward_training(x, gamma, beta, rm, rv, y_left),
                       "ordo::nn::batch_norm_forward_training: y has shape (5, 3) and strides (1, 5) but x has strides "
                       "(3, 1): contiguous x, y, dy and dx must have the same strides (copy one of them)",
                       std::invalid_argument);
  // An output whose elements overlap (strides (1, 1)) cannot be written.
  const vec buffer("buffer", 7);
  const Kokkos::View<float**, Kokkos::LayoutStride, memory> overlapping(buffer.data(), Kokkos::LayoutStride(5, 1, 3, 1));
  CHECK_THROWS_WITH_AS(ordo::nn::batch_norm_forward_inference(x, gamma, beta, rm, rv, overlapping),
                       "ordo::nn::batch_norm_forward_inference: y has shape (5, 3) and strides (1, 1), whose elements "
                       "overlap: an output must reach each element once",
                       std::invalid_argument);
  const auto saved = ordo::nn::batch_norm_forward_training(x, gamma, beta, rm, rv, y);
  const vec dgamma("dgamma", 3), dbeta("dbeta", 3);
  CHECK_THROWS_WITH_AS(ordo::nn::batch_norm_backward(y, x, gamma, saved, dx_left, dgamma, dbeta),
                       "ordo::nn::batch_norm_backward: dx has shape (5, 3) and strides (1, 5) but x has strides (3, 1)"
                       ": contiguous x, y, dy and dx must have the same strides (copy one of them)",
                       std::invalid_argument);
  // A non-contiguous x sets no strides: dx's are the first dense ones, and x is staged in them;
  // a dense dy with other strides is refused.
  const auto x_padded = Kokkos::subview(Kokkos::View<float**, Kokkos::LayoutLeft, memory>("x_padded", 6, 3),
                                        std::make_pair(0, 5), Kokkos::ALL);
  REQUIRE_FALSE(x_padded.span_is_contiguous());
  CHECK_THROWS_WITH_AS(ordo::nn::batch_norm_backward(y, x_padded, gamma, saved, dx_left, dgamma, dbeta),
                       "ordo::nn::batch_norm_backward: dx has shape (5, 3) and strides (1, 5) but dy has strides (3, 1)"
                       ": contiguous x, y, dy and dx must have the same strides (copy one of them)",
                       std::invalid_argument);
  // Inference with one value per channel is fine (PyTorch too).
  CHECK_NOTHROW(ordo::nn::batch_norm_forward_inference(one, gamma, beta, rm, rv, one_y));
}
ORDO_TEST_ALL_SPACES(errors_id);

TEST_CASE("channel moments merge like one pass over all the data (Chan et al.)") {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal(5e3, 2.0);
  std::vector<double> all;
  std::vector<ordo::nn::channel_moments> parts;
  for (int p = 0; p < 5; ++p) {
    std::vector<double> part(100 + 37 * static_cast<std::size_t>(p));
    for (auto& v : part) v = normal(rng);
    double mean = 0;
    for (double v : part) mean += v;
    mean /= static_cast<double>(part.size());
    double m2 = 0;
    for (double v : part) m2 += (v - mean) * (v - mean);
    parts.push_back({static_cast<double>(part.size()), mean, m2});
    all.insert(all.end(), part.begin(), part.end());
  }
  ordo::nn::channel_moments merged;
  for (const auto& p : parts) merged.merge(p);
  long double mean = 0;
  for (double v : all) mean += v;
  mean /= all.size();
  long double m2 = 0;
  for (double v : all) m2 += (v - mean) * (v - mean);
  CHECK(merged.count == static_cast<double>(all.size()));
  CHECK(std::fabs(merged.mean - static_cast<double>(mean)) <= 1e-12 * static_cast<double>(mean));
  CHECK(std::fabs(merged.m2 - static_cast<double>(m2)) <= 1e-9 * static_cast<double>(m2));
}

namespace {

// Layout of a test batch: extents and which axis holds the channels.
struct batch_shape {
  std::vector<std::size_t> extents;
  ordo::nn::memory_format layout;
  std::size_t channel_axis() const {
    return layout == ordo::nn::channels_first || extents.size() == 2 ? 1 : extents.size() - 1;
  }
  std::size_t channels() const { return extents[channel_axis()]; }
  std::size_t size() const {
    std::size_t n = 1;
    for (auto e : extents) n *= e;
    return n;
  }
  // Channel of the element at row-major flat index k.
  std::size_t channel_of(std::size_t k) const {
    for (std::size_t a = extents.size(); a-- > channel_axis() + 1;) k /= extents[a];
    return k % channels();
  }
};

// Everything one training step and its backward produce.
struct step_results {
  std::vector<double> y, mean, invstd, running_mean, running_var, dx, dgamma, dbeta, y_inference;
};

using ordo::detail::launch_shape;

template <class T, std::size_t Rank, class Space, class Layout = Kokkos::LayoutRight>
step_results run_step(const batch_shape& s, const std::vector<double>& x_values, const std::vector<double>& dy_values,
                      const std::vector<double>& gamma_values, const std::vector<double>& beta_values,
                      launch_shape shape = ordo::detail::default_launch_shape_v<Space>) {
  using memory = typename Space::memory_space;
  using view = typename nd_view<T, memory, Rank, Layout>::type;
  using P = ordo::compute_type_t<T>;  // gamma, beta and the statistics: float for 16-bit x
  using vec = Kokkos::View<P*, memory>;
  const std::size_t c = s.channels();
  const ordo::nn::batch_norm_options opt{.eps = 1e-5, .momentum = 0.25, .layout = s.layout};
  const view x = make_view<view>("x", s.extents), y = make_view<view>("y", s.extents), dy = make_view<view>("dy", s.extents),
             dx = make_view<view>("dx", s.extents), yi = make_view<view>("yi", s.extents);
  const vec gamma("gamma", c), beta("beta", c), rm("rm", c), rv("rv", c), dgamma("dgamma", c), dbeta("dbeta", c);
  upload(x, x_values);
  upload(dy, dy_values);
  upload(gamma, gamma_values);
  upload(beta, beta_values);
  Kokkos::deep_copy(rm, P(0.5));
  Kokkos::deep_copy(rv, P(2));
  const auto saved = ordo::nn::detail::forward_training(Space(), shape, x, gamma, beta, rm, rv, y, opt);
  ordo::nn::detail::backward(Space(), shape, dy, x, gamma, saved, dx, dgamma, dbeta, opt);
  ordo::nn::detail::forward_inference(Space(), shape, x, gamma, beta, rm, rv, yi, opt);
  return {download(y),  download(saved.mean), download(saved.invstd), download(rm),   download(rv),
          download(dx), download(dgamma),     download(dbeta),        download(yi)};
}

// The same step in long double, straight from the definitions (two passes per channel).
step_results reference_step(const batch_shape& s, const std::vector<double>& x, const std::vector<double>& dy,
                            const std::vector<double>& gamma, const std::vector<double>& beta) {
  const std::size_t c = s.channels(), n = s.size();
  const long double m = static_cast<long double>(n / c);
  std::vector<long double> mean(c), m2(c), sum_dy(c), dotp(c);
  for (std::size_t k = 0; k < n; ++k) mean[s.channel_of(k)] += x[k];
  for (auto& v : mean) v /= m;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t ch = s.channel_of(k);
    m2[ch] += (x[k] - mean[ch]) * (x[k] - mean[ch]);
    sum_dy[ch] += dy[k];
    dotp[ch] += (x[k] - mean[ch]) * dy[k];
  }
  step_results r;
  std::vector<long double> invstd(c), running_mean(c), running_var(c);
  for (std::size_t ch = 0; ch < c; ++ch) {
    invstd[ch] = 1.0L / std::sqrt(m2[ch] / m + 1e-5L);
    running_mean[ch] = 0.75L * 0.5L + 0.25L * mean[ch];
    running_var[ch] = 0.75L * 2.0L + 0.25L * m2[ch] / (m - 1);
    r.mean.push_back(static_cast<double>(mean[ch]));
    r.invstd.push_back(static_cast<double>(invstd[ch]));
    r.running_mean.push_back(static_cast<double>(running_mean[ch]));
    r.running_var.push_back(static_cast<double>(running_var[ch]));
    r.dgamma.push_back(static_cast<double>(dotp[ch] * invstd[ch]));
    r.dbeta.push_back(static_cast<double>(sum_dy[ch]));
  }
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t ch = s.channel_of(k);
    const long double centered = x[k] - mean[ch];
    r.y.push_back(static_cast<double>(centered * invstd[ch] * gamma[ch] + beta[ch]));
    r.dx.push_back(static_cast<double>((dy[k] - sum_dy[ch] / m - centered * invstd[ch] * invstd[ch] * dotp[ch] / m) *
                                       invstd[ch] * gamma[ch]));
    const long double inference_invstd = 1.0L / std::sqrt(running_var[ch] + 1e-5L);
    r.y_inference.push_back(static_cast<double>((x[k] - running_mean[ch]) * inference_invstd * gamma[ch] + beta[ch]));
  }
  return r;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

struct random_batch {
  std::vector<double> x, dy, gamma, beta;
};

random_batch make_batch(const batch_shape& s, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  random_batch b;
  for (std::size_t k = 0; k < s.size(); ++k) {
    b.x.push_back(3.0 + 0.5 * static_cast<double>(s.channel_of(k) % 7) + normal(rng));
    b.dy.push_back(normal(rng));
  }
  for (std::size_t ch = 0; ch < s.channels(); ++ch) {
    b.gamma.push_back(1.0 + 0.1 * normal(rng));
    b.beta.push_back(0.1 * normal(rng));
  }
  return b;
}

template <class T, class Space, class Layout = Kokkos::LayoutRight>
step_results run_step_any_rank(const batch_shape& s, const random_batch& b,
                               launch_shape shape = ordo::detail::default_launch_shape_v<Space>) {
  switch (s.extents.size()) {
    case 2: return run_step<T, 2, Space, Layout>(s, b.x, b.dy, b.gamma, b.beta, shape);
    case 3: return run_step<T, 3, Space, Layout>(s, b.x, b.dy, b.gamma, b.beta, shape);
    case 4: return run_step<T, 4, Space, Layout>(s, b.x, b.dy, b.gamma, b.beta, shape);
    default: return run_step<T, 5, Space, Layout>(s, b.x, b.dy, b.gamma, b.beta, shape);
  }
}

// Shapes around the boundaries of ordo's work items (16384 values per item; rows of at most 1024
// channels): several items per channel with a short last one, runs shorter than the 8-lane loop,
// channel chunks with a short last one, single rows.
const std::vector<batch_shape>& boundary_shapes() {
  static const std::vector<batch_shape> shapes{
      {{7, 3, 5000}, ordo::nn::channels_first},        // 3 rows per item: items of 3, 3 and 1 rows
      {{2500, 2, 3}, ordo::nn::channels_first},        // runs of 3 values: only the loops' tails
      {{3, 2, 1, 1}, ordo::nn::channels_first},        // spatial 1: handled as rows
      {{40, 1500}, ordo::nn::channels_first},          // (N, C), C > 1024: chunks of 1024 and 476 channels
      {{20, 30, 30, 3}, ordo::nn::channels_last},      // 18000 rows of 3: items of 5461 rows and a short one
      {{2, 5, 4, 3, 17}, ordo::nn::channels_last},     // rank 5, channels last
      {{3, 17, 2, 3, 2000}, ordo::nn::channels_first}  // rank 5, 12000 values per run: 1 run per item
  };
  return shapes;
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("work-item boundaries: every output matches a long double reference", ExecutionSpace,
                          boundary_id) {
  std::uint64_t seed = 100;
  for (const auto& s : boundary_shapes()) {
    CAPTURE(s.extents.size());
    CAPTURE(s.size());
    const random_batch b = make_batch(s, ++seed);
    const step_results got = run_step_any_rank<double, ExecutionSpace>(s, b);
    const step_results want = reference_step(s, b.x, b.dy, b.gamma, b.beta);
    const double tolerance = 1e-12;
    CHECK(close(got.mean, want.mean, tolerance));
    CHECK(close(got.invstd, want.invstd, tolerance));
    CHECK(close(got.running_mean, want.running_mean, tolerance));
    CHECK(close(got.running_var, want.running_var, tolerance));
    CHECK(close(got.y, want.y, tolerance));
    CHECK(close(got.dx, want.dx, tolerance));
    CHECK(close(got.dgamma, want.dgamma, tolerance));
    CHECK(close(got.dbeta, want.dbeta, tolerance));
    CHECK(close(got.y_inference, want.y_inference, tolerance));
  }
}
ORDO_TEST_ALL_SPACES(boundary_id);

#if defined(KOKKOS_ENABLE_SERIAL) && defined(KOKKOS_ENABLE_OPENMP)
TEST_CASE("the same bits on Serial and on OpenMP with this process's thread count") {
  // ctest also runs this case with 1, 2 and 4 OpenMP threads (batch_norm_test.threads_N): every
  // run equals Serial bit for bit, so all thread counts agree.
  if (const char* expected = std::getenv("ORDO_TEST_THREADS")) {
    CHECK(Kokkos::OpenMP().concurrency() == std::atoi(expected));
  }
  std::uint64_t seed = 500;
  for (const auto& s : boundary_shapes()) {
    CAPTURE(s.size());
    const random_batch b = make_batch(s, ++seed);
    const step_results serial = run_step_any_rank<float, Kokkos::Serial>(s, b);
    const step_results threads = run_step_any_rank<float, Kokkos::OpenMP>(s, b);
    for (const auto member : {&step_results::y, &step_results::mean, &step_results::invstd, &step_results::running_mean,
                              &step_results::running_var, &step_results::dx, &step_results::dgamma, &step_results::dbeta,
                              &step_results::y_inference}) {
      CHECK(same_bits(serial.*member, threads.*member));
    }
  }
}
#endif

// The holder's side of the scratch-contention test. Before each kernel that another thread
// launches (a Kokkos Tools hook), the holder writes NaNs over all it leased and only then lets the
// kernel start: a call that wrongly shared the held buffer would read NaNs, deterministically.
struct nan_writer {
  std::mutex mutex;
  std::condition_variable changed;
  std::thread::id holder;
  std::uint64_t requested = 0, written = 0;
  bool release = false;

  static nan_writer& get() {
    static nan_writer w;
    return w;
  }
  static void before_kernel(const char*, std::uint32_t, std::uint64_t*) {
    nan_writer& w = get();
    if (std::this_thread::get_id() == w.holder) return;  // the holder's own fills on a device
    std::unique_lock<std::mutex> lock(w.mutex);
    const std::uint64_t ticket = ++w.requested;
    w.changed.notify_all();
    w.changed.wait(lock, [&] { return w.written >= ticket; });
  }
};

template <class View>
void fill_with_nans(const View& v) {
  using value_type = typename View::non_const_value_type;
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename View::memory_space>::accessible) {
    for (std::size_t i = 0; i < v.extent(0); ++i) v.data()[i] = std::numeric_limits<value_type>::quiet_NaN();
  } else {
    Kokkos::deep_copy(v, std::numeric_limits<value_type>::quiet_NaN());
    Kokkos::fence();
  }
}

TEST_CASE_TEMPLATE_DEFINE("a call while another host thread holds the scratch buffer uses a buffer of its own",
                          ExecutionSpace, scratch_id) {
  using memory = typename ExecutionSpace::memory_space;
  const batch_shape s{{40, 1500}, ordo::nn::channels_first};
  const random_batch b = make_batch(s, 77);
  const step_results alone = run_step_any_rank<float, ExecutionSpace>(s, b);
  nan_writer& w = nan_writer::get();
  w.requested = w.written = 0;
  w.release = false;
  bool holding = false;
  std::thread holder([&] {
    // More than this call leases (2 * items * channels partials, 4 * channels coefficients), so
    // that a call sharing the buffer would not reallocate it.
    const ordo::nn::detail::scratch_lease<double, memory, ordo::nn::detail::scratch_slot::partials> partials(
        "held", std::int64_t{1} << 18);
    const ordo::nn::detail::scratch_lease<float, memory, ordo::nn::detail::scratch_slot::coefficients> coefficients(
        "held", std::int64_t{1} << 16);
    std::unique_lock<std::mutex> lock(w.mutex);
    w.holder = std::this_thread::get_id();
    holding = true;
    w.changed.notify_all();
    for (;;) {
      w.changed.wait(lock, [&] { return w.release || w.requested > w.written; });
      if (w.release) break;
      fill_with_nans(partials.part(0, std::int64_t{1} << 18));
      fill_with_nans(coefficients.part(0, std::int64_t{1} << 16));
      w.written = w.requested;
      w.changed.notify_all();
    }
  });
  {
    std::unique_lock<std::mutex> lock(w.mutex);
    w.changed.wait(lock, [&] { return holding; });
  }
  Kokkos::Tools::Experimental::set_begin_parallel_for_callback(&nan_writer::before_kernel);
  Kokkos::Tools::Experimental::set_begin_parallel_reduce_callback(&nan_writer::before_kernel);
  Kokkos::Tools::Experimental::set_begin_parallel_scan_callback(&nan_writer::before_kernel);
  const step_results contended = run_step_any_rank<float, ExecutionSpace>(s, b);
  Kokkos::Tools::Experimental::set_begin_parallel_for_callback(nullptr);
  Kokkos::Tools::Experimental::set_begin_parallel_reduce_callback(nullptr);
  Kokkos::Tools::Experimental::set_begin_parallel_scan_callback(nullptr);
  std::uint64_t fills = 0;
  {
    const std::lock_guard<std::mutex> lock(w.mutex);
    fills = w.written;
    w.release = true;
  }
  w.changed.notify_all();
  holder.join();
  // The premise: the holder wrote its NaNs before every kernel of the call.
  CHECK(fills >= 4);
  CHECK(same_bits(contended.y, alone.y));
  CHECK(same_bits(contended.dx, alone.dx));
  CHECK(same_bits(contended.dgamma, alone.dgamma));
  CHECK(same_bits(contended.running_var, alone.running_var));
  CHECK(same_bits(contended.y_inference, alone.y_inference));
}
ORDO_TEST_ALL_SPACES(scratch_id);

#if defined(KOKKOS_ENABLE_OPENMP)
namespace {

// A batch and everything a training step and its backward write, on the host.
struct instance_batch {
  using batch = Kokkos::View<float****, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using channels = Kokkos::View<float*, Kokkos::HostSpace>;
  static constexpr std::size_t n = 24, c = 16, h = 68, w = 68;  // 1.8M values
  batch x{"x", n, c, h, w}, y{"y", n, c, h, w}, dy{"dy", n, c, h, w}, dx{"dx", n, c, h, w};
  channels gamma{"gamma", c}, beta{"beta", c}, running_mean{"running mean", c}, running_var{"running var", c},
      dgamma{"dgamma", c}, dbeta{"dbeta", c};

  explicit instance_batch(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (std::size_t k = 0; k < x.size(); ++k) {
      x.data()[k] = uniform(rng) + 0.5f * static_cast<float>(k / (h * w) % c);
      dy.data()[k] = uniform(rng);
    }
    for (std::size_t k = 0; k < c; ++k) {
      gamma(k) = 1.0f + uniform(rng) / 4;
      beta(k) = uniform(rng) / 4;
    }
  }

  // One step from fresh running statistics through the entry points that take an instance; the
  // outputs, concatenated.
  std::vector<float> step(const Kokkos::OpenMP& space) const {
    for (std::size_t k = 0; k < c; ++k) {
      running_mean(k) = 0.0f;
      running_var(k) = 1.0f;
    }
    const auto saved = ordo::nn::batch_norm_forward_training(space, x, gamma, beta, running_mean, running_var, y);
    ordo::nn::batch_norm_backward(space, dy, x, gamma, saved, dx, dgamma, dbeta);
    std::vector<float> out;
    const auto append = [&out](const auto& v) { out.insert(out.end(), v.data(), v.data() + v.size()); };
    append(y);
    append(dx);
    append(dgamma);
    append(dbeta);
    append(running_mean);
    append(running_var);
    return out;
  }
};

// Runs `steps` steps of one batch on one instance after both threads reached the start, and
// counts the steps whose outputs differ from expected.
int differing_steps(const instance_batch& b, const Kokkos::OpenMP& space, const std::vector<float>& expected,
                    std::atomic<int>& ready, int steps) {
  ready.fetch_add(1);
  while (ready.load() < 2) std::this_thread::yield();
  int differing = 0;
  for (int s = 0; s < steps; ++s) differing += b.step(space) != expected;
  return differing;
}

}  // namespace

TEST_CASE("two batch norms on two OpenMP partition instances at once each give the one-instance result") {
  if (Kokkos::OpenMP().concurrency() < 2) {
    MESSAGE("skipped: two partitions need 2 OpenMP threads, this process has " << Kokkos::OpenMP().concurrency());
    return;
  }
  const instance_batch a(1), b(2);
  const std::vector<float> alone_a = a.step(Kokkos::OpenMP()), alone_b = b.step(Kokkos::OpenMP());
  REQUIRE(alone_a != alone_b);
  constexpr int steps = 12;  // a step takes a few milliseconds: the two runs overlap many times
  std::atomic<int> ready{0};
  int differing_a = -1, differing_b = -1;
#if KOKKOS_VERSION >= 40000
  // Kokkos 4: two instances of one thread each, driven from two host threads.
  const auto parts = Kokkos::Experimental::partition_space(Kokkos::OpenMP(), 1, 1);
  std::thread first([&] { differing_a = differing_steps(a, parts[0], alone_a, ready, steps); });
  std::thread second([&] { differing_b = differing_steps(b, parts[1], alone_b, ready, steps); });
  first.join();
  second.join();
#else
  // Kokkos 3.4: partition_master runs f on the master thread of each partition, where
  // Kokkos::OpenMP() is that partition's instance. Partitions need nested OpenMP.
  const int levels = omp_get_max_active_levels();
  omp_set_max_active_levels(2);
  int partitions = 0;
  Kokkos::OpenMP::partition_master(
      [&](int id, int count) {
        if (id == 0) {
          partitions = count;
          differing_a = differing_steps(a, Kokkos::OpenMP(), alone_a, ready, steps);
        } else {
          differing_b = differing_steps(b, Kokkos::OpenMP(), alone_b, ready, steps);
        }
      },
      2, 1);
  omp_set_max_active_levels(levels);
  REQUIRE(partitions == 2);
#endif
  CHECK(differing_a == 0);
  CHECK(differing_b == 0);
}
#endif

TEST_CASE_TEMPLATE_DEFINE("float element passes stay within 8 ulps of their terms, even around a mean of 1e4",
                          ExecutionSpace, element_accuracy_id) {
  // y and dx are computed in float with the mean split into two floats; a single float mean would
  // be off by up to ulp(1e4) / 2 ~ 5e-4 and miss this bound by a factor of about 1000.
  const double u = std::ldexp(1.0, -24);
  for (const batch_shape& s : {batch_shape{{5000, 3}, ordo::nn::channels_first},
                               batch_shape{{4, 3, 50, 50}, ordo::nn::channels_first},
                               batch_shape{{4, 50, 50, 3}, ordo::nn::channels_last}}) {
    CAPTURE(s.extents.size());
    std::mt19937_64 rng(31);
    std::normal_distribution<double> normal(0.0, 1.0);
    random_batch b;
    for (std::size_t k = 0; k < s.size(); ++k) {
      b.x.push_back(static_cast<float>(1e4 + 100.0 * static_cast<double>(s.channel_of(k)) + normal(rng)));
      b.dy.push_back(static_cast<float>(normal(rng)));
    }
    b.gamma = {1.5, -0.75, 2.0};
    b.beta = {0.25, 3.0, -1.0};
    const step_results got = run_step_any_rank<float, ExecutionSpace>(s, b);
    const step_results want = reference_step(s, b.x, b.dy, b.gamma, b.beta);
    // The reference's terms, to scale the bound.
    const std::size_t c = s.channels(), n = s.size();
    std::vector<long double> mean(c), m2(c), sum_dy(c), dotp(c);
    for (std::size_t k = 0; k < n; ++k) mean[s.channel_of(k)] += b.x[k];
    for (auto& v : mean) v /= static_cast<long double>(n / c);
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t ch = s.channel_of(k);
      m2[ch] += (b.x[k] - mean[ch]) * (b.x[k] - mean[ch]);
      sum_dy[ch] += b.dy[k];
      dotp[ch] += (b.x[k] - mean[ch]) * b.dy[k];
    }
    double worst_y = 0, worst_dx = 0;
    const long double m = static_cast<long double>(n / c);
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t ch = s.channel_of(k);
      const long double invstd = 1.0L / std::sqrt(m2[ch] / m + 1e-5L);
      const long double centered = b.x[k] - mean[ch];
      const double y_terms = static_cast<double>(std::fabs(centered * invstd * b.gamma[ch]) + std::fabs(b.beta[ch]));
      const double dx_terms = static_cast<double>(
          (std::fabs(b.dy[k]) + std::fabs(sum_dy[ch] / m) + std::fabs(centered * invstd * invstd * dotp[ch] / m)) *
          std::fabs(invstd * b.gamma[ch]));
      worst_y = std::max(worst_y, std::fabs(got.y[k] - want.y[k]) / y_terms);
      worst_dx = std::max(worst_dx, std::fabs(got.dx[k] - want.dx[k]) / dx_terms);
    }
    CAPTURE(worst_y / u);
    CAPTURE(worst_dx / u);
    CHECK(worst_y <= 8 * u);
    CHECK(worst_dx <= 8 * u);
  }
}
ORDO_TEST_ALL_SPACES(element_accuracy_id);

TEST_CASE_TEMPLATE_DEFINE("a batch without channels gives empty results", ExecutionSpace, no_channels_id) {
  // (PyTorch 1.13's CPU native_batch_norm stops with SIGFPE on an (N, 0) input.)
  using memory = typename ExecutionSpace::memory_space;
  using vec = Kokkos::View<float*, memory>;
  for (const auto layout : {ordo::nn::channels_first, ordo::nn::channels_last}) {
    Kokkos::View<float**, Kokkos::LayoutRight, memory> x("x", 4, 0), y("y", 4, 0), dy("dy", 4, 0), dx("dx", 4, 0);
    Kokkos::View<float****, Kokkos::LayoutRight, memory> x4("x4", 2, 0, 3, 3), y4("y4", 2, 0, 3, 3);
    vec gamma("gamma", 0), beta("beta", 0), rm("rm", 0), rv("rv", 0), dgamma("dgamma", 0), dbeta("dbeta", 0);
    const ordo::nn::batch_norm_options opt{.layout = layout};
    const auto saved = ordo::nn::batch_norm_forward_training(x, gamma, beta, rm, rv, y, opt);
    CHECK(saved.mean.extent(0) == 0);
    CHECK(saved.invstd.extent(0) == 0);
    CHECK_NOTHROW(ordo::nn::batch_norm_backward(dy, x, gamma, saved, dx, dgamma, dbeta, opt));
    CHECK_NOTHROW(ordo::nn::batch_norm_forward_inference(x, gamma, beta, rm, rv, y, opt));
    if (layout == ordo::nn::channels_first) {
      CHECK(ordo::nn::batch_norm_forward_training(x4, gamma, beta, rm, rv, y4, opt).mean.extent(0) == 0);
    }
  }
}
ORDO_TEST_ALL_SPACES(no_channels_id);

namespace {

// The batch with every value rounded to float, so that a float run and the long double reference
// see the same inputs.
random_batch rounded_to_float(random_batch b) {
  for (auto* values : {&b.x, &b.dy, &b.gamma, &b.beta}) {
    for (double& v : *values) v = static_cast<double>(static_cast<float>(v));
  }
  return b;
}

// Each result through an accessor function: nvcc prints a pointer-to-data-member declaration back
// to the host compiler with parentheses that -Wparentheses rejects.
struct named_result {
  const char* name;
  const std::vector<double>& (*of)(const step_results&);
};
#define ORDO_TEST_RESULT(field) \
  named_result { #field, [](const step_results& r) -> const std::vector<double>& { return r.field; } }
const named_result every_result[] = {ORDO_TEST_RESULT(y),           ORDO_TEST_RESULT(mean),
                                     ORDO_TEST_RESULT(invstd),      ORDO_TEST_RESULT(running_mean),
                                     ORDO_TEST_RESULT(running_var), ORDO_TEST_RESULT(dx),
                                     ORDO_TEST_RESULT(dgamma),      ORDO_TEST_RESULT(dbeta),
                                     ORDO_TEST_RESULT(y_inference)};
#undef ORDO_TEST_RESULT

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("the host kernels of every instruction set match a long double reference, and the AVX2 "
                          "and AVX-512 kernels chosen at run time give the baseline kernels' bits",
                          ExecutionSpace, dispatch_id) {
  using ordo::detail::cpu_capability;
  const cpu_capability before = ordo::detail::host_capability();
  std::vector<cpu_capability> levels;
  for (const cpu_capability level : {cpu_capability::avx2, cpu_capability::avx512}) {
    if (ordo::detail::set_host_capability(level) == level) {
      levels.push_back(level);
    } else {
      // batch_norm_test_fma (-mavx2 -mfma) and non-x86 builds have one set of kernels, built for
      // the target's instruction set; a CPU without the level runs the others. Those are still checked.
      // std::string: doctest under nvcc prints a const char* as its address.
      MESSAGE("no " << std::string(ordo::detail::to_string(level)) << " kernels in this build or on this CPU: not compared");
    }
  }
  std::uint64_t seed = 900;
  for (const auto& s : boundary_shapes()) {
    CAPTURE(s.size());
    const random_batch b = rounded_to_float(make_batch(s, ++seed));
    const step_results want = reference_step(s, b.x, b.dy, b.gamma, b.beta);
    ordo::detail::set_host_capability(cpu_capability::baseline);
    const step_results baseline = run_step_any_rank<float, ExecutionSpace>(s, b);
    for (const auto& result : every_result) {
      const std::string name = result.name;
      CAPTURE(name);
      // The float tolerance of the PyTorch fixtures; the kernels' own bounds are far tighter.
      CHECK(close(result.of(baseline), result.of(want), 1e-5));
    }
    // 16-bit storage too: the AVX2 and AVX-512 kernels convert half with F16C.
    ordo::detail::set_host_capability(cpu_capability::baseline);
    const step_results baseline_half = run_step_any_rank<ordo::half, ExecutionSpace>(s, b);
    const step_results baseline_bfloat16 = run_step_any_rank<ordo::bfloat16, ExecutionSpace>(s, b);
    for (const cpu_capability level : levels) {
      const std::string level_name = ordo::detail::to_string(level);
      CAPTURE(level_name);
      ordo::detail::set_host_capability(level);
      const step_results dispatched = run_step_any_rank<float, ExecutionSpace>(s, b);
      const step_results dispatched_half = run_step_any_rank<ordo::half, ExecutionSpace>(s, b);
      const step_results dispatched_bfloat16 = run_step_any_rank<ordo::bfloat16, ExecutionSpace>(s, b);
      for (const auto& result : every_result) {
        const std::string name = result.name;
        CAPTURE(name);
        CHECK(same_bits(result.of(dispatched), result.of(baseline)));
        CHECK(same_bits(result.of(dispatched_half), result.of(baseline_half)));
        CHECK(same_bits(result.of(dispatched_bfloat16), result.of(baseline_bfloat16)));
      }
    }
  }
  ordo::detail::set_host_capability(before);
}
ORDO_TEST_ALL_SPACES(dispatch_id);

TEST_CASE_TEMPLATE_DEFINE("channels-last float statistics stay accurate when an item's first row is an outlier",
                          ExecutionSpace, outlier_id) {
  // Rows of float are summed in one pass around the item's first row K; the bound on the
  // cancellation (docs/batch_norm.md) is worst when K lies far from the mean. 3000 rows of 4
  // channels form one work item.
  using memory = typename ExecutionSpace::memory_space;
  const std::size_t n = 3000, c = 4;
  std::mt19937_64 rng(12);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> values(n * c);
  for (std::size_t i = 0; i < n; ++i) {
    values[i * c + 0] = static_cast<float>(i == 0 ? 1e4 + 1e3 : 1e4 + normal(rng));  // outlier first
    values[i * c + 1] = static_cast<float>(i == 0 ? -5e3 : 1e-3 * normal(rng));       // tiny spread, huge K
    values[i * c + 2] = static_cast<float>(3.0 + normal(rng));
    // Mean 1e6, spread 0.1 (steps of float's ulp there, 1/16): E[x^2] - E[x]^2 in double would
    // lose everything here.
    values[i * c + 3] = 1e6 + 0.0625 * static_cast<double>(static_cast<int>(rng() % 7) - 3);
  }
  Kokkos::View<float**, Kokkos::LayoutRight, memory> x("x", n, c), y("y", n, c);
  upload(x, values);
  Kokkos::View<float*, memory> gamma("gamma", c), beta("beta", c), rm("rm", c), rv("rv", c);
  Kokkos::deep_copy(gamma, 1.0f);
  Kokkos::deep_copy(rv, 1.0f);
  const auto saved = ordo::nn::batch_norm_forward_training(x, gamma, beta, rm, rv, y);
  const auto mean_got = download(saved.mean);
  const auto invstd_got = download(saved.invstd);
  for (std::size_t ch = 0; ch < c; ++ch) {
    long double sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += values[i * c + ch];
    const long double mean = sum / n;
    long double m2 = 0;
    for (std::size_t i = 0; i < n; ++i) m2 += (values[i * c + ch] - mean) * (values[i * c + ch] - mean);
    const long double invstd = 1.0L / std::sqrt(m2 / n + 1e-5L);
    CAPTURE(ch);
    // The mean is accurate relative to the channel's spread (what x - mean is compared with).
    const double spread = std::max(std::fabs(static_cast<double>(mean)), static_cast<double>(std::sqrt(m2 / n)));
    CHECK(std::fabs(mean_got[ch] - static_cast<double>(mean)) <= 1e-12 * spread);
    CHECK(std::fabs(invstd_got[ch] - static_cast<double>(invstd)) <= 1e-9 * static_cast<double>(invstd));
  }
}
ORDO_TEST_ALL_SPACES(outlier_id);

namespace {

// One training step run in phases over parts of the batch, as ranks or devices would: each part's
// statistics, merged in part order, applied to every part; the same for the gradient sums.
// Parts split the batch along N, so each part is a contiguous range of x.
template <class T, std::size_t Rank, class Space>
step_results run_step_in_parts(const batch_shape& s, const random_batch& b, const std::vector<std::size_t>& part_rows) {
  using memory = typename Space::memory_space;
  using view = typename nd_view<T, memory, Rank>::type;
  using vec = Kokkos::View<T*, memory>;
  const std::size_t c = s.channels(), per_row = s.size() / s.extents[0];
  const ordo::nn::batch_norm_options opt{.eps = 1e-5, .momentum = 0.25, .layout = s.layout};
  const vec gamma("gamma", c), beta("beta", c), rm("rm", c), rv("rv", c), dgamma("dgamma", c), dbeta("dbeta", c);
  upload(gamma, b.gamma);
  upload(beta, b.beta);
  Kokkos::deep_copy(rm, T(0.5));
  Kokkos::deep_copy(rv, T(2));
  struct part {
    view x, dy, y, dx;
  };
  std::vector<part> parts;
  std::size_t first_row = 0;
  for (const std::size_t rows : part_rows) {
    std::vector<std::size_t> extents = s.extents;
    extents[0] = rows;
    const auto slice = [&](const std::vector<double>& all) {
      return std::vector<double>(all.begin() + static_cast<std::ptrdiff_t>(first_row * per_row),
                                 all.begin() + static_cast<std::ptrdiff_t>((first_row + rows) * per_row));
    };
    part p{make_view<view>("x", extents), make_view<view>("dy", extents), make_view<view>("y", extents),
           make_view<view>("dx", extents)};
    upload(p.x, slice(b.x));
    upload(p.dy, slice(b.dy));
    parts.push_back(p);
    first_row += rows;
  }
  REQUIRE(first_row == s.extents[0]);
  auto statistics = ordo::nn::batch_norm_local_statistics(parts[0].x, opt);
  for (std::size_t i = 1; i < parts.size(); ++i) {
    statistics = ordo::nn::merge(statistics, ordo::nn::batch_norm_local_statistics(parts[i].x, opt));
  }
  CHECK(statistics.count == static_cast<double>(s.size() / c));
  ordo::nn::batch_norm_saved<memory> saved;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    // The running statistics are updated once per step: every part but the first updates copies.
    const vec rm_i = i == 0 ? rm : vec("rm copy", c), rv_i = i == 0 ? rv : vec("rv copy", c);
    saved = ordo::nn::batch_norm_apply_statistics(statistics, parts[i].x, gamma, beta, rm_i, rv_i, parts[i].y, opt);
  }
  auto sums = ordo::nn::batch_norm_local_gradient_sums(parts[0].dy, parts[0].x, saved, opt);
  for (std::size_t i = 1; i < parts.size(); ++i) {
    sums = ordo::nn::merge(sums, ordo::nn::batch_norm_local_gradient_sums(parts[i].dy, parts[i].x, saved, opt));
  }
  for (const part& p : parts) {
    ordo::nn::batch_norm_apply_gradient_sums(sums, p.dy, p.x, gamma, saved, p.dx, dgamma, dbeta, opt);
  }
  step_results r{{}, download(saved.mean), download(saved.invstd), download(rm), download(rv), {},
                 download(dgamma), download(dbeta), {}};
  for (const part& p : parts) {
    const auto y = download(p.y), dx = download(p.dx);
    r.y.insert(r.y.end(), y.begin(), y.end());
    r.dx.insert(r.dx.end(), dx.begin(), dx.end());
  }
  return r;
}

template <class Space>
step_results run_step_in_parts_any_rank(const batch_shape& s, const random_batch& b,
                                        const std::vector<std::size_t>& part_rows) {
  switch (s.extents.size()) {
    case 2: return run_step_in_parts<double, 2, Space>(s, b, part_rows);
    case 3: return run_step_in_parts<double, 3, Space>(s, b, part_rows);
    default: return run_step_in_parts<double, 4, Space>(s, b, part_rows);
  }
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("training in phases over parts of the batch matches the whole batch", ExecutionSpace,
                          phases_id) {
  const std::vector<std::pair<batch_shape, std::vector<std::size_t>>> cases{
      {{{10, 3, 700}, ordo::nn::channels_first}, {4, 6}},
      {{{9, 5, 7, 4}, ordo::nn::channels_last}, {2, 3, 4}},
      {{{40, 1500}, ordo::nn::channels_first}, {39, 1}},
      // Empty parts (an MPI rank without samples): count 0, the identity of merge.
      {{{10, 3, 700}, ordo::nn::channels_first}, {0, 4, 0, 6}},
      {{{9, 5, 7, 4}, ordo::nn::channels_last}, {2, 0, 7, 0}},
  };
  std::uint64_t seed = 500;
  for (const auto& test : cases) {
    // Not a structured binding: clang 14 cannot capture one in the lambdas below.
    const batch_shape& s = test.first;
    const std::vector<std::size_t>& rows = test.second;
    CAPTURE(s.extents.size());
    CAPTURE(rows.size());
    const random_batch b = make_batch(s, ++seed);
    const step_results want = reference_step(s, b.x, b.dy, b.gamma, b.beta);
    const step_results got = run_step_in_parts_any_rank<ExecutionSpace>(s, b, rows);
    const double tolerance = 1e-12;
    CHECK(close(got.mean, want.mean, tolerance));
    CHECK(close(got.invstd, want.invstd, tolerance));
    CHECK(close(got.running_mean, want.running_mean, tolerance));
    CHECK(close(got.running_var, want.running_var, tolerance));
    CHECK(close(got.y, want.y, tolerance));
    CHECK(close(got.dx, want.dx, tolerance));
    CHECK(close(got.dgamma, want.dgamma, tolerance));
    CHECK(close(got.dbeta, want.dbeta, tolerance));
    // One part is the one-call path split into its phases: the same bits.
    const step_results one_call = run_step_any_rank<double, ExecutionSpace>(s, b);
    const step_results one_part = run_step_in_parts_any_rank<ExecutionSpace>(s, b, {s.extents[0]});
    CHECK(same_bits(one_part.y, one_call.y));
    CHECK(same_bits(one_part.mean, one_call.mean));
    CHECK(same_bits(one_part.invstd, one_call.invstd));
    CHECK(same_bits(one_part.dx, one_call.dx));
    CHECK(same_bits(one_part.dgamma, one_call.dgamma));
    CHECK(same_bits(one_part.dbeta, one_call.dbeta));
  }
}
ORDO_TEST_ALL_SPACES(phases_id);

TEST_CASE_TEMPLATE_DEFINE("phases refuse statistics and sums that do not fit x", ExecutionSpace, phase_errors_id) {
  using memory = typename ExecutionSpace::memory_space;
  using view = Kokkos::View<double**, Kokkos::LayoutRight, memory>;
  using vec = Kokkos::View<double*, memory>;
  const view x("x", 4, 3), y("y", 4, 3), x1("x1", 1, 3), y1("y1", 1, 3), wide("wide", 4, 5);
  const vec gamma("gamma", 3), beta("beta", 3), rm("rm", 3), rv("rv", 3), dgamma("dgamma", 3), dbeta("dbeta", 3);
  Kokkos::deep_copy(gamma, 1.0);
  const auto statistics = ordo::nn::batch_norm_local_statistics(x);
  CHECK_THROWS_WITH_AS(ordo::nn::batch_norm_apply_statistics(statistics, wide, gamma, beta, rm, rv, wide),
                       "ordo::nn::batch_norm_apply_statistics: gamma has 3 entries but x has 5 channels",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(ordo::nn::merge(statistics, ordo::nn::batch_norm_local_statistics(wide)),
                       "ordo::nn::merge(batch_norm_statistics): a.mean has shape (3) but b.mean has shape (5)",
                       std::invalid_argument);
  // A part of one row may be trained on when the merged statistics cover more; alone it may not.
  CHECK_THROWS_WITH_AS(
      ordo::nn::batch_norm_apply_statistics(ordo::nn::batch_norm_local_statistics(x1), x1, gamma, beta, rm, rv, y1),
      "ordo::nn::batch_norm_apply_statistics: expected more than 1 value per channel when training, got statistics "
      "of 1 values per channel",
      std::invalid_argument);
  const auto merged = ordo::nn::merge(ordo::nn::batch_norm_local_statistics(x1), statistics);
  CHECK_NOTHROW(ordo::nn::batch_norm_apply_statistics(merged, x1, gamma, beta, rm, rv, y1));
  const auto saved = ordo::nn::batch_norm_apply_statistics(statistics, x, gamma, beta, rm, rv, y);
  ordo::nn::batch_norm_gradient_sums<memory> empty{0, vec("sum_dy", 3), vec("dotp", 3)};
  CHECK_THROWS_WITH_AS(ordo::nn::batch_norm_apply_gradient_sums(empty, y, x, gamma, saved, y, dgamma, dbeta),
                       "ordo::nn::batch_norm_apply_gradient_sums: the sums cover no values (count 0)",
                       std::invalid_argument);
}
ORDO_TEST_ALL_SPACES(phase_errors_id);

TEST_CASE_TEMPLATE_DEFINE("LayoutLeft and LayoutStride Views give the long double reference's results", ExecutionSpace,
                          layouts_id) {
  // LayoutLeft is what a plain View gets on CUDA; the kernels read it as (outer, C, inner) blocks
  // with its own strides (LayoutLeft NCHW: (H W, C, N)). The LayoutStride Views are dense in a
  // mixed axis order (make_view).
  std::uint64_t seed = 700;
  for (const batch_shape& s : {batch_shape{{40, 6}, ordo::nn::channels_first},
                               batch_shape{{5, 3, 7, 9}, ordo::nn::channels_first},
                               batch_shape{{5, 7, 9, 3}, ordo::nn::channels_last},
                               batch_shape{{3, 4, 30}, ordo::nn::channels_first},
                               batch_shape{{2, 3, 2, 3, 70}, ordo::nn::channels_first},
                               batch_shape{{2, 3, 2, 3, 70}, ordo::nn::channels_last}}) {
    CAPTURE(s.size());
    CAPTURE(s.extents.size());
    const random_batch b = make_batch(s, ++seed);
    const step_results want = reference_step(s, b.x, b.dy, b.gamma, b.beta);
    const step_results left = run_step_any_rank<double, ExecutionSpace, Kokkos::LayoutLeft>(s, b);
    const step_results strided = run_step_any_rank<double, ExecutionSpace, Kokkos::LayoutStride>(s, b);
    for (const step_results* got : {&left, &strided}) {
      for (const auto& result : every_result) {
        const std::string name = result.name;
        CAPTURE(name);
        CHECK(close(result.of(*got), result.of(want), 1e-12));
      }
    }
  }
}
ORDO_TEST_ALL_SPACES(layouts_id);

namespace {

// A training step on non-contiguous Views: x, dy, y and dx are the channels [C, 2C) of Views of
// 2C channels (rank 2 or 4, channels first or last), in Layout. Returns the results and whether
// the other channels of y and dx kept their values.
template <class Layout, std::size_t Rank, class Space>
std::pair<step_results, bool> run_step_on_half_channels(const batch_shape& s, const random_batch& b) {
  using memory = typename Space::memory_space;
  using view = typename nd_view<double, memory, Rank, Layout>::type;
  using vec = Kokkos::View<double*, memory>;
  const std::size_t c = s.channels(), axis = s.channel_axis();
  std::vector<std::size_t> wide_extents = s.extents;
  wide_extents[axis] = 2 * c;
  const batch_shape wide{wide_extents, s.layout};
  // The wide arrays' values: the batch in channels [C, 2C), a sentinel elsewhere.
  const double sentinel = 1e30;
  const auto widen = [&](const std::vector<double>& values) {
    std::vector<double> out(wide.size(), sentinel);
    std::size_t k = 0;
    for (std::size_t w = 0; w < wide.size(); ++w) {
      if (wide.channel_of(w) >= c) out[w] = values[k++];
    }
    return out;
  };
  const auto narrow = [&](const std::vector<double>& values, bool& others_kept) {
    std::vector<double> out;
    for (std::size_t w = 0; w < wide.size(); ++w) {
      if (wide.channel_of(w) >= c) {
        out.push_back(values[w]);
      } else {
        others_kept = others_kept && values[w] == sentinel;
      }
    }
    return out;
  };
  using strided = typename nd_view<double, memory, Rank, Kokkos::LayoutStride>::type;
  const auto half = [&](const view& v) -> strided {
    const auto channels = std::make_pair(c, 2 * c);
    if constexpr (Rank == 2) {
      return Kokkos::subview(v, Kokkos::ALL, channels);
    } else if (s.layout == ordo::nn::channels_first) {
      return Kokkos::subview(v, Kokkos::ALL, channels, Kokkos::ALL, Kokkos::ALL);
    } else {
      return Kokkos::subview(v, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL, channels);
    }
  };
  const view x = make_view<view>("x", wide_extents), dy = make_view<view>("dy", wide_extents),
             y = make_view<view>("y", wide_extents), dx = make_view<view>("dx", wide_extents);
  upload(x, widen(b.x));
  upload(dy, widen(b.dy));
  upload(y, std::vector<double>(wide.size(), sentinel));
  upload(dx, std::vector<double>(wide.size(), sentinel));
  const vec gamma("gamma", c), beta("beta", c), rm("rm", c), rv("rv", c), dgamma("dgamma", c), dbeta("dbeta", c);
  upload(gamma, b.gamma);
  upload(beta, b.beta);
  Kokkos::deep_copy(rm, 0.5);
  Kokkos::deep_copy(rv, 2.0);
  const ordo::nn::batch_norm_options opt{.eps = 1e-5, .momentum = 0.25, .layout = s.layout};
  // (The channels of a LayoutLeft (N, C) or channels-last View are its slowest axis: there the
  // half is contiguous and read in place.)
  CHECK((half(x).span_is_contiguous() == (std::is_same_v<Layout, Kokkos::LayoutLeft> && axis == Rank - 1)));
  const auto saved = ordo::nn::batch_norm_forward_training(half(x), gamma, beta, rm, rv, half(y), opt);
  ordo::nn::batch_norm_backward(half(dy), half(x), gamma, saved, half(dx), dgamma, dbeta, opt);
  bool others_kept = true;
  step_results r{narrow(download(y), others_kept), download(saved.mean), download(saved.invstd), download(rm),
                 download(rv), narrow(download(dx), others_kept), download(dgamma), download(dbeta), {}};
  return {r, others_kept};
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("non-contiguous subviews are staged: the reference's results, a dense copy's bits",
                          ExecutionSpace, subview_id) {
  std::uint64_t seed = 800;
  for (const batch_shape& s : {batch_shape{{40, 6}, ordo::nn::channels_first},
                               batch_shape{{5, 3, 7, 9}, ordo::nn::channels_first},
                               batch_shape{{5, 7, 9, 3}, ordo::nn::channels_last}}) {
    CAPTURE(s.extents.size());
    CAPTURE(s.size());
    const random_batch b = make_batch(s, ++seed);
    const step_results want = reference_step(s, b.x, b.dy, b.gamma, b.beta);
    const auto right = s.extents.size() == 2
                           ? run_step_on_half_channels<Kokkos::LayoutRight, 2, ExecutionSpace>(s, b)
                           : run_step_on_half_channels<Kokkos::LayoutRight, 4, ExecutionSpace>(s, b);
    const auto left = s.extents.size() == 2 ? run_step_on_half_channels<Kokkos::LayoutLeft, 2, ExecutionSpace>(s, b)
                                            : run_step_on_half_channels<Kokkos::LayoutLeft, 4, ExecutionSpace>(s, b);
    CHECK(right.second);
    CHECK(left.second);
    // A LayoutRight subview is staged into LayoutRight strides: a dense LayoutRight batch's bits.
    const step_results dense = run_step_any_rank<double, ExecutionSpace>(s, b);
    for (const auto& result : every_result) {
      if (std::string_view(result.name) == "y_inference") continue;
      const std::string name = result.name;
      CAPTURE(name);
      CHECK(close(result.of(right.first), result.of(want), 1e-12));
      CHECK(close(result.of(left.first), result.of(want), 1e-12));
      CHECK(same_bits(result.of(right.first), result.of(dense)));
    }
  }
}
ORDO_TEST_ALL_SPACES(subview_id);

namespace {

// Both launch shapes add in the same order, so they give the same bits. A build that contracts
// multiply-adds (batch_norm_test_fma: -mfma -ffp-contract=fast; nvcc's default --fmad=true) may
// fuse different pairs in the host shape's vectorized loops and in the device shape's scalar
// chains: there each shape is within the reference's bound (1e-12 relative for double, 1e-5 for
// float: the boundary and dispatch tests), so the two agree within twice that.
#if defined(__FMA__) || defined(__CUDACC__) || defined(__HIPCC__)
constexpr bool contracts_multiply_adds = true;
#else
constexpr bool contracts_multiply_adds = false;
#endif

bool same_or_within(const std::vector<double>& got, const std::vector<double>& want, double bound) {
  return contracts_multiply_adds ? close(got, want, 2 * bound) : same_bits(got, want);
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("the device launch shape gives the host launch shape's bits", ExecutionSpace,
                          launch_shapes_id) {
  // Both shapes run on every space; on a host space the device shape is TeamPolicy teams whose
  // threads each take one chain of the host's order of additions (batch_norm_kernels.hpp).
  const std::vector<batch_shape> shapes{
      {{256, 1024}, ordo::nn::channels_first},      // rows: 16 items of 16 rows x 1024 channels
      {{8, 16, 28, 28}, ordo::nn::channels_first},  // runs of 784: a thread per lane, 6 items a team
      {{8, 28, 28, 16}, ordo::nn::channels_last},   // rows of 16 channels: 16 items a team
      {{2, 5, 33, 17}, ordo::nn::channels_first},   // N = 2, odd runs of 561
      {{64, 1, 20, 20}, ordo::nn::channels_first},  // C = 1
      {{3, 1, 5}, ordo::nn::channels_first},        // C = 1, runs of 5: a thread per run
      {{7, 3, 5000}, ordo::nn::channels_first},     // items of 3, 3 and 1 runs
      {{2500, 2, 3}, ordo::nn::channels_first},     // runs of 3: a thread per run, 1365 runs an item
      {{40, 1500}, ordo::nn::channels_first},       // chunks of 1024 and 476 channels
      {{20, 30, 30, 3}, ordo::nn::channels_last},   // items of 5461 rows and a short one
      {{2, 5, 4, 3, 17}, ordo::nn::channels_last}};
  std::uint64_t seed = 1000;
  for (const batch_shape& s : shapes) {
    CAPTURE(s.extents.size());
    CAPTURE(s.size());
    const random_batch b = make_batch(s, ++seed);
    const step_results host_float = run_step_any_rank<float, ExecutionSpace>(s, b, launch_shape::host);
    const step_results device_float = run_step_any_rank<float, ExecutionSpace>(s, b, launch_shape::device);
    const step_results host_double = run_step_any_rank<double, ExecutionSpace>(s, b, launch_shape::host);
    const step_results device_double = run_step_any_rank<double, ExecutionSpace>(s, b, launch_shape::device);
    for (const auto& result : every_result) {
      const std::string name = result.name;
      CAPTURE(name);
      CHECK(same_or_within(result.of(device_float), result.of(host_float), 1e-5));
      CHECK(same_or_within(result.of(device_double), result.of(host_double), 1e-12));
    }
  }
  // A LayoutLeft batch, as on CUDA by default, in both shapes.
  const batch_shape s{{6, 5, 9, 13}, ordo::nn::channels_first};
  const random_batch b = make_batch(s, 1100);
  const step_results host = run_step_any_rank<float, ExecutionSpace, Kokkos::LayoutLeft>(s, b, launch_shape::host);
  const step_results device = run_step_any_rank<float, ExecutionSpace, Kokkos::LayoutLeft>(s, b, launch_shape::device);
  for (const auto& result : every_result) {
    const std::string name = result.name;
    CAPTURE(name);
    CHECK(same_or_within(result.of(device), result.of(host), 1e-5));
  }
}
ORDO_TEST_ALL_SPACES(launch_shapes_id);

// ---- 16-bit storage: x, y, dy, dx of ordo::half or ordo::bfloat16; gamma, beta, the running
// statistics, dgamma and dbeta in float; statistics accumulated in double, element passes in
// float, each output rounded once.

namespace {

// The spacing of S's values at magnitude |v| (its subnormal spacing below the normal range).
template <class S>
long double spacing_of(long double v) {
  const int digits = std::numeric_limits<S>::digits, min_exponent = std::numeric_limits<S>::min_exponent;
  int e = 0;
  (void)std::frexp(v, &e);  // |v| in [2^(e-1), 2^e)
  return std::ldexp(1.0L, std::max(e, min_exponent) - digits);
}

// values rounded to S once (from double), as the test's inputs.
template <class S>
std::vector<double> rounded_to(const std::vector<double>& values) {
  std::vector<double> r;
  for (const double v : values) r.push_back(static_cast<double>(static_cast<float>(S(v))));
  return r;
}

struct storage_report {
  std::size_t outputs = 0, correctly_rounded = 0;
  double worst = 0;  // the largest |error| / bound
};

// Each 16-bit output o against the long double value r of the formula on the same inputs: with
// the float element pass within 8 u_float of its terms' magnitudes (the float test's bound) and one
// rounding to S, |o - r| <= spacing_S(max(|o|, |r|)) / 2 + 8 u_float terms. Where the second part
// is below a quarter of the first, that is within one S ulp of the correctly rounded value.
template <class S>
void check_rounded_once(const std::vector<double>& got, const std::vector<long double>& want,
                        const std::vector<long double>& terms, storage_report& report) {
  const long double u = std::ldexp(1.0L, -24);
  REQUIRE(got.size() == want.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    const long double o = got[k], r = want[k];
    const long double bound = spacing_of<S>(std::max(std::fabs(o), std::fabs(r))) / 2 + 8 * u * terms[k];
    const long double error = std::fabs(o - r);
    report.worst = std::max(report.worst, static_cast<double>(error / bound));
    ++report.outputs;
    if (static_cast<double>(static_cast<float>(S(static_cast<double>(r)))) == got[k]) ++report.correctly_rounded;
  }
}

// One launch shape's results against the long double reference.
template <class S>
void check_storage_results(const batch_shape& s, const random_batch& b, const step_results& got,
                           storage_report& report) {
  // The statistics are double sums of exact values: as accurate as in the double tests; the
  // float outputs (running statistics, dgamma, dbeta) within float's rounding of them.
  const step_results want = reference_step(s, b.x, b.dy, b.gamma, b.beta);
  CHECK(close(got.mean, want.mean, 1e-12));
  CHECK(close(got.invstd, want.invstd, 1e-12));
  CHECK(close(got.running_mean, want.running_mean, 1e-7));
  CHECK(close(got.running_var, want.running_var, 1e-7));
  CHECK(close(got.dgamma, want.dgamma, 1e-7));
  CHECK(close(got.dbeta, want.dbeta, 1e-7));
  // y, dx and inference's y from the definitions in long double, with their terms' magnitudes.
  const std::size_t c = s.channels(), n = s.size();
  const long double m = static_cast<long double>(n / c);
  std::vector<long double> mean(c), m2(c), sum_dy(c), dotp(c);
  for (std::size_t k = 0; k < n; ++k) mean[s.channel_of(k)] += b.x[k];
  for (auto& v : mean) v /= m;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t ch = s.channel_of(k);
    m2[ch] += (b.x[k] - mean[ch]) * (b.x[k] - mean[ch]);
    sum_dy[ch] += b.dy[k];
    dotp[ch] += (b.x[k] - mean[ch]) * b.dy[k];
  }
  std::vector<long double> y, y_terms, dx, dx_terms, yi, yi_terms;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t ch = s.channel_of(k);
    const long double invstd = 1.0L / std::sqrt(m2[ch] / m + 1e-5L), g = b.gamma[ch], beta = b.beta[ch];
    const long double centered = b.x[k] - mean[ch];
    y.push_back(centered * invstd * g + beta);
    y_terms.push_back(std::fabs(centered * invstd * g) + std::fabs(beta));
    dx.push_back((b.dy[k] - sum_dy[ch] / m - centered * invstd * invstd * dotp[ch] / m) * invstd * g);
    dx_terms.push_back((std::fabs(b.dy[k]) + std::fabs(sum_dy[ch] / m) + std::fabs(centered * invstd * invstd * dotp[ch] / m)) *
                       std::fabs(invstd * g));
    // Inference from the float running statistics the training step left.
    const long double rm = got.running_mean[ch], is = 1.0L / std::sqrt(static_cast<long double>(got.running_var[ch]) + 1e-5L);
    yi.push_back((b.x[k] - rm) * is * g + beta);
    yi_terms.push_back(std::fabs((b.x[k] - rm) * is * g) + std::fabs(beta));
  }
  check_rounded_once<S>(got.y, y, y_terms, report);
  check_rounded_once<S>(got.dx, dx, dx_terms, report);
  check_rounded_once<S>(got.y_inference, yi, yi_terms, report);
}

template <class S, class Space, class Layout = Kokkos::LayoutRight>
void check_storage_step(const batch_shape& s, std::uint64_t seed, storage_report& report) {
  random_batch b = make_batch(s, seed);
  b.x = rounded_to<S>(b.x);
  b.dy = rounded_to<S>(b.dy);
  b.gamma = rounded_to<float>(b.gamma);
  b.beta = rounded_to<float>(b.beta);
  const step_results got = run_step_any_rank<S, Space, Layout>(s, b, launch_shape::host);
  const step_results device = run_step_any_rank<S, Space, Layout>(s, b, launch_shape::device);
  check_storage_results<S>(s, b, got, report);
  if (contracts_multiply_adds) {
    // Fused multiply-adds may pair differently in the two shapes (see same_or_within): each shape
    // is held to the reference's bound instead.
    check_storage_results<S>(s, b, device, report);
    return;
  }
  // Both launch shapes give the same bits.
  CHECK(same_bits(got.y, device.y));
  CHECK(same_bits(got.dx, device.dx));
  CHECK(same_bits(got.y_inference, device.y_inference));
  CHECK(same_bits(got.mean, device.mean));
  CHECK(same_bits(got.invstd, device.invstd));
  CHECK(same_bits(got.dgamma, device.dgamma));
  CHECK(same_bits(got.running_var, device.running_var));
}

template <class S, class Space>
void check_storage_batch_norm() {
  storage_report report;
  std::uint64_t seed = 500;
  std::vector<batch_shape> shapes = boundary_shapes();
  shapes.push_back({{8, 3, 20, 20}, ordo::nn::channels_first});
  shapes.push_back({{8, 20, 20, 3}, ordo::nn::channels_last});
  for (const auto& s : shapes) {
    CAPTURE(s.extents.size());
    CAPTURE(s.size());
    check_storage_step<S, Space>(s, ++seed, report);
  }
  // LayoutLeft: (N, C) and NCHW read in another axis order.
  check_storage_step<S, Space, Kokkos::LayoutLeft>({{300, 40}, ordo::nn::channels_first}, ++seed, report);
  check_storage_step<S, Space, Kokkos::LayoutLeft>({{8, 3, 20, 20}, ordo::nn::channels_first}, ++seed, report);
  CAPTURE(report.worst);
  CAPTURE(report.correctly_rounded);
  CAPTURE(report.outputs);
  CHECK(report.worst <= 1.0);
  // One rounding of a float result: all but a few are the correctly rounded value.
  CHECK(static_cast<double>(report.correctly_rounded) >= 0.99 * static_cast<double>(report.outputs));
  // Measured: worst 0.9993 (half) and 0.9999 (bfloat16) of the bound, the rounding's half spacing;
  // 99.994% and 99.998% of the 2.67 million outputs correctly rounded.
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("16-bit x, y, dy, dx with float parameters: statistics in double, each output rounded once",
                          ExecutionSpace, storage_id) {
  check_storage_batch_norm<ordo::half, ExecutionSpace>();
  check_storage_batch_norm<ordo::bfloat16, ExecutionSpace>();
  // Wrong pairings are refused at compile time (tests/compile_fail/batch_norm_half_*.cpp).
  using half_view = Kokkos::View<ordo::half**, typename ExecutionSpace::memory_space>;
  using float_vec = Kokkos::View<float*, typename ExecutionSpace::memory_space>;
  static_assert(ordo::nn::detail::batch_norm_parameters_v<ordo::half, float_vec, float_vec>);
  static_assert(!ordo::nn::detail::batch_norm_parameters_v<ordo::half, Kokkos::View<double*>, float_vec>);
  static_assert(!ordo::nn::detail::batch_norm_parameters_v<ordo::bfloat16, Kokkos::View<ordo::bfloat16*>, float_vec>);
  static_assert(ordo::nn::detail::batch_norm_parameters_v<float, Kokkos::View<double*>, float_vec>);  // as before
  (void)sizeof(half_view);
}
ORDO_TEST_ALL_SPACES(storage_id);
