#include <ordo/core/float16.hpp>
#include <ordo/platform/fast_exp.hpp>
#include <ordo/nn/softmax.hpp>

#include "support/execution_spaces.hpp"
#include "support/host_views.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using ordo_test::readable_on_host;
using ordo::nn::detail::softmax_backward_op;
using ordo::nn::detail::softmax_op;
using ordo::detail::launch_shape;
using ld = long double;

constexpr float inf = std::numeric_limits<float>::infinity();
constexpr float nan = std::numeric_limits<float>::quiet_NaN();

template <class T>
constexpr bool is_16_bit = sizeof(T) == 2;

template <class T>
const char* type_name() {
  if constexpr (std::is_same_v<T, float>) return "float";
  if constexpr (std::is_same_v<T, double>) return "double";
  if constexpr (std::is_same_v<T, ordo::half>) return "half";
  return "bfloat16";
}

// Unit roundoff of the compute type.
template <class T>
constexpr ld unit_roundoff() {
  return std::ldexp(1.0L, -std::numeric_limits<ordo::compute_type_t<T>>::digits);
}

// Unit roundoff of the accumulate type.
template <class T>
constexpr ld accumulate_roundoff() {
  return std::ldexp(1.0L, -std::numeric_limits<ordo::accumulate_type_t<T>>::digits);
}

// One ulp of T at |v| (the spacing of T's values in v's binade; subnormal spacing below).
template <class T>
ld ulp_of(ld v) {
  constexpr int digits = std::numeric_limits<T>::digits;
  constexpr int min_exponent = std::numeric_limits<T>::min_exponent;
  int e = v == 0 ? min_exponent : std::ilogb(v) + 1;
  e = std::max(e, min_exponent);
  return std::ldexp(1.0L, e - digits);
}

// Bits of any of the element types, for bitwise comparisons.
template <class T>
std::uint64_t bits(T v) {
  if constexpr (sizeof(T) == 2) {
    return v.bits();
  } else if constexpr (sizeof(T) == 4) {
    return std::bit_cast<std::uint32_t>(v);
  } else {
    return std::bit_cast<std::uint64_t>(v);
  }
}

template <class T>
using host_matrix = Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::HostSpace>;

template <class T, class Space>
Kokkos::View<T**, Kokkos::LayoutRight, typename Space::memory_space> on_space(const host_matrix<T>& h) {
  Kokkos::View<T**, Kokkos::LayoutRight, typename Space::memory_space> d("d", h.extent(0), h.extent(1));
  Kokkos::deep_copy(d, h);
  return d;
}

// rows x cols values m + N(0, sigma), rounded to T.
template <class T>
host_matrix<T> random_matrix(std::int64_t rows, std::int64_t cols, double mean, double sigma, std::uint64_t seed) {
  host_matrix<T> h("x", static_cast<std::size_t>(rows), static_cast<std::size_t>(cols));
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> d(mean, sigma);
  for (std::size_t r = 0; r < h.extent(0); ++r)
    for (std::size_t c = 0; c < h.extent(1); ++c) h(r, c) = static_cast<T>(static_cast<ordo::compute_type_t<T>>(d(gen)));
  return h;
}

// The long double reference of one row: max, sum exp(x - max).
template <class T>
struct row_reference {
  ld max = -std::numeric_limits<ld>::infinity(), sum = 0;
  row_reference(const host_matrix<T>& x, std::size_t r) {
    for (std::size_t c = 0; c < x.extent(1); ++c) max = std::max(max, to_ld(x(r, c)));
    for (std::size_t c = 0; c < x.extent(1); ++c) sum += std::exp(to_ld(x(r, c)) - max);
  }
  static ld to_ld(T v) { return static_cast<ld>(static_cast<ordo::compute_type_t<T>>(v)); }
};

template <class T>
ld value(T v) {
  return static_cast<ld>(static_cast<ordo::compute_type_t<T>>(v));
}

// ------------------------------------------------------------------------------------------------
// Accuracy against long double, both launch shapes.

struct shape_case {
  std::int64_t rows, cols;
  double mean, sigma;
};

const std::vector<shape_case>& accuracy_cases() {
  static const std::vector<shape_case> cases = {
      {5, 1, 0, 1},    {7, 7, 0, 1},      {9, 16, 0, 3},     {4, 17, 0, 3},   {33, 100, -5, 4},
      {3, 1000, 0, 8}, {2, 1031, 1e4, 2}, {17, 515, 0, 0.1}, {3, 2053, 0, 20},
  };
  return cases;
}

// wide_from: the device shape's team per row from this row length (1: every row); row_lanes:
// that team's lanes.
template <class T, class Space, launch_shape Shape>
void check_forward_accuracy(std::int64_t wide_from = ordo::nn::detail::softmax_wide_row_min,
                            int row_lanes = ordo::nn::detail::softmax_row_lanes) {
  using C = ordo::compute_type_t<T>;
  const ld u = unit_roundoff<T>();
  std::uint64_t seed = 11;
  for (const auto& sc : accuracy_cases()) {
    if (is_16_bit<T> && std::abs(sc.mean) > 1000) continue;  // half's range; bfloat16 keeps 3 digits
    const std::string type = type_name<T>();
    CAPTURE(type);
    CAPTURE(sc.rows);
    CAPTURE(sc.cols);
    const auto hx = random_matrix<T>(sc.rows, sc.cols, sc.mean, sc.sigma, ++seed);
    const auto x = on_space<T, Space>(hx);
    decltype(on_space<T, Space>(hx)) y("y", hx.extent(0), hx.extent(1)), ly("ly", hx.extent(0), hx.extent(1));
    Kokkos::View<C*, typename Space::memory_space> lse("lse", hx.extent(0));
    const Space space;
    ordo::nn::detail::forward<softmax_op::softmax, Shape>(space, x, y, lse, wide_from, row_lanes);
    ordo::nn::detail::forward<softmax_op::log_softmax, Shape>(space, x, ly, lse, wide_from, row_lanes);
    ordo::nn::detail::forward<softmax_op::logsumexp, Shape>(space, x, x, lse, wide_from, row_lanes);
    space.fence();
    const auto hy = readable_on_host(y), hly = readable_on_host(ly);
    const auto hlse = readable_on_host(lse);
    ld worst_softmax = 0, worst_log = 0, worst_lse = 0;  // in units of the bound
    // Rounding errors of the row sum in the accumulate type: each lane adds cols / 16 terms, then
    // 16 lanes are added (negligible for float data summed in double, not for double).
    const ld sum_error = accumulate_roundoff<T>() * (static_cast<ld>(hx.extent(1)) / 16 + 16);
    for (std::size_t r = 0; r < hx.extent(0); ++r) {
      const row_reference<T> ref(hx, r);
      const ld log_sum = std::log(ref.sum);
      for (std::size_t c = 0; c < hx.extent(1); ++c) {
        const ld d = value(hx(r, c)) - ref.max;
        const ld p = std::exp(d) / ref.sum, lp = d - log_sum;
        // softmax: exp < 1 ulp (2u), the float partial sums 7u, 1/sum and the product one rounding each, x - max rounded
        // (|x - max| u); 16-bit: then one rounding to T.
        ld bound = ((11 + std::abs(d)) * u + sum_error) * p + 2 * std::numeric_limits<C>::denorm_min();
        if (is_16_bit<T>) bound += ulp_of<T>(p) * 0.5L;
        worst_softmax = std::max(worst_softmax, std::abs(value(hy(r, c)) - p) / bound);
        ld log_bound = 4 * u * (std::abs(d) + std::abs(log_sum) + 1) + sum_error;
        if (is_16_bit<T>) log_bound += ulp_of<T>(lp) * 0.5L;
        worst_log = std::max(worst_log, std::abs(value(hly(r, c)) - lp) / log_bound);
      }
      const ld lse_ref = ref.max + log_sum;
      worst_lse = std::max(worst_lse, std::abs(static_cast<ld>(hlse(r)) - lse_ref) / (4 * u * (std::abs(lse_ref) + 1) + sum_error));
    }
    CHECK(worst_softmax <= 1);
    CHECK(worst_log <= 1);
    CHECK(worst_lse <= 1);
  }
}

template <class T, class Space, launch_shape Shape>
void check_backward_accuracy() {
  const ld u = unit_roundoff<T>();
  std::uint64_t seed = 77;
  for (const auto& sc : accuracy_cases()) {
    if (std::abs(sc.mean) > 1000) continue;
    const std::string type = type_name<T>();
    CAPTURE(type);
    CAPTURE(sc.rows);
    CAPTURE(sc.cols);
    const auto hx = random_matrix<T>(sc.rows, sc.cols, sc.mean, sc.sigma, ++seed);
    const auto hdy = random_matrix<T>(sc.rows, sc.cols, 0, 1, ++seed);
    const auto x = on_space<T, Space>(hx), dy = on_space<T, Space>(hdy);
    decltype(on_space<T, Space>(hx)) y("y", hx.extent(0), hx.extent(1)), ly("ly", hx.extent(0), hx.extent(1)),
        dx("dx", hx.extent(0), hx.extent(1)), ldx("ldx", hx.extent(0), hx.extent(1));
    ordo::nn::softmax(Space(), x, y);
    ordo::nn::log_softmax(Space(), x, ly);
    const Space space;
    ordo::nn::detail::backward<softmax_backward_op::softmax, Shape>(space, dy, y, dx);
    ordo::nn::detail::backward<softmax_backward_op::log_softmax, Shape>(space, dy, ly, ldx);
    space.fence();
    const auto hy = readable_on_host(y), hly = readable_on_host(ly), hdx = readable_on_host(dx), hldx = readable_on_host(ldx);
    ld worst = 0, worst_log = 0;
    using C = ordo::compute_type_t<T>;
    const ld sum_error = accumulate_roundoff<T>() * (static_cast<ld>(hx.extent(1)) / 16 + 16);
    for (std::size_t r = 0; r < hx.extent(0); ++r) {
      ld dot = 0, sum = 0, dot_abs = 0, sum_abs = 0;
      for (std::size_t c = 0; c < hx.extent(1); ++c) {
        dot += value(hdy(r, c)) * value(hy(r, c));
        sum += value(hdy(r, c));
        dot_abs += std::abs(value(hdy(r, c)) * value(hy(r, c)));
        sum_abs += std::abs(value(hdy(r, c)));
      }
      for (std::size_t c = 0; c < hx.extent(1); ++c) {
        const ld g = value(hdy(r, c)), p = value(hy(r, c)), lp = value(hly(r, c));
        const ld ref = p * (g - dot), log_ref = g - std::exp(lp) * sum;
        // dot rounded to C, the difference and the product: 3 roundings of C.
        // Underflow: absolute errors of C's smallest subnormal.
        ld bound = std::abs(p) * (4 * u * (std::abs(g) + std::abs(dot)) + sum_error * dot_abs) +
                   2 * std::numeric_limits<C>::denorm_min();
        ld log_bound = 6 * u * (std::abs(g) + std::exp(lp) * std::abs(sum)) + std::exp(lp) * sum_error * sum_abs +
                       2 * std::numeric_limits<C>::denorm_min();
        if (is_16_bit<T>) {
          bound += ulp_of<T>(ref) * 0.5L;
          log_bound += ulp_of<T>(log_ref) * 0.5L;
        }
        worst = std::max(worst, std::abs(value(hdx(r, c)) - ref) / bound);
        worst_log = std::max(worst_log, std::abs(value(hldx(r, c)) - log_ref) / log_bound);
      }
    }
    CHECK(worst <= 1);
    CHECK(worst_log <= 1);
  }
}

template <class Space, launch_shape Shape>
void check_accuracy_all_types() {
  check_forward_accuracy<float, Space, Shape>();
  check_forward_accuracy<double, Space, Shape>();
  check_forward_accuracy<ordo::half, Space, Shape>();
  check_forward_accuracy<ordo::bfloat16, Space, Shape>();
  check_backward_accuracy<float, Space, Shape>();
  check_backward_accuracy<double, Space, Shape>();
  check_backward_accuracy<ordo::half, Space, Shape>();
  check_backward_accuracy<ordo::bfloat16, Space, Shape>();
}

TEST_CASE_TEMPLATE_DEFINE("softmax family against a long double reference, host shape", ExecutionSpace, host_acc_id) {
  check_accuracy_all_types<ExecutionSpace, launch_shape::host>();
}
ORDO_TEST_ALL_SPACES(host_acc_id);

TEST_CASE_TEMPLATE_DEFINE("softmax family against a long double reference, device shape", ExecutionSpace, dev_acc_id) {
  check_accuracy_all_types<ExecutionSpace, launch_shape::device>();
}
ORDO_TEST_ALL_SPACES(dev_acc_id);

TEST_CASE_TEMPLATE_DEFINE("softmax family against a long double reference, device shape with a team per row",
                          ExecutionSpace, dev_row_acc_id) {
  // The default lanes, and more (bench_gpu sweeps them on a GPU).
  for (const int lanes : {ordo::nn::detail::softmax_row_lanes, 1024}) {
    CAPTURE(lanes);
    check_forward_accuracy<float, ExecutionSpace, launch_shape::device>(1, lanes);
    check_forward_accuracy<double, ExecutionSpace, launch_shape::device>(1, lanes);
    check_forward_accuracy<ordo::half, ExecutionSpace, launch_shape::device>(1, lanes);
    check_forward_accuracy<ordo::bfloat16, ExecutionSpace, launch_shape::device>(1, lanes);
  }
}
ORDO_TEST_ALL_SPACES(dev_row_acc_id);

// ------------------------------------------------------------------------------------------------
// The device shape against the host shape, on the same space.

template <class T, class Space>
void check_shapes_agree() {
  using C = ordo::compute_type_t<T>;
  const ld u = unit_roundoff<T>();
  std::uint64_t seed = 300;
  for (const auto& sc : accuracy_cases()) {
    if (is_16_bit<T> && std::abs(sc.mean) > 1000) continue;
    CAPTURE(sc.cols);
    const auto hx = random_matrix<T>(sc.rows, sc.cols, sc.mean, sc.sigma, ++seed);
    const auto hdy = random_matrix<T>(sc.rows, sc.cols, 0, 1, ++seed);
    const auto x = on_space<T, Space>(hx), dy = on_space<T, Space>(hdy);
    using view = decltype(on_space<T, Space>(hx));
    const std::size_t R = hx.extent(0), K = hx.extent(1);
    view y[3] = {view("y0", R, K), view("y1", R, K), view("y2", R, K)},
         ly[3] = {view("ly0", R, K), view("ly1", R, K), view("ly2", R, K)};
    view dx[3] = {view("dx0", R, K), view("dx1", R, K), view("dx2", R, K)},
         ldx[3] = {view("ldx0", R, K), view("ldx1", R, K), view("ldx2", R, K)};
    using lse_view = Kokkos::View<C*, typename Space::memory_space>;
    lse_view lse[3] = {lse_view("l0", R), lse_view("l1", R), lse_view("l2", R)};
    const Space space;
    // Run 2 is the device shape with a team per row for every row length.
    const auto run = [&](auto shape, int i) {
      constexpr launch_shape s = decltype(shape)::value;
      const std::int64_t wide_from = i == 2 ? 1 : ordo::nn::detail::softmax_wide_row_min;
      ordo::nn::detail::forward<softmax_op::softmax, s>(space, x, y[i], lse[i], wide_from);
      ordo::nn::detail::forward<softmax_op::log_softmax, s>(space, x, ly[i], lse[i], wide_from);
      ordo::nn::detail::forward<softmax_op::logsumexp, s>(space, x, x, lse[i], wide_from);
      // Both backward passes from the host shape's forward results.
      ordo::nn::detail::backward<softmax_backward_op::softmax, s>(space, dy, y[0], dx[i]);
      ordo::nn::detail::backward<softmax_backward_op::log_softmax, s>(space, dy, ly[0], ldx[i]);
      space.fence();
    };
    run(std::integral_constant<launch_shape, launch_shape::host>{}, 0);
    run(std::integral_constant<launch_shape, launch_shape::device>{}, 1);
    run(std::integral_constant<launch_shape, launch_shape::device>{}, 2);
    // A team per row in place: every element is read before its own result is written.
    const auto in_place = on_space<T, Space>(hx);
    ordo::nn::detail::forward<softmax_op::softmax, launch_shape::device>(space, in_place, in_place, lse[2], 1);
    space.fence();
    {
      const auto a = readable_on_host(y[2]), b = readable_on_host(in_place);
      bool same = true;
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t c = 0; c < K; ++c) same = same && bits(a(r, c)) == bits(b(r, c));
      CHECK(same);
    }
    const auto hy0 = readable_on_host(y[0]), hl0 = readable_on_host(ly[0]);
    const auto hd0 = readable_on_host(dx[0]), hld0 = readable_on_host(ldx[0]);
    const auto hs0 = readable_on_host(lse[0]);
    for (int other = 1; other <= 2; ++other) {
    CAPTURE(other);
    const auto hy1 = readable_on_host(y[other]), hl1 = readable_on_host(ly[other]);
    const auto hd1 = readable_on_host(dx[other]), hld1 = readable_on_host(ldx[other]);
    const auto hs1 = readable_on_host(lse[other]);
    bool backward_same = true;
    ld worst = 0;
    for (std::size_t r = 0; r < R; ++r) {
      for (std::size_t c = 0; c < K; ++c) {
        backward_same = backward_same && bits(hd0(r, c)) == bits(hd1(r, c)) && bits(hld0(r, c)) == bits(hld1(r, c));
        // The online sum rescales each lane once more: a few ulps of C, then T's rounding. A team
        // per row adds its lanes by a tree, not in lane order: the two row sums' rounding errors
        // in the accumulate type (each lane's terms, then 16 lanes in order or 10 tree levels)
        // add to the bound; they matter for double, whose accumulate type is its own.
        const ld a = value(hy0(r, c)), b = value(hy1(r, c));
        const ld sums = other == 2 ? accumulate_roundoff<T>() * (static_cast<ld>(K) / 16 + 16 +
                                                                 static_cast<ld>(K) / 1024 + 11)
                                   : 0;
        ld bound = (4 * u + sums) * std::abs(a) + std::numeric_limits<C>::denorm_min();
        if (is_16_bit<T>) bound += ulp_of<T>(a);
        worst = std::max(worst, std::abs(a - b) / bound);
        const ld la = value(hl0(r, c)), lb = value(hl1(r, c));
        ld log_bound = (4 * u + sums) * (std::abs(la) + 1);
        if (is_16_bit<T>) log_bound += ulp_of<T>(la);
        worst = std::max(worst, std::abs(la - lb) / log_bound);
      }
      const ld sums = other == 2 ? accumulate_roundoff<T>() * (static_cast<ld>(K) / 16 + 16 +
                                                               static_cast<ld>(K) / 1024 + 11)
                                 : 0;
      worst = std::max(worst, std::abs(static_cast<ld>(hs0(r)) - static_cast<ld>(hs1(r))) /
                                  ((4 * u + sums) * (std::abs(static_cast<ld>(hs0(r))) + 1)));
    }
    CHECK(backward_same);
    CHECK(worst <= 1);
    }
  }
}

TEST_CASE_TEMPLATE_DEFINE("the device shape agrees with the host shape: backward bitwise, forward within 4 ulps",
                          ExecutionSpace, shapes_id) {
  check_shapes_agree<float, ExecutionSpace>();
  check_shapes_agree<double, ExecutionSpace>();
  check_shapes_agree<ordo::half, ExecutionSpace>();
  check_shapes_agree<ordo::bfloat16, ExecutionSpace>();
}
ORDO_TEST_ALL_SPACES(shapes_id);

// ------------------------------------------------------------------------------------------------
// Edge rows, as PyTorch 1.13 gives them (checked with torch.softmax, torch.log_softmax and
// torch.logsumexp in float32, float64 and bfloat16; tests/fixtures/softmax/edge_rows.py prints them).

template <class T, class Space>
void check_edge_rows() {
  using C = ordo::compute_type_t<T>;
  const std::vector<std::vector<float>> rows = {
      {-inf, -inf, -inf}, {inf, 1, 2},      {inf, inf, 0},     {inf, -inf, 0},
      {nan, 1, 2},        {-inf, 0, 1},     {1e4f, -1e4f, 0},  {3e38f, -3e38f, 0},
      {3e38f, 3e38f, 3e38f}, {-3e38f, -3e38f, -3e38f}, {nan, inf, -inf}, {-inf, -inf, nan},
  };
  if constexpr (std::is_same_v<T, ordo::half>) return;  // ±3e38 and ±1e4 beyond or at half's edge: see below
  host_matrix<T> hx("x", rows.size(), 3);
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t c = 0; c < 3; ++c) hx(r, c) = static_cast<T>(static_cast<C>(rows[r][c]));
  // 0: the host shape; 1: the device shape; 2: the device shape with a team per row.
  for (const int variant : {0, 1, 2}) {
    CAPTURE(variant);
    const auto x = on_space<T, Space>(hx);
    decltype(on_space<T, Space>(hx)) y("y", rows.size(), 3), ly("ly", rows.size(), 3);
    Kokkos::View<C*, typename Space::memory_space> lse("lse", rows.size());
    const Space space;
    if (variant == 0) {
      ordo::nn::detail::forward<softmax_op::softmax, launch_shape::host>(space, x, y, lse);
      ordo::nn::detail::forward<softmax_op::log_softmax, launch_shape::host>(space, x, ly, lse);
      ordo::nn::detail::forward<softmax_op::logsumexp, launch_shape::host>(space, x, x, lse);
    } else {
      const std::int64_t wide_from = variant == 2 ? 1 : ordo::nn::detail::softmax_wide_row_min;
      ordo::nn::detail::forward<softmax_op::softmax, launch_shape::device>(space, x, y, lse, wide_from);
      ordo::nn::detail::forward<softmax_op::log_softmax, launch_shape::device>(space, x, ly, lse, wide_from);
      ordo::nn::detail::forward<softmax_op::logsumexp, launch_shape::device>(space, x, x, lse, wide_from);
    }
    space.fence();
    const auto hy = readable_on_host(y), hly = readable_on_host(ly);
    const auto hlse = readable_on_host(lse);
    const auto p = [&](std::size_t r, std::size_t c) { return static_cast<C>(hy(r, c)); };
    const auto lp = [&](std::size_t r, std::size_t c) { return static_cast<C>(hly(r, c)); };
    // Rows 0-4, 10, 11: softmax and log_softmax NaN everywhere.
    for (const std::size_t r : std::initializer_list<std::size_t>{0, 1, 2, 3, 4, 10, 11}) {
      CAPTURE(r);
      for (std::size_t c = 0; c < 3; ++c) {
        CHECK(std::isnan(p(r, c)));
        CHECK(std::isnan(lp(r, c)));
      }
    }
    CHECK(hlse(0) == -std::numeric_limits<C>::infinity());
    CHECK(hlse(1) == std::numeric_limits<C>::infinity());
    CHECK(hlse(2) == std::numeric_limits<C>::infinity());
    CHECK(hlse(3) == std::numeric_limits<C>::infinity());
    CHECK(std::isnan(hlse(4)));
    CHECK(std::isnan(hlse(10)));
    CHECK(std::isnan(hlse(11)));
    // [-inf, 0, 1]: 0, 1 / (1 + e), e / (1 + e).
    const double e = std::exp(1.0);
    CHECK(p(5, 0) == 0);
    CHECK(static_cast<double>(p(5, 1)) == doctest::Approx(1 / (1 + e)).epsilon(is_16_bit<T> ? 1e-2 : 1e-6));
    CHECK(static_cast<double>(p(5, 2)) == doctest::Approx(e / (1 + e)).epsilon(is_16_bit<T> ? 1e-2 : 1e-6));
    CHECK(lp(5, 0) == -std::numeric_limits<C>::infinity());
    CHECK(static_cast<double>(lp(5, 2)) == doctest::Approx(-std::log1p(1 / e)).epsilon(is_16_bit<T> ? 1e-2 : 1e-6));
    // Large logits do not overflow.
    for (const std::size_t r : std::initializer_list<std::size_t>{6, 7}) {
      CHECK(p(r, 0) == 1);
      CHECK(p(r, 1) == 0);
      CHECK(p(r, 2) == 0);
      CHECK(lp(r, 0) == 0);
      CHECK(hlse(r) == static_cast<C>(value(hx(r, 0))));
    }
    CHECK(lp(6, 1) == static_cast<C>(-2 * value(hx(6, 0))));  // -2e4 (-19968 in bfloat16, as torch)
    CHECK(lp(6, 2) == static_cast<C>(-value(hx(6, 0))));
    if constexpr (std::is_same_v<C, float>) {
      CHECK(lp(7, 1) == -std::numeric_limits<C>::infinity());  // -6e38 overflows float, as in torch
    } else {
      CHECK(lp(7, 1) == doctest::Approx(-6e38));
    }
    for (const std::size_t r : std::initializer_list<std::size_t>{8, 9}) {
      for (std::size_t c = 0; c < 3; ++c) {
        CHECK(static_cast<double>(p(r, c)) == doctest::Approx(1.0 / 3).epsilon(is_16_bit<T> ? 1e-2 : 1e-6));
        CHECK(static_cast<double>(lp(r, c)) == doctest::Approx(-std::log(3.0)).epsilon(is_16_bit<T> ? 1e-2 : 1e-6));
      }
    }
    CHECK(hlse(8) == static_cast<C>(value(hx(8, 0)) + std::log(3.0L)));
    CHECK(hlse(9) == static_cast<C>(value(hx(9, 0)) + std::log(3.0L)));
  }
}

template <class Space>
void check_half_edges() {
  // half: ±1e4 fit (9984 / 10000), 3e38 becomes inf: [inf, -inf, 0] gives NaN as above.
  host_matrix<ordo::half> hx("x", 2, 3);
  const float v[2][3] = {{1e4f, -1e4f, 0}, {6e4f, 6e4f, -6e4f}};
  for (std::size_t r = 0; r < 2; ++r)
    for (std::size_t c = 0; c < 3; ++c) hx(r, c) = ordo::half(v[r][c]);
  const auto x = on_space<ordo::half, Space>(hx);
  decltype(on_space<ordo::half, Space>(hx)) y("y", 2, 3);
  Kokkos::View<float*, typename Space::memory_space> lse("lse", 2);
  ordo::nn::softmax(Space(), x, y);
  ordo::nn::logsumexp(Space(), x, lse);
  const auto hy = readable_on_host(y);
  const auto hlse = readable_on_host(lse);
  CHECK(static_cast<float>(hy(0, 0)) == 1);
  CHECK(static_cast<float>(hy(0, 1)) == 0);
  CHECK(static_cast<float>(hy(1, 0)) == 0.5f);
  CHECK(static_cast<float>(hy(1, 2)) == 0);
  CHECK(hlse(0) == static_cast<float>(hx(0, 0)));
  CHECK(hlse(1) == static_cast<float>(static_cast<double>(static_cast<float>(hx(1, 0))) + std::log(2.0)));
}

TEST_CASE_TEMPLATE_DEFINE("edge rows give what PyTorch 1.13 gives", ExecutionSpace, edges_id) {
  check_edge_rows<float, ExecutionSpace>();
  check_edge_rows<double, ExecutionSpace>();
  check_edge_rows<ordo::bfloat16, ExecutionSpace>();
  check_half_edges<ExecutionSpace>();
}
ORDO_TEST_ALL_SPACES(edges_id);

TEST_CASE_TEMPLATE_DEFINE("empty rows and no rows", ExecutionSpace, empty_id) {
  using view = Kokkos::View<float**, typename ExecutionSpace::memory_space>;
  const view x("x", 3, 0), y("y", 3, 0);
  Kokkos::View<float*, typename ExecutionSpace::memory_space> lse("lse", 3);
  ordo::nn::softmax(ExecutionSpace(), x, y);
  ordo::nn::log_softmax(ExecutionSpace(), x, y);
  ordo::nn::softmax_backward(ExecutionSpace(), x, y, y);
  ordo::nn::log_softmax_backward(ExecutionSpace(), x, y, y);
  ordo::nn::logsumexp(ExecutionSpace(), x, lse);
  const auto h = readable_on_host(lse);
  for (int r = 0; r < 3; ++r) CHECK(h(r) == -inf);  // torch.logsumexp of an empty row
  const view a("a", 0, 5), b("b", 0, 5);
  Kokkos::View<float*, typename ExecutionSpace::memory_space> none("none", 0);
  ordo::nn::softmax(ExecutionSpace(), a, b);
  ordo::nn::log_softmax_backward(ExecutionSpace(), a, b, b);
  ordo::nn::logsumexp(ExecutionSpace(), a, none);
}
ORDO_TEST_ALL_SPACES(empty_id);

// ------------------------------------------------------------------------------------------------
// Why max subtraction: exp(x) / sum exp(x) in float overflows or underflows where softmax does not.

TEST_CASE_TEMPLATE_DEFINE("the naive exp / sum overflows where ordo's softmax does not", ExecutionSpace, naive_id) {
  const std::vector<std::vector<float>> rows = {{100, 0, -100}, {-200, -201, -202}, {89, 88, 0}};
  host_matrix<float> hx("x", rows.size(), 3);
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t c = 0; c < 3; ++c) hx(r, c) = rows[r][c];
  host_matrix<float> naive("naive", rows.size(), 3);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    float sum = 0;
    for (std::size_t c = 0; c < 3; ++c) sum += std::exp(hx(r, c));
    for (std::size_t c = 0; c < 3; ++c) naive(r, c) = std::exp(hx(r, c)) / sum;
  }
  CHECK(std::isnan(naive(0, 0)));  // exp(100) = inf, inf / inf
  CHECK(std::isnan(naive(1, 0)));  // every exp underflows to 0: 0 / 0
  CHECK(std::isnan(naive(2, 0)));  // exp(89) = inf
  const auto x = on_space<float, ExecutionSpace>(hx);
  decltype(on_space<float, ExecutionSpace>(hx)) y("y", rows.size(), 3);
  ordo::nn::softmax(ExecutionSpace(), x, y);
  const auto hy = readable_on_host(y);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const row_reference<float> ref(hx, r);
    for (std::size_t c = 0; c < 3; ++c) {
      CAPTURE(r);
      CHECK(std::isfinite(hy(r, c)));
      CHECK(static_cast<double>(hy(r, c)) == doctest::Approx(static_cast<double>(std::exp(value(hx(r, c)) - ref.max) / ref.sum)).epsilon(1e-6));
    }
  }
  CHECK(hy(1, 0) == doctest::Approx(1 / (1 + std::exp(-1.0) + std::exp(-2.0))));
}
ORDO_TEST_ALL_SPACES(naive_id);

// ------------------------------------------------------------------------------------------------
// Layouts, in place, the public entry points.

TEST_CASE_TEMPLATE_DEFINE("LayoutLeft, strided and in-place calls give the LayoutRight bits", ExecutionSpace, layout_id) {
  using memory = typename ExecutionSpace::memory_space;
  const auto hx = random_matrix<float>(37, 203, 0, 3, 5);
  const auto x = on_space<float, ExecutionSpace>(hx);
  decltype(on_space<float, ExecutionSpace>(hx)) y("y", 37, 203);
  ordo::nn::softmax(ExecutionSpace(), x, y);
  const auto reference = readable_on_host(y);
  Kokkos::View<float**, Kokkos::LayoutLeft, memory> xl("xl", 37, 203), yl("yl", 37, 203);
  Kokkos::deep_copy(xl, x);
  ordo::nn::softmax(ExecutionSpace(), xl, yl);
  Kokkos::View<float**, Kokkos::LayoutRight, memory> wide("wide", 37, 406), wide_y("wide_y", 37, 406);
  const auto xs = Kokkos::subview(wide, Kokkos::ALL, Kokkos::pair<int, int>(100, 303));
  const auto ys = Kokkos::subview(wide_y, Kokkos::ALL, Kokkos::pair<int, int>(1, 204));
  Kokkos::deep_copy(xs, x);
  ordo::nn::softmax(ExecutionSpace(), xs, ys);
  auto in_place = on_space<float, ExecutionSpace>(hx);
  ordo::nn::softmax(ExecutionSpace(), in_place, in_place);
  const auto hl = readable_on_host(yl);
  const auto hs = readable_on_host(ys);
  const auto hi = readable_on_host(in_place);
  bool same = true;
  for (std::size_t r = 0; r < 37; ++r)
    for (std::size_t c = 0; c < 203; ++c)
      same = same && bits(hl(r, c)) == bits(reference(r, c)) && bits(hs(r, c)) == bits(reference(r, c)) &&
             bits(hi(r, c)) == bits(reference(r, c));
  CHECK(same);
  // In place for the other operations: the out-of-place bits.
  decltype(on_space<float, ExecutionSpace>(hx)) ly("ly", 37, 203), dx("dx", 37, 203);
  ordo::nn::log_softmax(ExecutionSpace(), x, ly);
  auto ly_in_place = on_space<float, ExecutionSpace>(hx);
  ordo::nn::log_softmax(ExecutionSpace(), ly_in_place, ly_in_place);
  const auto dy = on_space<float, ExecutionSpace>(random_matrix<float>(37, 203, 0, 1, 6));
  ordo::nn::softmax_backward(ExecutionSpace(), dy, y, dx);
  auto dy_in_place = on_space<float, ExecutionSpace>(readable_on_host(dy));
  ordo::nn::softmax_backward(ExecutionSpace(), dy_in_place, y, dy_in_place);
  const auto a = readable_on_host(ly), b = readable_on_host(ly_in_place), c2 = readable_on_host(dx), d = readable_on_host(dy_in_place);
  same = true;
  for (std::size_t r = 0; r < 37; ++r)
    for (std::size_t c = 0; c < 203; ++c) same = same && bits(a(r, c)) == bits(b(r, c)) && bits(c2(r, c)) == bits(d(r, c));
  CHECK(same);
  // bfloat16 in LayoutLeft.
  const auto hb = random_matrix<ordo::bfloat16>(9, 70, 0, 2, 8);
  const auto xb = on_space<ordo::bfloat16, ExecutionSpace>(hb);
  decltype(on_space<ordo::bfloat16, ExecutionSpace>(hb)) yb("yb", 9, 70);
  ordo::nn::softmax(ExecutionSpace(), xb, yb);
  Kokkos::View<ordo::bfloat16**, Kokkos::LayoutLeft, memory> xbl("xbl", 9, 70), ybl("ybl", 9, 70);
  Kokkos::deep_copy(xbl, xb);
  ordo::nn::softmax(ExecutionSpace(), xbl, ybl);
  const auto r1 = readable_on_host(yb);
  const auto r2 = readable_on_host(ybl);
  same = true;
  for (std::size_t r = 0; r < 9; ++r)
    for (std::size_t c = 0; c < 70; ++c) same = same && bits(r1(r, c)) == bits(r2(r, c));
  CHECK(same);
}
ORDO_TEST_ALL_SPACES(layout_id);

TEST_CASE_TEMPLATE_DEFINE("bad input throws std::invalid_argument naming both shapes", ExecutionSpace, bad_id) {
  using view = Kokkos::View<float**, typename ExecutionSpace::memory_space>;
  const view x("x", 3, 4), y("y", 3, 5), dy("dy", 3, 4), dx("dx", 2, 4);
  Kokkos::View<float*, typename ExecutionSpace::memory_space> lse("lse", 5);
  const auto message = [](auto&& f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  CHECK(message([&] { ordo::nn::softmax(x, y); }) == "ordo::nn::softmax: y has shape (3, 5) but x has shape (3, 4)");
  CHECK(message([&] { ordo::nn::log_softmax(ExecutionSpace(), x, y); }) ==
        "ordo::nn::log_softmax: y has shape (3, 5) but x has shape (3, 4)");
  CHECK(message([&] { ordo::nn::logsumexp(ExecutionSpace(), x, lse); }) ==
        "ordo::nn::logsumexp: lse has 5 entries but x has 3 rows");
  CHECK(message([&] { ordo::nn::softmax_backward(ExecutionSpace(), dy, y, x); }) ==
        "ordo::nn::softmax_backward: y has shape (3, 5) but dy has shape (3, 4)");
  CHECK(message([&] { ordo::nn::log_softmax_backward(ExecutionSpace(), dy, x, dx); }) ==
        "ordo::nn::log_softmax_backward: dx has shape (2, 4) but dy has shape (3, 4)");
}
ORDO_TEST_ALL_SPACES(bad_id);

// ------------------------------------------------------------------------------------------------
// Thread counts: the OpenMP results have Serial's bits (softmax_test.threads_N runs this with 1, 2
// and 4 threads).

#if defined(KOKKOS_ENABLE_OPENMP) && defined(KOKKOS_ENABLE_SERIAL)
template <class T, class Run>
bool same_bits_on_serial_and_openmp(const Run& run) {
  const auto hx = random_matrix<T>(301, 1100, 0, 4, 99);
  const auto hdy = random_matrix<T>(301, 1100, 0, 1, 98);
  host_matrix<T> out[2] = {host_matrix<T>("a", 301, 1100), host_matrix<T>("b", 301, 1100)};
  run(Kokkos::Serial(), hx, hdy, out[0]);
  run(Kokkos::OpenMP(), hx, hdy, out[1]);
  for (std::size_t r = 0; r < 301; ++r)
    for (std::size_t c = 0; c < 1100; ++c)
      if (bits(out[0](r, c)) != bits(out[1](r, c))) return false;
  return true;
}

template <class T>
void check_thread_independence() {
  const auto both = [](auto space, const host_matrix<T>& x, const host_matrix<T>& dy, host_matrix<T>& out) {
    host_matrix<T> y("y", x.extent(0), x.extent(1));
    host_matrix<T> dx("dx", x.extent(0), x.extent(1));
    Kokkos::View<ordo::compute_type_t<T>*, Kokkos::HostSpace> lse("lse", x.extent(0));
    ordo::nn::softmax(space, x, y);
    ordo::nn::softmax_backward(space, dy, y, dx);
    ordo::nn::log_softmax(space, x, y);
    ordo::nn::log_softmax_backward(space, dy, y, out);
    ordo::nn::logsumexp(space, x, lse);
    for (std::size_t r = 0; r < x.extent(0); ++r) {
      out(r, 0) = static_cast<T>(lse(r));  // fold the other results in
      for (std::size_t c = 1; c < x.extent(1); c += 2) out(r, c) = dx(r, c);
    }
    // The device shape on the same space.
    host_matrix<T> yd("yd", x.extent(0), x.extent(1));
    ordo::nn::detail::forward<softmax_op::softmax, launch_shape::device>(space, x, yd, lse);
    space.fence();
    for (std::size_t r = 0; r < x.extent(0); ++r) out(r, 2) = yd(r, 2);
  };
  CHECK(same_bits_on_serial_and_openmp<T>(both));
}

TEST_CASE("the same bits on any thread count") {
  if (const char* expected = std::getenv("ORDO_TEST_THREADS")) {
    CHECK(Kokkos::OpenMP().concurrency() == std::atoi(expected));
  }
  check_thread_independence<float>();
  check_thread_independence<double>();
  check_thread_independence<ordo::bfloat16>();
  check_thread_independence<ordo::half>();
}
#endif

// ------------------------------------------------------------------------------------------------
// The AVX2 and AVX-512 twins of the host kernels give the baseline build's bits (no fused
// multiply-adds, the same lanes).

template <class T>
void check_capabilities_agree() {
  using C = ordo::compute_type_t<T>;
  using ordo::detail::cpu_capability;
  const auto x = random_matrix<T>(23, 1500, 0, 6, 41);
  const auto dy = random_matrix<T>(23, 1500, 0, 1, 42);
  const cpu_capability before = ordo::detail::host_capability();
  const auto run_at = [&](cpu_capability level, host_matrix<T> (&out)[4], Kokkos::View<C*, Kokkos::HostSpace>& lse) {
    ordo::detail::set_host_capability(level);
    for (auto& o : out) o = host_matrix<T>("o", 23, 1500);
    lse = Kokkos::View<C*, Kokkos::HostSpace>("lse", 23);
    ordo::nn::softmax(x, out[0]);
    ordo::nn::log_softmax(x, out[1]);
    ordo::nn::softmax_backward(dy, out[0], out[2]);
    ordo::nn::log_softmax_backward(dy, out[1], out[3]);
    ordo::nn::logsumexp(x, lse);
  };
  host_matrix<T> base[4];
  Kokkos::View<C*, Kokkos::HostSpace> base_lse;
  run_at(cpu_capability::baseline, base, base_lse);
  for (const cpu_capability level : {cpu_capability::avx2, cpu_capability::avx512}) {
    // std::string: doctest under nvcc prints a const char* as its address.
    const std::string level_name = ordo::detail::to_string(level);
    CAPTURE(level_name);
    if (ordo::detail::set_host_capability(level) != level) {
      MESSAGE("no " << level_name << " kernels in this build or on this CPU: not compared");
      continue;
    }
    host_matrix<T> out[4];
    Kokkos::View<C*, Kokkos::HostSpace> lse;
    run_at(level, out, lse);
    bool same = true;
    for (int k = 0; k < 4; ++k)
      for (std::size_t r = 0; r < 23; ++r)
        for (std::size_t c = 0; c < 1500; ++c) same = same && bits(out[k](r, c)) == bits(base[k](r, c));
    for (std::size_t r = 0; r < 23; ++r) same = same && bits(lse(r)) == bits(base_lse(r));
    CHECK(same);
  }
  ordo::detail::set_host_capability(before);
}

TEST_CASE("the AVX2 and AVX-512 kernels give the baseline kernels' bits") {
  check_capabilities_agree<float>();
  check_capabilities_agree<double>();
  check_capabilities_agree<ordo::bfloat16>();
  check_capabilities_agree<ordo::half>();
}

// A row's max found wherever its largest element sits alone, at every level: the vector max
// passes keep several running maxima and merge them per block. Row r holds values in [0, 1) and
// 200 at column r, so the exact softmax is 1 there and below exp(-199) < 1e-86 elsewhere (0 in
// float), and logsumexp is 200 + log1p(< 600 exp(-199)), which rounds to 200. A max that missed
// the 200 would give exp(about 199), which overflows float.
template <class T>
void check_lone_max_at_every_level() {
  using C = ordo::compute_type_t<T>;
  using ordo::detail::cpu_capability;
  constexpr std::size_t n = 600;  // a 512-element block and a tail
  host_matrix<T> x("x", n, n), y("y", n, n);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t c = 0; c < n; ++c) x(r, c) = static_cast<T>(c == r ? 200.0 : double((c * 7) % 100) / 100);
  Kokkos::View<C*, Kokkos::HostSpace> lse("lse", n);
  const cpu_capability before = ordo::detail::host_capability();
  for (const cpu_capability level : {cpu_capability::baseline, cpu_capability::avx2, cpu_capability::avx512}) {
    const std::string level_name = ordo::detail::to_string(level);
    CAPTURE(level_name);
    if (ordo::detail::set_host_capability(level) != level) {
      MESSAGE("no " << level_name << " kernels in this build or on this CPU: not run");
      continue;
    }
    ordo::nn::softmax(x, y);
    ordo::nn::logsumexp(x, lse);
    bool right = true;
    for (std::size_t r = 0; r < n; ++r) {
      right = right && static_cast<double>(lse(r)) == 200.0;
      for (std::size_t c = 0; c < n; ++c) {
        const double v = static_cast<double>(y(r, c));
        right = right && (c == r ? v == 1.0 : (v >= 0 && v < 1e-86));
      }
    }
    CHECK(right);
  }
  ordo::detail::set_host_capability(before);
}

TEST_CASE("a lone largest element is the max wherever it sits, at every level") {
  check_lone_max_at_every_level<float>();
  check_lone_max_at_every_level<double>();
  check_lone_max_at_every_level<ordo::bfloat16>();
  check_lone_max_at_every_level<ordo::half>();
}

#if defined(ORDO_IMPL_DISPATCH_AVX512) && ORDO_IMPL_VECTOR_EXTENSIONS
// fast_exp on 16 lanes, compiled as the AVX-512 twins compile it.
ORDO_IMPL_AVX512_FUNCTION void fast_exp_16_lanes(const float* in, float* out, std::size_t n) {
  for (std::size_t i = 0; i + 16 <= n; i += 16) {
    ordo::detail::float32x16 v;
    std::memcpy(&v, in + i, sizeof v);
    ordo::detail::fast_exp<false, false>(v, v);
    std::memcpy(out + i, &v, sizeof v);
  }
}
#endif

// ------------------------------------------------------------------------------------------------
// fast_exp: < 1 ulp against a long double exp, the vector version has the scalar one's bits.

ld exp_error_in_ulps(float got, float x) {
  const ld ref = std::exp(static_cast<ld>(x));
  if (ref > static_cast<ld>(std::numeric_limits<float>::max())) return std::isinf(got) ? 0 : 1e9L;
  return std::abs(static_cast<ld>(got) - ref) / ulp_of<float>(ref);
}

TEST_CASE("fast_exp is within 1 ulp of exp over float's whole range, vector and scalar alike") {
  std::vector<float> xs;
  std::mt19937_64 gen(1);
  std::uniform_real_distribution<float> wide(-104.5f, 89.0f), narrow(-1.0f, 1.0f);
  for (int i = 0; i < (1 << 21); ++i) xs.push_back(wide(gen));
  for (int i = 0; i < (1 << 18); ++i) xs.push_back(narrow(gen));
  // The range edges: overflow (88.7228), the smallest normal (-87.3365), the smallest subnormal
  // (-103.279) and the last nonzero (-103.972), and their neighbours.
  for (const float edge : {88.72283f, -87.33654f, -103.27893f, -103.97208f, 0.0f, -0.3465736f, 0.3465736f}) {
    float v = edge;
    for (int i = 0; i < 64; ++i) v = std::nextafter(v, -inf);
    for (int i = 0; i < 128; ++i, v = std::nextafter(v, inf)) xs.push_back(v);
  }
  while (xs.size() % 8 != 0) xs.push_back(0);
  ld worst = 0;
  bool vector_same = true;
  for (std::size_t i = 0; i < xs.size(); i += 8) {
    float out[8];
#if ORDO_IMPL_VECTOR_EXTENSIONS
    ordo::detail::float8 v;
    std::memcpy(&v, &xs[i], sizeof v);
    ordo::detail::fast_exp(v, v);
    std::memcpy(out, &v, sizeof v);
#else
    for (std::size_t l = 0; l < 8; ++l) out[l] = ordo::detail::fast_exp(xs[i + l]);
#endif
    for (std::size_t l = 0; l < 8; ++l) {
      const float s = ordo::detail::fast_exp(xs[i + l]);
      vector_same = vector_same && bits(s) == bits(out[l]);
      worst = std::max(worst, exp_error_in_ulps(s, xs[i + l]));
    }
  }
  CHECK(vector_same);
  CHECK(worst < 1);
#if defined(ORDO_IMPL_DISPATCH_AVX512) && ORDO_IMPL_VECTOR_EXTENSIONS
  if (ordo::detail::host_can_run(ordo::detail::cpu_capability::avx512)) {
    while (xs.size() % 16 != 0) xs.push_back(0);
    std::vector<float> wide_out(xs.size());
    fast_exp_16_lanes(xs.data(), wide_out.data(), xs.size());
    bool wide_same = true;
    for (std::size_t i = 0; i < xs.size(); ++i) wide_same = wide_same && bits(wide_out[i]) == bits(ordo::detail::fast_exp(xs[i]));
    CHECK(wide_same);
  } else {
    MESSAGE("no AVX-512 on this CPU: fast_exp's 16-lane form not run");
  }
#endif
  MESSAGE("fast_exp: largest error " << static_cast<double>(worst) << " ulp over " << xs.size() << " inputs");
  CHECK(ordo::detail::fast_exp(-inf) == 0);
  CHECK(ordo::detail::fast_exp(inf) == inf);
  CHECK(std::isnan(ordo::detail::fast_exp(nan)));
  CHECK(ordo::detail::fast_exp(0.0f) == 1);
  CHECK(ordo::detail::fast_exp(-104.0f) == 0);
  CHECK(ordo::detail::fast_exp(-103.9f) == std::numeric_limits<float>::denorm_min());
  CHECK(std::isinf(ordo::detail::fast_exp(88.73f)));
  CHECK(ordo::detail::fast_exp(88.72f) == std::exp(88.72f));
}

}  // namespace
