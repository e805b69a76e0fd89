#include <ordo/reduce.hpp>

#include "support/exact_reference.hpp"
#include "support/execution_spaces.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

template <class T, class Space>
Kokkos::View<T*, typename Space::memory_space> to_view(const std::vector<T>& values) {
  Kokkos::View<T*, typename Space::memory_space> v("values", values.size());
  auto host = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < values.size(); ++i) host(i) = values[i];
  Kokkos::deep_copy(v, host);
  return v;
}

template <class T>
long double sum_of_magnitudes(const std::vector<T>& values) {
  long double s = 0;
  for (T v : values) s += std::fabs(static_cast<long double>(v));
  return s;
}


// The documented bound of each policy, as a multiple of u * sum |x| (docs/reductions.md).
template <class Policy>
long double bound_in_units(std::size_t n) {
  const long double log2n = std::ceil(std::log2(static_cast<long double>(n > 1 ? n : 2)));
  if constexpr (std::is_same_v<Policy, ordo::summation::naive_t>) {
    return static_cast<long double>(n > 0 ? n - 1 : 0);
  } else if constexpr (std::is_same_v<Policy, ordo::summation::pairwise_t>) {
    return log2n + 20;  // 16 per leaf lane, 3 to join the lanes, one per level above
  } else {
    return 4;  // Kahan and Neumaier: 2u per stage, two stages (lanes, then joins), + O(n u^2)
  }
}

struct data_set {
  std::string name;
  std::vector<float> values;
};

std::vector<data_set> float_data_sets() {
  std::mt19937_64 rng(42);
  std::vector<data_set> sets;
  sets.push_back({"cancellation 1e16, 1, -1e16 (as float: 1e16 absorbs 1)", {1e16f, 1.0f, -1e16f}});
  {
    std::vector<float> v;
    for (int i = 0; i < 2000; ++i) v.push_back(i % 2 == 0 ? 1e20f * static_cast<float>(1 + i % 7) : 1e-20f);
    for (int i = 0; i < 1000; ++i) v.push_back(-1e20f * static_cast<float>(1 + (2 * i) % 7));
    std::shuffle(v.begin(), v.end(), rng);
    sets.push_back({"alternating huge and tiny", v});
  }
  {
    std::vector<float> v(1'000'000);
    std::uniform_real_distribution<double> exponent(-15.0, 15.0);
    std::bernoulli_distribution sign(0.5);
    for (auto& x : v) x = static_cast<float>((sign(rng) ? -1.0 : 1.0) * std::pow(10.0, exponent(rng)));
    sets.push_back({"1e6 values spanning 1e30", v});
  }
  {
    std::vector<float> v(5000);
    std::uniform_int_distribution<std::uint32_t> mantissa(1, 0x7fffff);
    for (auto& x : v) x = std::bit_cast<float>(mantissa(rng) | (rng() % 2 == 0 ? 0x80000000u : 0u));
    sets.push_back({"all subnormal", v});
  }
  {
    const float max = std::numeric_limits<float>::max();
    sets.push_back({"partial sums overflow, total does not", {max, max, 3.0f, -max, -max}});
  }
  sets.push_back({"a single element", {0.1f}});
  sets.push_back({"ties to even: 1 + 2^-24", {1.0f, std::ldexp(1.0f, -24)}});
  sets.push_back({"ties to even: (1 + 2^-23) + 2^-24", {1.0f + std::ldexp(1.0f, -23), std::ldexp(1.0f, -24)}});
  {
    std::vector<float> v(1 << 20);
    std::uniform_real_distribution<float> d(0.0f, 1.0f);
    for (auto& x : v) x = d(rng);
    sets.push_back({"1M uniform [0, 1)", v});
  }
  {
    std::vector<float> v(100'003);
    std::normal_distribution<float> d(1e4f, 1.0f);
    for (auto& x : v) x = d(rng);
    sets.push_back({"100003 values 1e4 + N(0, 1)", v});
  }
  return sets;
}

template <class Policy, class Space>
void check_policy_bounds(Policy policy) {
  for (const auto& set : float_data_sets()) {
    if (set.name.find("overflow") != std::string::npos) continue;  // only exact avoids the overflow
    CAPTURE(set.name);
    const auto view = to_view<float, Space>(set.values);
    const long double exact = ordo_test::exact_sum(set.values).to_long_double();
    const long double magnitude = sum_of_magnitudes(set.values);
    const long double u_float = std::ldexp(1.0L, -24), u_double = std::ldexp(1.0L, -53);
    const float s = ordo::sum(Space(), view, policy);
    const double d = ordo::sum<double>(Space(), view, policy);
    // The bound, plus the final rounding to T, plus the smallest subnormal.
    CHECK(std::fabs(static_cast<long double>(s) - exact) <=
          bound_in_units<Policy>(set.values.size()) * u_float * magnitude + u_float * std::fabs(exact) + 1e-45L);
    CHECK(std::fabs(static_cast<long double>(d) - exact) <=
          bound_in_units<Policy>(set.values.size()) * u_double * magnitude + u_double * std::fabs(exact) + 1e-320L);
  }
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("exact: correctly rounded sum and mean against exact big-integer arithmetic", ExecutionSpace,
                          exact_id) {
  for (const auto& set : float_data_sets()) {
    CAPTURE(set.name);
    const auto view = to_view<float, ExecutionSpace>(set.values);
    const auto reference = ordo_test::exact_sum(set.values);
    const float s = ordo::sum(ExecutionSpace(), view);
    const double d = ordo::sum<double>(ExecutionSpace(), view);
    CHECK(ordo_test::is_correctly_rounded(s, reference));
    CHECK(ordo_test::is_correctly_rounded(d, reference));
    const float m = ordo::mean(ExecutionSpace(), view, ordo::summation::exact);
    const double md = ordo::mean<double>(ExecutionSpace(), view, ordo::summation::exact);
    CHECK(ordo_test::is_correctly_rounded(m, reference, set.values.size()));
    CHECK(ordo_test::is_correctly_rounded(md, reference, set.values.size()));
    // Doubles too: the same values widened, plus a few that need double's range.
    std::vector<double> wide(set.values.begin(), set.values.end());
    wide.push_back(1e300);
    wide.push_back(std::ldexp(1.0, -1074));
    wide.push_back(-1e300);
    const auto wide_view = to_view<double, ExecutionSpace>(wide);
    CHECK(ordo_test::is_correctly_rounded(ordo::sum(ExecutionSpace(), wide_view), ordo_test::exact_sum(wide)));
    CHECK(ordo_test::is_correctly_rounded(ordo::mean(ExecutionSpace(), wide_view), ordo_test::exact_sum(wide), wide.size()));
  }
  // Published by the question: 1e16 + 1 - 1e16 in double is exactly 1.
  const auto v = to_view<double, ExecutionSpace>({1e16, 1.0, -1e16});
  CHECK(ordo::sum(ExecutionSpace(), v) == 1.0);
  CHECK(ordo::sum(ExecutionSpace(), v, ordo::summation::naive) == 0.0);
}
ORDO_TEST_ALL_SPACES(exact_id);

TEST_CASE_TEMPLATE_DEFINE("every policy stays within its documented error bound", ExecutionSpace, bounds_id) {
  check_policy_bounds<ordo::summation::naive_t, ExecutionSpace>(ordo::summation::naive);
  check_policy_bounds<ordo::summation::pairwise_t, ExecutionSpace>(ordo::summation::pairwise);
  check_policy_bounds<ordo::summation::kahan_t, ExecutionSpace>(ordo::summation::kahan);
  check_policy_bounds<ordo::summation::neumaier_t, ExecutionSpace>(ordo::summation::neumaier);
}
ORDO_TEST_ALL_SPACES(bounds_id);

TEST_CASE_TEMPLATE_DEFINE("non-finite inputs follow IEEE; overflow gives infinity", ExecutionSpace, ieee_id) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float max = std::numeric_limits<float>::max();
  const auto sum = [](const std::vector<float>& v) { return ordo::sum(ExecutionSpace(), to_view<float, ExecutionSpace>(v)); };
  CHECK(std::isnan(sum({1.0f, nan, 2.0f})));
  CHECK(std::isnan(sum({inf, -inf})));
  CHECK(sum({inf, 1.0f, inf}) == inf);
  CHECK(sum({-inf, 5.0f}) == -inf);
  CHECK(sum({max, max}) == inf);
  CHECK(sum({-max, -max}) == -inf);
  CHECK(ordo::sum<double>(ExecutionSpace(), to_view<float, ExecutionSpace>({max, max})) == 2.0 * static_cast<double>(max));
  CHECK(std::isnan(ordo::sum(ExecutionSpace(), to_view<float, ExecutionSpace>({1.0f, nan}), ordo::summation::kahan)));

  const Kokkos::View<float*, typename ExecutionSpace::memory_space> empty("empty", 0);
  const float zero = ordo::sum(ExecutionSpace(), empty);
  CHECK(zero == 0.0f);
  CHECK(!std::signbit(zero));
  CHECK_THROWS_WITH_AS(ordo::mean(ExecutionSpace(), empty), "ordo::mean: empty range", std::domain_error);
  CHECK_THROWS_AS(ordo::mean(ExecutionSpace(), empty, ordo::summation::naive), std::domain_error);
}
ORDO_TEST_ALL_SPACES(ieee_id);

TEST_CASE_TEMPLATE_DEFINE("exact sums are bitwise identical under permutation and any chunking", ExecutionSpace,
                          reproducible_id) {
  std::mt19937_64 rng(7);
  std::vector<float> values(200'000);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (auto& x : values) x = d(rng) * std::pow(2.0f, static_cast<float>(rng() % 40) - 20.0f);
  const float reference = ordo::sum(ExecutionSpace(), to_view<float, ExecutionSpace>(values));
  CHECK(ordo_test::is_correctly_rounded(reference, ordo_test::exact_sum(values)));
  for (int trial = 0; trial < 3; ++trial) {
    std::shuffle(values.begin(), values.end(), rng);
    const auto view = to_view<float, ExecutionSpace>(values);
    CHECK(std::bit_cast<std::uint32_t>(ordo::sum(ExecutionSpace(), view)) == std::bit_cast<std::uint32_t>(reference));
    // Users' own parallel_reduce over random chunks, merged in a random order.
    std::vector<std::size_t> cuts{0, values.size()};
    for (int c = 0; c < 7; ++c) cuts.push_back(rng() % values.size());
    std::sort(cuts.begin(), cuts.end());
    std::vector<ordo::detail::exact_accumulator<float>> parts;
    for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
      ordo::detail::exact_accumulator<float> part;
      Kokkos::parallel_reduce(
          Kokkos::RangePolicy<ExecutionSpace>(ExecutionSpace(), cuts[c], cuts[c + 1]),
          KOKKOS_LAMBDA(std::size_t i, ordo::detail::exact_accumulator<float>& acc) {
            acc.add(view(i));
            acc.normalize();
          },
          ordo::reducers::exact<float, ExecutionSpace>(part));
      parts.push_back(part);
    }
    std::shuffle(parts.begin(), parts.end(), rng);
    ordo::detail::exact_accumulator<float> total;
    for (const auto& p : parts) total.merge(p);
    CHECK(std::bit_cast<std::uint32_t>(ordo::reducers::exact<float, ExecutionSpace>::result(total)) ==
          std::bit_cast<std::uint32_t>(reference));
  }
}
ORDO_TEST_ALL_SPACES(reproducible_id);

TEST_CASE_TEMPLATE_DEFINE("the reducers work inside users' parallel_reduce", ExecutionSpace, reducers_id) {
  const std::vector<double> values{1e16, 1.0, -1e16, 3.0};
  const auto view = to_view<double, ExecutionSpace>(values);
  ordo::detail::compensated<double> k{};
  Kokkos::parallel_reduce(
      Kokkos::RangePolicy<ExecutionSpace>(ExecutionSpace(), 0, values.size()),
      KOKKOS_LAMBDA(std::size_t i, ordo::detail::compensated<double>& acc) { ordo::reducers::neumaier<double, ExecutionSpace>::add(acc, view(i)); },
      ordo::reducers::neumaier<double, ExecutionSpace>(k));
  CHECK(ordo::reducers::neumaier<double, ExecutionSpace>::result(k) == 4.0);
  ordo::detail::pairwise_counter<double> p{};
  Kokkos::parallel_reduce(
      Kokkos::RangePolicy<ExecutionSpace>(ExecutionSpace(), 0, 1000),
      KOKKOS_LAMBDA(int i, ordo::detail::pairwise_counter<double>& acc) { ordo::reducers::pairwise<double, ExecutionSpace>::add(acc, static_cast<double>(i)); },
      ordo::reducers::pairwise<double, ExecutionSpace>(p));
  CHECK(ordo::reducers::pairwise<double, ExecutionSpace>::result(p) == 999.0 * 1000.0 / 2.0);
}
ORDO_TEST_ALL_SPACES(reducers_id);

TEST_CASE("the exact sum is the same bits for every thread count this process runs with") {
  // ctest runs this binary with 1, 2 and 4 OpenMP threads (reduce_test.threads_N); each run checks
  // the bits against the exact oracle, so all runs agree with each other.
  const char* expected = std::getenv("ORDO_TEST_THREADS");
  REQUIRE(expected != nullptr);
  CHECK(Kokkos::DefaultExecutionSpace().concurrency() == std::atoi(expected));
  std::mt19937_64 rng(11);
  std::vector<float> values(1 << 20);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (auto& x : values) x = d(rng) * std::pow(2.0f, static_cast<float>(rng() % 60) - 30.0f);
  const auto view = to_view<float, Kokkos::DefaultExecutionSpace>(values);
  const auto reference = ordo_test::exact_sum(values);
  CHECK(ordo_test::is_correctly_rounded(ordo::sum(view), reference));
  CHECK(ordo_test::is_correctly_rounded(ordo::mean(view), reference, values.size()));
}
