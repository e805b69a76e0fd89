#include <ordo/core/float16.hpp>
#include <ordo/kernels/exact_sum.hpp>
#include <ordo/kernels/reduce.hpp>

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

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include "support/cpu_requirements.hpp"

namespace {

// reduce_test_fast_math builds this file with -ffast-math. Only the exact sum keeps its promises
// there (NaN and Inf tests fold away, compensations may be reassociated away), so the tests of
// the rest skip.
#if defined(__FAST_MATH__)
constexpr bool fast_math = true;
#else
constexpr bool fast_math = false;
#endif
#if defined(__FAST_MATH__) && defined(__SSE2__)
// -ffast-math's startup code also turns on flush-to-zero and denormals-are-zero, which the
// oracle's own arithmetic on subnormals cannot take: this listener turns them off on the thread
// that runs the tests, before they start (static initializers may run before that startup code).
// ordo under those modes has its own test (check_block(..., true)).
struct ieee_subnormals : doctest::IReporter {
  explicit ieee_subnormals(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override { _mm_setcsr(_mm_getcsr() & ~0x8040u); }
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("ieee_subnormals", 1, ieee_subnormals);
#endif

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
// Naive summation's (n - 1) u sum|x| (Higham, Accuracy and Stability, 4.2) holds for any order but
// has no teeth on large sets: 2^20 values of [0, 1) in float may be off by 32768, 6% of their sum.
// Where the rounding errors behave as independent and of mean zero (random_rounding), Higham and
// Mary's probabilistic bound holds for any order too (SIAM J. Sci. Comput. 41(5), 2019: the error
// is at most gamma~_{n-1}(lambda) sum|x|, gamma~_k(lambda) = exp(lambda sqrt(k) u + k u^2 / (1 - u)) - 1,
// except with probability at most 2 n exp(-lambda^2 (1 - u)^2 / 2)). With lambda = 10 that
// probability is below 10^-15 for n = 2^20, and the bound is 320 on that set, a 100th of the
// other; 10.01 covers the exponential's higher-order terms in float and double.
template <class Policy>
long double bound_in_units(std::size_t n, bool random_rounding = false) {
  const long double log2n = std::ceil(std::log2(static_cast<long double>(n > 1 ? n : 2)));
  if constexpr (std::is_same_v<Policy, ordo::summation::naive_t>) {
    const auto additions = static_cast<long double>(n > 0 ? n - 1 : 0);
    return random_rounding ? std::min(additions, 10.01L * std::sqrt(additions)) : additions;
  } else if constexpr (std::is_same_v<Policy, ordo::summation::pairwise_t>) {
    return log2n + 20;  // 16 per leaf lane, 3 to join the lanes, one per level above
  } else {
    return 4;  // Kahan and Neumaier: 2u per stage, two stages (lanes, then joins), + O(n u^2)
  }
}

struct data_set {
  std::string name;
  std::vector<float> values;
  // Random magnitudes and signs: rounding errors that the probabilistic bound's model fits. The
  // structured sets (cancellation, huge and tiny, ties, 1e4 + N(0, 1)) get the worst-case bound.
  bool random_rounding;
};

std::vector<data_set> float_data_sets() {
  std::mt19937_64 rng(42);
  std::vector<data_set> sets;
  sets.push_back({"cancellation 1e16, 1, -1e16 (as float: 1e16 absorbs 1)", {1e16f, 1.0f, -1e16f}, false});
  {
    std::vector<float> v;
    for (int i = 0; i < 2000; ++i) v.push_back(i % 2 == 0 ? 1e20f * static_cast<float>(1 + i % 7) : 1e-20f);
    for (int i = 0; i < 1000; ++i) v.push_back(-1e20f * static_cast<float>(1 + (2 * i) % 7));
    std::shuffle(v.begin(), v.end(), rng);
    sets.push_back({"alternating huge and tiny", v, false});
  }
  {
    std::vector<float> v(1'000'000);
    std::uniform_real_distribution<double> exponent(-15.0, 15.0);
    std::bernoulli_distribution sign(0.5);
    for (auto& x : v) x = static_cast<float>((sign(rng) ? -1.0 : 1.0) * std::pow(10.0, exponent(rng)));
    sets.push_back({"1e6 values spanning 1e30", v, true});
  }
  {
    std::vector<float> v(5000);
    std::uniform_int_distribution<std::uint32_t> mantissa(1, 0x7fffff);
    for (auto& x : v) x = std::bit_cast<float>(mantissa(rng) | (rng() % 2 == 0 ? 0x80000000u : 0u));
    sets.push_back({"all subnormal", v, false});
  }
  {
    const float max = std::numeric_limits<float>::max();
    sets.push_back({"partial sums overflow, total does not", {max, max, 3.0f, -max, -max}, false});
  }
  sets.push_back({"a single element", {0.1f}, false});
  sets.push_back({"ties to even: 1 + 2^-24", {1.0f, std::ldexp(1.0f, -24)}, false});
  sets.push_back({"ties to even: (1 + 2^-23) + 2^-24", {1.0f + std::ldexp(1.0f, -23), std::ldexp(1.0f, -24)}, false});
  {
    std::vector<float> v(1 << 20);
    std::uniform_real_distribution<float> d(0.0f, 1.0f);
    for (auto& x : v) x = d(rng);
    sets.push_back({"1M uniform [0, 1)", v, true});
  }
  {
    std::vector<float> v(100'003);
    std::normal_distribution<float> d(1e4f, 1.0f);
    for (auto& x : v) x = d(rng);
    sets.push_back({"100003 values 1e4 + N(0, 1)", v, false});
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
          bound_in_units<Policy>(set.values.size(), set.random_rounding) * u_float * magnitude + u_float * std::fabs(exact) +
              1e-45L);
    CHECK(std::fabs(static_cast<long double>(d) - exact) <=
          bound_in_units<Policy>(set.values.size(), set.random_rounding) * u_double * magnitude +
              u_double * std::fabs(exact) + 1e-320L);
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
  if (!fast_math) CHECK(ordo::sum(ExecutionSpace(), v, ordo::summation::naive) == 0.0);
}
ORDO_TEST_ALL_SPACES(exact_id);

TEST_CASE_TEMPLATE_DEFINE("every policy stays within its documented error bound" * doctest::skip(fast_math), ExecutionSpace, bounds_id) {
  check_policy_bounds<ordo::summation::naive_t, ExecutionSpace>(ordo::summation::naive);
  check_policy_bounds<ordo::summation::pairwise_t, ExecutionSpace>(ordo::summation::pairwise);
  check_policy_bounds<ordo::summation::kahan_t, ExecutionSpace>(ordo::summation::kahan);
  check_policy_bounds<ordo::summation::neumaier_t, ExecutionSpace>(ordo::summation::neumaier);
}
ORDO_TEST_ALL_SPACES(bounds_id);

TEST_CASE_TEMPLATE_DEFINE("non-finite inputs follow IEEE; overflow gives infinity" * doctest::skip(fast_math), ExecutionSpace, ieee_id) {
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
          ordo::reducers::exact<float>(part));
      parts.push_back(part);
    }
    std::shuffle(parts.begin(), parts.end(), rng);
    ordo::detail::exact_accumulator<float> total;
    for (const auto& p : parts) total.merge(p);
    CHECK(std::bit_cast<std::uint32_t>(ordo::reducers::exact<float>::result(total)) ==
          std::bit_cast<std::uint32_t>(reference));
    // The same chunks through the public parts (ordo::exact_sum_of, what ordo::mpi::sum adds
    // across ranks): merged in a random order, and as the element-wise sum of their words.
    std::vector<ordo::exact_sum_part<float>> public_parts;
    for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
      public_parts.push_back(ordo::exact_sum_of(
          ExecutionSpace(), Kokkos::subview(view, Kokkos::make_pair(cuts[c], cuts[c + 1]))));
    }
    std::shuffle(public_parts.begin(), public_parts.end(), rng);
    ordo::exact_sum_part<float> merged;
    ordo::exact_sum_part<float>::words_type words{};
    for (const auto& p : public_parts) {
      merged += p;
      const auto w = p.words();
      for (std::size_t i = 0; i < words.size(); ++i) words[i] += w[i];
    }
    const auto from_words = ordo::exact_sum_part<float>::from_words(words);
    const float mean_reference = ordo::mean(ExecutionSpace(), view);
    const auto check_whole = [&](const ordo::exact_sum_part<float>& whole) {
      CHECK(whole.count() == static_cast<std::int64_t>(values.size()));
      CHECK(std::bit_cast<std::uint32_t>(whole.sum<float>()) == std::bit_cast<std::uint32_t>(reference));
      CHECK(std::bit_cast<std::uint32_t>(whole.mean<float>()) == std::bit_cast<std::uint32_t>(mean_reference));
      CHECK(ordo_test::is_correctly_rounded(whole.sum<double>(), ordo_test::exact_sum(values)));
    };
    check_whole(merged);
    check_whole(from_words);
  }
  CHECK_THROWS_AS((void)ordo::exact_sum_part<double>().mean<double>(), std::domain_error);
}
ORDO_TEST_ALL_SPACES(reproducible_id);

namespace {

template <class T>
auto bits_of(T x) {
  return std::bit_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>(x);
}

// The exact sum through both launch shapes (docs/gpu.md): the same accumulator bits, hence the
// same rounded sum and mean, and both correctly rounded against the big-integer oracle.
template <class T, class ExecutionSpace>
void check_shapes_agree(const std::vector<T>& values) {
  CAPTURE(values.size());
  const auto view = to_view<T, ExecutionSpace>(values);
  const auto host = ordo::detail::reduce_view<T>(ExecutionSpace(), view, ordo::summation::exact,
                                                 ordo::detail::launch_shape::host);
  const auto device = ordo::detail::reduce_view<T>(ExecutionSpace(), view, ordo::summation::exact,
                                                   ordo::detail::launch_shape::device);
  auto a = host, b = device;
  a.normalize();
  b.normalize();
  CHECK(a.flags == b.flags);
  for (int i = 0; i < a.chunk_count; ++i) CHECK(a.chunk[i] == b.chunk[i]);
  const T s = ordo::detail::finish_sum<T, ordo::summation::exact_t>(device);
  CHECK(bits_of(s) == bits_of(ordo::detail::finish_sum<T, ordo::summation::exact_t>(host)));
  if (!values.empty()) {
    const T m = ordo::detail::round_exact_mean<T>(device, values.size());
    CHECK(bits_of(m) == bits_of(ordo::detail::round_exact_mean<T>(host, values.size())));
    if (std::isfinite(s)) CHECK(ordo_test::is_correctly_rounded(s, ordo_test::exact_sum(values)));
  }
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("the exact sum's device shape gives the host shape's bits", ExecutionSpace, shapes_id) {
  for (const auto& set : float_data_sets()) {
    CAPTURE(set.name);
    check_shapes_agree<float, ExecutionSpace>(set.values);
    check_shapes_agree<double, ExecutionSpace>(std::vector<double>(set.values.begin(), set.values.end()));
  }
  // Sizes around the device shape's threads: empty, fewer than one thread's share, not a
  // multiple, and past the thread cap (each thread then adds more than its minimum share).
  std::mt19937_64 rng(23);
  std::normal_distribution<double> d(0.0, 1.0);
  const std::size_t cap = static_cast<std::size_t>(ordo::detail::device_exact_max_threads *
                                                    ordo::detail::device_exact_elements_per_thread);
  const std::vector<std::size_t> sizes{0, 1, 31, 33, 4097, cap + 12345};
  for (const std::size_t n : sizes) {
    std::vector<double> values(n);
    for (auto& x : values) x = d(rng) * std::ldexp(1.0, static_cast<int>(rng() % 200) - 100);
    check_shapes_agree<double, ExecutionSpace>(values);
  }
}
ORDO_TEST_ALL_SPACES(shapes_id);

namespace {

// |computed - exact|, with the difference taken exactly.
template <class T>
long double error_against(T computed, const ordo_test::big_integer& exact) {
  ordo_test::big_integer difference = exact;
  difference -= ordo_test::big_integer::scaled(computed);
  return std::fabs(difference.to_long_double());
}

// 1 followed by n - 1 values in [u/2, u) (u the unit roundoff of T): each is below half an ulp of 1,
// so a left-to-right sum loses every one of them, about n u / 2 in all, while a pairwise sum adds
// them among themselves first and loses at most a rounding per level. Summing a binary counter
// of single values, the pairwise reducer must stay within the documented pairwise bound
// (ceil(log2 n) + 20) u S, S = sum |x| (docs/reductions.md), against the exact big-integer sum; a
// naive sum loses about 0.75 n u: 360 times the bound for n = 2^14 on one thread, 180 times with
// the values split between two threads.
template <class T, class ExecutionSpace>
void check_pairwise_separates_from_naive() {
  CAPTURE(sizeof(T));
  const std::size_t n = 1 << 14;
  const T u = std::numeric_limits<T>::epsilon() / 2;
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<T> tiny(u / 2, u);
  std::vector<T> values(n);
  values[0] = T(1);
  for (std::size_t i = 1; i < n; ++i) values[i] = tiny(rng);
  const auto view = to_view<T, ExecutionSpace>(values);
  const ordo_test::big_integer exact = ordo_test::exact_sum(values);
  const long double bound =
      bound_in_units<ordo::summation::pairwise_t>(n) * static_cast<long double>(u) * sum_of_magnitudes(values);

  ordo::detail::pairwise_counter<T> p{};
  Kokkos::parallel_reduce(
      Kokkos::RangePolicy<ExecutionSpace>(ExecutionSpace(), 0, n),
      KOKKOS_LAMBDA(std::size_t i, ordo::detail::pairwise_counter<T>& acc) {
        ordo::reducers::pairwise<T>::add(acc, view(i));
      },
      ordo::reducers::pairwise<T>(p));
  const T pairwise = ordo::reducers::pairwise<T>::result(p);
  CAPTURE(static_cast<double>(bound));
  CHECK(error_against(pairwise, exact) <= bound);
  // The sum policy on the same data (128-element leaves, then a counter of leaves).
  CHECK(error_against(ordo::sum(ExecutionSpace(), view, ordo::summation::pairwise), exact) <= bound);

  // The data tell the two apart: naive summation, left to right on the host, breaks the bound.
  T naive = T(0);
  for (T v : values) naive += v;
  CHECK(error_against(naive, exact) > bound);
  // And so does ordo's naive reducer over the same parallel_reduce, on any thread count up to 8.
  T threads_naive = T(0);
  Kokkos::parallel_reduce(
      Kokkos::RangePolicy<ExecutionSpace>(ExecutionSpace(), 0, n),
      KOKKOS_LAMBDA(std::size_t i, T& acc) { ordo::reducers::naive<T>::add(acc, view(i)); },
      ordo::reducers::naive<T>(threads_naive));
  if (ExecutionSpace().concurrency() <= 8) CHECK(error_against(threads_naive, exact) > bound);
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("the reducers work inside users' parallel_reduce" * doctest::skip(fast_math), ExecutionSpace, reducers_id) {
  const std::vector<double> values{1e16, 1.0, -1e16, 3.0};
  const auto view = to_view<double, ExecutionSpace>(values);
  ordo::detail::compensated<double> k{};
  Kokkos::parallel_reduce(
      Kokkos::RangePolicy<ExecutionSpace>(ExecutionSpace(), 0, values.size()),
      KOKKOS_LAMBDA(std::size_t i, ordo::detail::compensated<double>& acc) { ordo::reducers::neumaier<double>::add(acc, view(i)); },
      ordo::reducers::neumaier<double>(k));
  CHECK(ordo::reducers::neumaier<double>::result(k) == 4.0);
  check_pairwise_separates_from_naive<float, ExecutionSpace>();
  check_pairwise_separates_from_naive<double, ExecutionSpace>();
}
ORDO_TEST_ALL_SPACES(reducers_id);

#if defined(KOKKOS_ENABLE_OPENMP)  // the thread counts are OpenMP's (registered with OpenMP only)
TEST_CASE("the exact sum is the same bits for every thread count this process runs with") {
  // ctest runs this binary with 1, 2 and 4 OpenMP threads (reduce_test.threads_N); each run checks
  // the bits against the exact oracle, so all runs agree with each other.
  const char* expected = std::getenv("ORDO_TEST_THREADS");
  REQUIRE(expected != nullptr);
  CHECK(Kokkos::DefaultHostExecutionSpace().concurrency() == std::atoi(expected));
  std::mt19937_64 rng(11);
  std::vector<float> values(1 << 20);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (auto& x : values) x = d(rng) * std::pow(2.0f, static_cast<float>(rng() % 60) - 30.0f);
  const auto view = to_view<float, Kokkos::DefaultExecutionSpace>(values);
  const auto reference = ordo_test::exact_sum(values);
  CHECK(ordo_test::is_correctly_rounded(ordo::sum(view), reference));
  CHECK(ordo_test::is_correctly_rounded(ordo::mean(view), reference, values.size()));
}
#endif

// ---- The block fast paths of the exact sum (docs/reductions.md, "Blocks") ----
//
// Each block is added to a superaccumulator by ordo::detail::exact_add_block twice, through a
// pointer (the SSE2 path on x86) and through a View (the portable path), at an odd offset; both
// accumulators must hold exactly the oracle's sum of the finite elements, and flags for the rest.
// Exact comparison of the accumulators, not of a rounded result: a lane sum rounded by one bit
// shows here even where the final rounding would hide it.

namespace {

// The accumulator's value in units of 2^-1074, as the oracle counts.
template <class T>
ordo_test::big_integer value_of(ordo::detail::exact_accumulator<T> acc) {
  acc.normalize();
  ordo_test::big_integer r;
  for (int i = ordo::detail::exact_accumulator<T>::chunk_count - 1; i >= 0; --i) {
    r.multiply(std::uint64_t{1} << 32);
    // |chunk| < 2^33 after normalize: exact as a double, and as a subnormal times 2^-1074.
    r += ordo_test::big_integer::scaled(std::ldexp(static_cast<double>(acc.chunk[i]), -1074));
  }
  for (int k = 0; k < 1074 + ordo::detail::float_format<T>::scale; ++k) r.multiply(2);
  return r;
}

// flush: add with the SSE unit's flush-to-zero and denormals-are-zero modes on (x86).
template <class T>
void check_block(const std::vector<T>& values, bool flush = false) {
  CAPTURE(values.size());
  std::vector<T> finite;
  std::uint32_t flags = 0;
  for (T v : values) {
    if (std::isnan(v)) {
      flags |= ordo::detail::has_nan;
    } else if (std::isinf(v)) {
      flags |= v > 0 ? ordo::detail::has_positive_infinity : ordo::detail::has_negative_infinity;
    } else {
      finite.push_back(v);
    }
  }
  const ordo_test::big_integer reference = ordo_test::exact_sum(finite);
  const std::int64_t offset = 3;
  std::vector<T> padded(values.size() + 2 * offset, T(1));
  std::copy(values.begin(), values.end(), padded.begin() + offset);
  const std::int64_t end = offset + static_cast<std::int64_t>(values.size());
  // Through a pointer: the SIMD kernels on x86, each that this CPU has; through a View: the
  // portable code.
  std::vector<int> simd_levels{0};
#if defined(ORDO_IMPL_EXACT_AVX2)
  const auto chosen = ordo::detail::host_capability();
  simd_levels = {1, 2, 3};
#endif
  const Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> view(padded.data(), padded.size());
  for (int simd : simd_levels) {
    CAPTURE(simd);
#if defined(ORDO_IMPL_EXACT_AVX2)
    // Each level only where the CPU has it (set_host_capability grants at most that); the build's
    // own kernels otherwise, again.
    const auto requested = simd == 3   ? ordo::detail::cpu_capability::avx512
                           : simd == 2 ? ordo::detail::cpu_capability::avx2
                                       : ordo::detail::cpu_capability::baseline;
    const auto granted = ordo::detail::set_host_capability(requested);
    const std::string granted_name = ordo::detail::to_string(granted);  // not a const char*: see softmax_test
    CAPTURE(granted_name);
#if !defined(__AVX2__)
    CHECK(ordo::detail::exact_blocks_use_avx2() == (granted >= ordo::detail::cpu_capability::avx2));
#endif
#if defined(ORDO_IMPL_EXACT_AVX512) && !defined(__AVX512F__)
    CHECK(ordo::detail::exact_blocks_use_avx512() == (granted == ordo::detail::cpu_capability::avx512));
#endif
    if (granted != requested) {
      MESSAGE("the exact sum's " << std::string(ordo::detail::to_string(requested))
                                 << " kernels: not on this CPU, its best level ran again");
    }
#endif
    ordo::detail::exact_accumulator<T> through_pointer, through_view;
#if defined(__SSE2__)
    const unsigned int saved = _mm_getcsr();
    if (flush) _mm_setcsr(saved | 0x8040u);  // FTZ (bit 15) and DAZ (bit 6)
#else
    (void)flush;
#endif
    ordo::detail::exact_add_block(through_pointer, static_cast<const T*>(padded.data()), offset, end);
    ordo::detail::exact_add_block(through_view, view, offset, end);
#if defined(__SSE2__)
    _mm_setcsr(saved);
#endif
    CHECK(through_pointer.flags == flags);
    CHECK(through_view.flags == flags);
    ordo_test::big_integer difference = value_of(through_pointer);
    difference -= reference;
    CHECK(difference.is_zero());
    difference = value_of(through_view);
    difference -= reference;
    CHECK(difference.is_zero());
  }
#if defined(ORDO_IMPL_EXACT_AVX2)
  ordo::detail::set_host_capability(chosen);
#endif
}

template <class T>
constexpr int precision_v = std::numeric_limits<T>::digits;
template <class T>
constexpr int quantum_exponent_v = std::numeric_limits<T>::min_exponent - precision_v<T>;  // -149, -1074

// L: lanes of at most 2^L elements (8 lanes, L >= 1), as docs/reductions.md defines it.
int lane_bits(std::size_t n) {
  const std::size_t per_lane = (n + 7) / 8;
  int bits = 1;
  while ((std::size_t{1} << bits) < per_lane) ++bits;
  return bits;
}

enum class fill { crowded, random, half, runs, bands };

// n elements below 2^top in magnitude whose smallest nonzero magnitude has its last bit at
// 2^(top - spread), odd there: with fill::crowded all others are the largest value below 2^top
// with one sign, which makes the lane sums as long as they can be; with fill::runs they are
// 2^a - 2^b for random a > b, mostly of one sign: runs of ones that end at every possible split
// point; with fill::bands they lie just below each level's bound on remainders (2^(top - j (53 -
// L)) for level j, L as below), all of one sign, so that every level's lane sums come as close
// to 53 bits as they can.
template <class T>
std::vector<T> spread_block(std::size_t n, int top, int spread, fill how, std::mt19937_64& rng) {
  // Built in long double (64-bit significand, 15-bit exponent), where these steps are exact and
  // cannot overflow; every value is then a T exactly.
  using wide = long double;
  constexpr int p = precision_v<T>;
  const int quantum = top - spread;
  const T largest = static_cast<T>(std::ldexp(wide(1) - std::ldexp(wide(1), -p), top));
  // The smallest element: (2^(b-1) + 1) * 2^quantum with b = min(spread, p) bits, odd at
  // 2^quantum (a subnormal when small enough).
  const int bits = spread < p ? spread : p;
  const T smallest = static_cast<T>(std::ldexp(bits >= 2 ? std::ldexp(wide(1), bits - 1) + wide(1) : wide(1), quantum));
  const T sign = rng() % 2 == 0 ? T(1) : T(-1);
  const auto random_significand = [&rng] { return wide(1) + std::ldexp(static_cast<wide>(rng() >> (64 - (p - 1))), 1 - p); };
  std::vector<T> v(n);
  std::uniform_int_distribution<int> exponent(quantum + p - 1 < top ? quantum + p - 1 : top - 1, top - 1);
  for (std::size_t i = 0; i < n; ++i) {
    const bool crowd = how == fill::crowded || (how == fill::half && i % 2 == 0);
    if (crowd) {
      v[i] = sign * largest;
    } else if (how == fill::bands) {
      const int step = 53 - lane_bits(n);
      int band = top - static_cast<int>(rng() % 4) * step;
      if (band - 1 < quantum) band = top;
      // A multiple of 2^quantum; a zero becomes the smallest element.
      const wide kept = std::ldexp(std::floor(std::ldexp(random_significand(), band - 1 - quantum)), quantum);
      v[i] = sign * (kept != 0 ? static_cast<T>(kept) : smallest);
    } else if (how == fill::runs) {
      std::uniform_int_distribution<int> high_bit(quantum + 1, top);
      const int a = high_bit(rng);
      std::uniform_int_distribution<int> low_bit(a - p > quantum ? a - p : quantum, a - 1);
      v[i] = (rng() % 10 == 0 ? -sign : sign) * static_cast<T>(std::ldexp(wide(1), a) - std::ldexp(wide(1), low_bit(rng)));
    } else if (rng() % 10 == 0) {
      v[i] = rng() % 2 == 0 ? T(0) : -T(0);
    } else {
      // A random significand at a random exponent between the two ends, at least the smallest.
      v[i] = static_cast<T>(std::ldexp(random_significand(), exponent(rng)));
      if (v[i] < smallest) v[i] = smallest;
      if (rng() % 2 == 0) v[i] = -v[i];
    }
  }
  v[rng() % n] = sign * smallest;
  if (n > 1) v[rng() % n] = sign * largest;
  REQUIRE(std::all_of(v.begin(), v.end(), [&](T x) { return std::fabs(x) <= largest; }));
  return v;
}

template <class T>
void check_spreads(std::size_t n, int top, int first_spread, int last_spread, std::mt19937_64& rng) {
  for (int spread = first_spread > 1 ? first_spread : 1; spread <= last_spread; ++spread) {
    if (top - spread < quantum_exponent_v<T>) break;
    CAPTURE(top);
    CAPTURE(spread);
    for (fill how : {fill::crowded, fill::random, fill::half, fill::runs, fill::bands}) check_block(spread_block<T>(n, top, spread, how, rng));
  }
}

}  // namespace

TEST_CASE_TEMPLATE("exact blocks: every spread of magnitudes, across every level boundary, sums exactly", T, float,
                   double) {
  std::mt19937_64 rng(2024);
  // Spreads 0 to beyond the last extraction level, for full blocks, a block one short, and a short
  // one (a different L).
  const int last = std::is_same_v<T, float> ? 200 : 260;
  for (std::size_t n : {std::size_t{2048}, std::size_t{2041}, std::size_t{17}}) {
    CAPTURE(n);
    check_spreads<T>(n, 0, 0, last, rng);
  }
  // Near the top and the bottom of the exponent range.
  check_spreads<T>(2048, std::numeric_limits<T>::max_exponent, 0, 140, rng);
  check_spreads<T>(2048, std::numeric_limits<T>::max_exponent - 9, 40, 60, rng);
  check_spreads<T>(2048, std::numeric_limits<T>::min_exponent + 60, 0, 200, rng);
  // The smallest element subnormal, at every distance of the largest across level 0's limit.
  for (int top = quantum_exponent_v<T> + 40; top <= quantum_exponent_v<T> + 70; ++top) {
    check_spreads<T>(2048, top, top - quantum_exponent_v<T>, top - quantum_exponent_v<T>, rng);
    check_spreads<T>(8, top, top - quantum_exponent_v<T>, top - quantum_exponent_v<T>, rng);
  }
}

TEST_CASE_TEMPLATE("exact blocks: every size modulo the lanes, at the level boundaries", T, float, double) {
  std::mt19937_64 rng(99);
  std::vector<std::size_t> sizes;
  for (std::size_t n = 1; n <= 40; ++n) sizes.push_back(n);
  for (std::size_t n = 2030; n <= 2048; ++n) sizes.push_back(n);
  for (std::size_t n : sizes) {
    CAPTURE(n);
    // A lane sum needs spread + L bits: level 0 up to 53, then 53 - L more per level, and at
    // most three levels.
    const int l = lane_bits(n);
    for (int level = 0; level <= 4; ++level) {
      const int boundary = 53 + level * (53 - l) - l;
      check_spreads<T>(n, 10, boundary - 1, boundary + 1, rng);
    }
  }
}

TEST_CASE_TEMPLATE("exact blocks: zeros, subnormals, huge values, infinities and NaNs", T, float, double) {
  std::mt19937_64 rng(5);
  const T inf = std::numeric_limits<T>::infinity();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T max = std::numeric_limits<T>::max();
  const T tiny = std::numeric_limits<T>::denorm_min();
  for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{13}, std::size_t{2048}}) {
    CAPTURE(n);
    std::vector<T> zeros(n, T(0));
    for (std::size_t i = 0; i < n; i += 3) zeros[i] = -T(0);
    check_block(zeros);
    std::vector<T> one_subnormal = zeros;
    one_subnormal[n / 2] = tiny;
    check_block(one_subnormal);
    std::vector<T> subnormals(n);
    for (auto& x : subnormals) x = static_cast<T>(rng() % 1000) * tiny * (rng() % 2 == 0 ? T(1) : T(-1));
    check_block(subnormals);
    std::vector<T> subnormal_and_normal = subnormals;
    subnormal_and_normal[0] = std::numeric_limits<T>::min() * T(1.5);
    check_block(subnormal_and_normal);
    check_block(std::vector<T>(n, max));
    check_block(std::vector<T>(n, -max));
    std::vector<T> max_and_tiny(n, max);
    max_and_tiny[n - 1] = tiny;
    check_block(max_and_tiny);
    // Non-finite values in an otherwise fast block, in the vector part and in the tail.
    for (std::size_t at : {std::size_t{0}, n - 1, n / 2}) {
      if (fast_math) break;
      CAPTURE(at);
      for (T special : {inf, -inf, nan}) {
        std::vector<T> v = spread_block<T>(n, 0, 30, fill::random, rng);
        v[at] = special;
        check_block(v);
      }
      std::vector<T> both = spread_block<T>(n, 0, 30, fill::random, rng);
      both[at] = inf;
      both[n - 1 - at] = -inf;
      check_block(both);
    }
  }
  // A block whose every lane sum would overflow as a T but not as a double.
  check_block(std::vector<T>(2048, max / 2));
}

TEST_CASE_TEMPLATE("exact blocks: subnormals stay exact under flush-to-zero and denormals-are-zero", T, float,
                   double) {
  std::mt19937_64 rng(12);
  const T tiny = std::numeric_limits<T>::denorm_min();
  for (std::size_t n : {std::size_t{9}, std::size_t{2048}}) {
    std::vector<T> subnormals(n);
    for (auto& x : subnormals) x = static_cast<T>(rng() % 1000 + 1) * tiny;
    check_block(subnormals, true);
    subnormals[0] = std::numeric_limits<T>::min();
    check_block(subnormals, true);
    for (int top = quantum_exponent_v<T> + 20; top <= quantum_exponent_v<T> + 60; top += 4) {
      check_block(spread_block<T>(n, top, top - quantum_exponent_v<T>, fill::random, rng), true);
    }
  }
}

TEST_CASE_TEMPLATE_DEFINE("exact sums of blocks of every kind are correctly rounded through the public API",
                          ExecutionSpace, blocks_id) {
  std::mt19937_64 rng(31);
  const auto check = [](const auto& values) {
    using T = typename std::decay_t<decltype(values)>::value_type;
    const auto view = to_view<T, ExecutionSpace>(values);
    const auto reference = ordo_test::exact_sum(values);
    CHECK(ordo_test::is_correctly_rounded(ordo::sum(ExecutionSpace(), view), reference));
    CHECK(ordo_test::is_correctly_rounded(ordo::sum<double>(ExecutionSpace(), view), reference));
    CHECK(ordo_test::is_correctly_rounded(ordo::mean(ExecutionSpace(), view), reference, values.size()));
  };
  std::vector<float> f;
  std::vector<double> d;
  for (int spread = 1; spread < 200; spread += 7) {
    for (fill how : {fill::crowded, fill::random}) {
      const auto a = spread_block<float>(2048, 0, spread, how, rng);
      f.insert(f.end(), a.begin(), a.end());
      const auto b = spread_block<double>(2048, 0, spread + 20, how, rng);
      d.insert(d.end(), b.begin(), b.end());
    }
  }
  f.resize(f.size() - 5);
  d.resize(d.size() - 3);
  check(f);
  check(d);
}
ORDO_TEST_ALL_SPACES(blocks_id);

TEST_CASE_TEMPLATE_DEFINE("kahan and neumaier lanes give the same bits vectorized and not" * doctest::skip(fast_math), ExecutionSpace, lanes_id) {
  std::mt19937_64 rng(8);
  std::vector<float> values(100'003);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (auto& x : values) x = d(rng) * std::pow(2.0f, static_cast<float>(rng() % 40) - 20.0f);
  const auto contiguous = to_view<float, ExecutionSpace>(values);
  // The same memory as a LayoutStride View: the portable lane loop.
  const Kokkos::View<float*, Kokkos::LayoutStride, typename ExecutionSpace::memory_space> strided(
      contiguous.data(), Kokkos::LayoutStride(values.size(), 1));
  const auto same = [&](auto policy) {
    CHECK(std::bit_cast<std::uint32_t>(ordo::sum(ExecutionSpace(), contiguous, policy)) ==
          std::bit_cast<std::uint32_t>(ordo::sum(ExecutionSpace(), strided, policy)));
    CHECK(std::bit_cast<std::uint64_t>(ordo::sum<double>(ExecutionSpace(), contiguous, policy)) ==
          std::bit_cast<std::uint64_t>(ordo::sum<double>(ExecutionSpace(), strided, policy)));
  };
  same(ordo::summation::kahan);
  same(ordo::summation::neumaier);
  same(ordo::summation::exact);
  // Double input accumulated in float: the lanes convert four elements per vector.
  std::vector<double> wide(values.begin(), values.end());
  for (std::size_t i = 0; i < wide.size(); ++i) wide[i] *= 1.0 + std::ldexp(static_cast<double>(i % 1000), -40);
  const auto contiguous_double = to_view<double, ExecutionSpace>(wide);
  const Kokkos::View<double*, Kokkos::LayoutStride, typename ExecutionSpace::memory_space> strided_double(
      contiguous_double.data(), Kokkos::LayoutStride(wide.size(), 1));
  for (auto policy : {0, 1}) {
    const auto run = [&](const auto& view) {
      return policy == 0 ? ordo::sum<float>(ExecutionSpace(), view, ordo::summation::kahan)
                         : ordo::sum<float>(ExecutionSpace(), view, ordo::summation::neumaier);
    };
    CHECK(std::bit_cast<std::uint32_t>(run(contiguous_double)) == std::bit_cast<std::uint32_t>(run(strided_double)));
    const long double exact = ordo_test::exact_sum(wide).to_long_double();
    CHECK(std::fabs(static_cast<long double>(run(contiguous_double)) - exact) <=
          4 * std::ldexp(1.0L, -24) * sum_of_magnitudes(wide) + std::ldexp(1.0L, -24) * std::fabs(exact));
  }
}
ORDO_TEST_ALL_SPACES(lanes_id);

// ---- 16-bit storage (ordo::half, ordo::bfloat16): sums accumulate in float or double ----

namespace {

// A 16-bit value as a float, from its bits alone (independent of ordo's conversions).
template <class S>
float float_of_bits(S v) {
  const std::uint32_t b = v.bits();
  if constexpr (std::is_same_v<S, ordo::bfloat16>) {
    return std::bit_cast<float>(b << 16);
  } else {
    const int exponent = static_cast<int>((b >> 10) & 31U);
    const int fraction = static_cast<int>(b & 1023U);
    float magnitude = 0;
    if (exponent == 31) {
      magnitude = fraction == 0 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
    } else if (exponent == 0) {
      magnitude = std::ldexp(static_cast<float>(fraction), -24);
    } else {
      magnitude = std::ldexp(static_cast<float>(1024 + fraction), exponent - 25);
    }
    return (b & 0x8000U) != 0 ? -magnitude : magnitude;
  }
}

template <class S>
struct storage_set {
  std::string name;
  std::vector<S> values;
};

// Random finite bit patterns (bfloat16: exponents within 2^±40, so that no float partial sum
// overflows), all subnormals, cancelling pairs, uniform [0, 1), and many of half's largest value,
// whose sum only float's range holds.
template <class S>
std::vector<storage_set<S>> storage_data_sets() {
  constexpr bool is_half = std::is_same_v<S, ordo::half>;
  std::mt19937_64 rng(2024);
  std::vector<storage_set<S>> sets;
  {
    std::vector<S> v;
    while (v.size() < 100'003) {
      const auto bits = static_cast<std::uint16_t>(rng());
      const unsigned exponent = is_half ? (bits >> 10) & 31U : (bits >> 7) & 255U;
      if (is_half ? exponent == 31 : (exponent != 0 && (exponent < 87 || exponent > 167))) continue;
      v.push_back(S::from_bits(bits));
    }
    sets.push_back({"random finite bit patterns", v});
  }
  {
    std::vector<S> v(5000);
    const unsigned fraction_mask = is_half ? 0x3ffU : 0x7fU;
    for (auto& x : v) x = S::from_bits(static_cast<std::uint16_t>((rng() % fraction_mask + 1) | (rng() % 2 == 0 ? 0x8000U : 0U)));
    sets.push_back({"all subnormal", v});
  }
  {
    std::vector<S> v;
    for (int i = 0; i < 3000; ++i) {
      const auto bits = static_cast<std::uint16_t>(rng() & 0x3fffU);
      v.push_back(S::from_bits(bits));
      v.push_back(S::from_bits(static_cast<std::uint16_t>(bits | 0x8000U)));
    }
    v.push_back(S::from_bits(1));  // the smallest subnormal survives the cancellation
    std::shuffle(v.begin(), v.end(), rng);
    sets.push_back({"cancelling pairs and one subnormal", v});
  }
  {
    std::vector<S> v(1 << 18);
    std::uniform_real_distribution<float> d(0.0f, 1.0f);
    for (auto& x : v) x = S(d(rng));
    sets.push_back({"uniform [0, 1)", v});
  }
  if constexpr (is_half) sets.push_back({"1000 x 65504, half's largest", std::vector<S>(1000, S::from_bits(0x7bffU))});
  return sets;
}

template <class S>
std::vector<float> floats_of(const std::vector<S>& values) {
  std::vector<float> f;
  for (const S v : values) f.push_back(float_of_bits(v));
  return f;
}

// Column 0 of an (n, 2) LayoutRight View: a LayoutStride View with stride 2, read through the View.
template <class S, class Space>
auto strided_view(const std::vector<S>& values) {
  Kokkos::View<S**, Kokkos::LayoutRight, typename Space::memory_space> pairs("pairs", values.size(), 2);
  auto host = Kokkos::create_mirror_view(pairs);
  for (std::size_t i = 0; i < values.size(); ++i) {
    host(i, 0) = values[i];
    host(i, 1) = S(7.0f);
  }
  Kokkos::deep_copy(pairs, host);
  return Kokkos::subview(pairs, Kokkos::ALL, 0);
}

}  // namespace

namespace {

// The exact sum and mean of 16-bit values, default (float) and double results, through the
// public API, the strided read and both launch shapes, against the big-integer oracle of the
// values' floats.
template <class S, class ExecutionSpace>
void check_storage_exact() {
  for (const auto& set : storage_data_sets<S>()) {
    CAPTURE(set.name);
    const std::vector<float> f = floats_of(set.values);
    const auto reference = ordo_test::exact_sum(f);
    const auto view = to_view<S, ExecutionSpace>(set.values);
    static_assert(std::is_same_v<decltype(ordo::sum(view)), float>);
    static_assert(std::is_same_v<decltype(ordo::sum<double>(view)), double>);
    const float s = ordo::sum(ExecutionSpace(), view);
    CHECK(ordo_test::is_correctly_rounded(s, reference));
    CHECK(ordo_test::is_correctly_rounded(ordo::sum<double>(ExecutionSpace(), view), reference));
    CHECK(ordo_test::is_correctly_rounded(ordo::mean<float>(ExecutionSpace(), view, ordo::summation::exact), reference,
                                          f.size()));
    CHECK(ordo_test::is_correctly_rounded(ordo::mean<double>(ExecutionSpace(), view), reference, f.size()));
    const auto strided = strided_view<S, ExecutionSpace>(set.values);
    CHECK(bits_of(ordo::sum(ExecutionSpace(), strided)) == bits_of(s));
    // Both launch shapes hold the same accumulator.
    for (const ordo::detail::launch_shape shape : {ordo::detail::launch_shape::host, ordo::detail::launch_shape::device}) {
      auto acc = ordo::detail::reduce_view<float>(ExecutionSpace(), view, ordo::summation::exact, shape);
      auto expected = ordo::detail::reduce_view<float>(ExecutionSpace(), to_view<float, ExecutionSpace>(f),
                                                        ordo::summation::exact, ordo::detail::launch_shape::host);
      acc.normalize();
      expected.normalize();
      for (int i = 0; i < acc.chunk_count; ++i) CHECK(acc.chunk[i] == expected.chunk[i]);
      CHECK(bits_of(ordo::detail::finish_sum<float, ordo::summation::exact_t>(acc)) == bits_of(s));
    }
  }
}

// The other policies accumulate in float (sum) or double (sum<double>) and keep their documented
// bounds with that type's unit roundoff; both launch shapes run the same blocks.
template <class Policy, class S, class Space>
void check_storage_policy(Policy policy) {
  for (const auto& set : storage_data_sets<S>()) {
    CAPTURE(set.name);
    const std::vector<float> f = floats_of(set.values);
    const auto view = to_view<S, Space>(set.values);
    const long double exact = ordo_test::exact_sum(f).to_long_double();
    const long double magnitude = sum_of_magnitudes(f);
    const long double u_float = std::ldexp(1.0L, -24), u_double = std::ldexp(1.0L, -53);
    const float s = ordo::sum(Space(), view, policy);
    const double d = ordo::sum<double>(Space(), view, policy);
    CHECK(std::fabs(static_cast<long double>(s) - exact) <=
          bound_in_units<Policy>(f.size()) * u_float * magnitude + u_float * std::fabs(exact) + 1e-45L);
    CHECK(std::fabs(static_cast<long double>(d) - exact) <=
          bound_in_units<Policy>(f.size()) * u_double * magnitude + u_double * std::fabs(exact) + 1e-320L);
    CHECK(bits_of(ordo::sum(Space(), strided_view<S, Space>(set.values), policy)) == bits_of(s));
    const auto host = ordo::detail::reduce_view<float>(Space(), view, policy, ordo::detail::launch_shape::host);
    const auto device = ordo::detail::reduce_view<float>(Space(), view, policy, ordo::detail::launch_shape::device);
    CHECK(bits_of(ordo::detail::finish_sum<float, Policy>(host)) == bits_of(ordo::detail::finish_sum<float, Policy>(device)));
  }
}

template <class S, class Space>
void check_storage_ieee() {
  const S inf = std::numeric_limits<S>::infinity(), nan = std::numeric_limits<S>::quiet_NaN(), one(1.0f);
  const auto sum = [](const std::vector<S>& v) { return ordo::sum(Space(), to_view<S, Space>(v)); };
  CHECK(std::isnan(sum({one, nan, one})));
  CHECK(std::isnan(sum({inf, S(-static_cast<float>(inf))})));
  CHECK(sum({inf, one}) == std::numeric_limits<float>::infinity());
  CHECK(std::isnan(ordo::sum(Space(), to_view<S, Space>({one, nan}), ordo::summation::neumaier)));
  const Kokkos::View<S*, typename Space::memory_space> empty("empty", 0);
  CHECK(ordo::sum(Space(), empty) == 0.0f);
  CHECK_THROWS_AS(ordo::mean(Space(), empty), std::domain_error);
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("16-bit storage: exact sums and means are correctly rounded in float and double", ExecutionSpace,
                          storage_exact_id) {
  check_storage_exact<ordo::half, ExecutionSpace>();
  check_storage_exact<ordo::bfloat16, ExecutionSpace>();
  // The example: the mean of bfloat16 values, exact, in float.
  const auto x = to_view<ordo::bfloat16, ExecutionSpace>(std::vector<ordo::bfloat16>(1000, ordo::bfloat16(0.1f)));
  const float m = ordo::mean<float>(x, ordo::summation::exact);
  CHECK(bits_of(m) == bits_of(float_of_bits(ordo::bfloat16(0.1f))));
}
ORDO_TEST_ALL_SPACES(storage_exact_id);

TEST_CASE_TEMPLATE_DEFINE("16-bit storage: every policy accumulates in float or double within its bound" *
                              doctest::skip(fast_math),
                          ExecutionSpace, storage_policies_id) {
  check_storage_policy<ordo::summation::naive_t, ordo::half, ExecutionSpace>(ordo::summation::naive);
  check_storage_policy<ordo::summation::pairwise_t, ordo::half, ExecutionSpace>(ordo::summation::pairwise);
  check_storage_policy<ordo::summation::kahan_t, ordo::half, ExecutionSpace>(ordo::summation::kahan);
  check_storage_policy<ordo::summation::neumaier_t, ordo::half, ExecutionSpace>(ordo::summation::neumaier);
  check_storage_policy<ordo::summation::naive_t, ordo::bfloat16, ExecutionSpace>(ordo::summation::naive);
  check_storage_policy<ordo::summation::pairwise_t, ordo::bfloat16, ExecutionSpace>(ordo::summation::pairwise);
  check_storage_policy<ordo::summation::kahan_t, ordo::bfloat16, ExecutionSpace>(ordo::summation::kahan);
  check_storage_policy<ordo::summation::neumaier_t, ordo::bfloat16, ExecutionSpace>(ordo::summation::neumaier);
  check_storage_ieee<ordo::half, ExecutionSpace>();
  check_storage_ieee<ordo::bfloat16, ExecutionSpace>();
}
ORDO_TEST_ALL_SPACES(storage_policies_id);

TEST_CASE_TEMPLATE_DEFINE("16-bit storage: the reducers accumulate in float" * doctest::skip(fast_math), ExecutionSpace,
                          storage_reducers_id) {
  static_assert(std::is_same_v<ordo::reducers::naive<ordo::bfloat16>::value_type, float>);
  static_assert(std::is_same_v<ordo::reducers::kahan<ordo::half>::value_type, ordo::detail::compensated<float>>);
  static_assert(std::is_same_v<ordo::reducers::pairwise<ordo::half>::value_type, ordo::detail::pairwise_counter<float>>);
  static_assert(std::is_same_v<ordo::reducers::exact<ordo::bfloat16>::value_type, ordo::detail::exact_accumulator<float>>);
  // 1 and 1000 values of 2^-8: a bfloat16 running sum stays at 1 (1 + 2^-8 is a tie that rounds
  // to even), while the reducers' float sums are exact: 1 + 1000 / 256 = 4.90625.
  std::vector<ordo::bfloat16> values(1001, ordo::bfloat16(0.00390625f));
  values[0] = ordo::bfloat16(1.0f);
  ordo::bfloat16 running(0.0f);
  for (const auto v : values) running = ordo::bfloat16(static_cast<float>(running) + static_cast<float>(v));
  CHECK(static_cast<float>(running) == 1.0f);
  const auto view = to_view<ordo::bfloat16, ExecutionSpace>(values);
  float naive = 0;
  Kokkos::parallel_reduce(
      Kokkos::RangePolicy<ExecutionSpace>(ExecutionSpace(), 0, values.size()),
      KOKKOS_LAMBDA(std::size_t i, float& acc) { ordo::reducers::naive<ordo::bfloat16>::add(acc, view(i)); },
      ordo::reducers::naive<ordo::bfloat16>(naive));
  CHECK(naive == 4.90625f);
  ordo::detail::exact_accumulator<float> exact;
  Kokkos::parallel_reduce(
      Kokkos::RangePolicy<ExecutionSpace>(ExecutionSpace(), 0, values.size()),
      KOKKOS_LAMBDA(std::size_t i, ordo::detail::exact_accumulator<float>& acc) {
        ordo::reducers::exact<ordo::bfloat16>::add(acc, view(i));
        acc.normalize();
      },
      ordo::reducers::exact<ordo::bfloat16>(exact));
  CHECK(ordo::reducers::exact<ordo::bfloat16>::result(exact) == 4.90625f);
  CHECK(ordo::reducers::exact<ordo::bfloat16>::result<double>(exact) == 4.90625);
}
ORDO_TEST_ALL_SPACES(storage_reducers_id);

// Floats spread over every exponent (every 997th pattern: NaNs and infinities among them) and at
// half's rounding boundaries: each half's midpoint to its neighbour (ties to even, the subnormal
// midpoints, the overflow threshold 65520), each with its two float neighbours, both signs.
namespace {
std::vector<float> half_rounding_floats() {
  std::vector<float> floats;
  for (std::uint64_t b = 0; b < (std::uint64_t{1} << 32); b += 997) {
    floats.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(b)));
  }
  for (std::uint32_t b = 0; b < 0x7c00; ++b) {
    const float here = static_cast<float>(ordo::half::from_bits(static_cast<std::uint16_t>(b)));
    const float next = static_cast<float>(ordo::half::from_bits(static_cast<std::uint16_t>(b + 1)));
    const float middle = here + (next - here) / 2;  // exact: one more bit than half has
    for (const float f : {std::nextafter(middle, 0.0f), middle, std::nextafter(middle, 1e9f)}) {
      floats.push_back(f);
      floats.push_back(-f);
    }
  }
  return floats;
}
}  // namespace

TEST_CASE("widen and narrow, the kernels' vectorizing conversions, agree with the 16-bit types' own") {
  // Every 16-bit pattern widened (NaN payloads included), bit for bit.
  std::size_t widen_mismatches = 0;
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto h = ordo::half::from_bits(static_cast<std::uint16_t>(b));
    const auto g = ordo::bfloat16::from_bits(static_cast<std::uint16_t>(b));
    const auto bits = [](float f) { return std::bit_cast<std::uint32_t>(f); };
    if (bits(ordo::detail::widen(h)) != bits(static_cast<float>(h))) ++widen_mismatches;
    if (bits(ordo::detail::widen(g)) != bits(static_cast<float>(g))) ++widen_mismatches;
  }
  CHECK(widen_mismatches == 0);
  // narrow<half> against half(float) (all 2^32 floats agreed when the function was written).
  const std::vector<float> floats = half_rounding_floats();
  std::size_t narrow_mismatches = 0;
  for (const float f : floats) {
    if (ordo::detail::narrow<ordo::half>(f).bits() != ordo::half(f).bits()) ++narrow_mismatches;
    if (ordo::detail::narrow<ordo::bfloat16>(f).bits() != ordo::bfloat16(f).bits()) ++narrow_mismatches;
  }
  CHECK(narrow_mismatches == 0);
  static_assert(ordo::detail::narrow<ordo::half>(65520.0f).is_inf());
  static_assert(ordo::detail::widen(ordo::half::from_bits(1)) == 0x1p-24f);
}

#if ORDO_X86_HOST_SIMD
TEST_CASE("widen_half_run, F16C where the AVX2 kernels run, gives every half's float (NaNs as NaNs)") {
  // Every 16-bit pattern, at each odd offset and length around the 8-value vectors, under the
  // baseline and (where the CPU has it) the AVX2 capability, which brings F16C with it.
  std::vector<ordo::half> all(65536 + 9);
  for (std::uint32_t b = 0; b < 65536; ++b) all[b + 3] = ordo::half::from_bits(static_cast<std::uint16_t>(b));
  const auto chosen = ordo::detail::host_capability();
  for (const auto capability : {ordo::detail::cpu_capability::baseline, ordo::detail::cpu_capability::avx2}) {
    const auto granted = ordo::detail::set_host_capability(capability);
    CAPTURE(static_cast<int>(granted));
    if (capability == ordo::detail::cpu_capability::avx2 && granted != capability) {
      MESSAGE("this CPU has no AVX2: the F16C path is not checked");
      continue;
    }
#if defined(ORDO_IMPL_F16C_FUNCTION) && !defined(__AVX2__)
    CHECK(ordo::detail::widen_half_uses_f16c() == (granted >= ordo::detail::cpu_capability::avx2 &&
                                                   ordo::detail::cpu_has_f16c()));
#endif
    for (const std::int64_t length : {std::int64_t{65536}, std::int64_t{7}, std::int64_t{8}, std::int64_t{9},
                                      std::int64_t{2048}}) {
      for (const std::int64_t first : {std::int64_t{3}, std::int64_t{4}, std::int64_t{0x7c00 + 3 - 4}}) {
        // Within the patterns: runs starting near the infinities are shorter.
        const std::int64_t count = std::min<std::int64_t>(length, 65536 + 3 - first);
        std::vector<float> out(static_cast<std::size_t>(count) + 1, -7.0f);
        ordo::detail::widen_half_run(all.data() + first, out.data(), count);
        std::size_t wrong = 0;
        for (std::int64_t i = 0; i < count; ++i) {
          const ordo::half h = all[static_cast<std::size_t>(first + i)];
          const auto want = std::bit_cast<std::uint32_t>(static_cast<float>(h));  // float16.hpp's own conversion
          const auto got = std::bit_cast<std::uint32_t>(out[static_cast<std::size_t>(i)]);
          // A signaling NaN comes out of F16C quieted: NaN either way (by its bits, which fast-math
          // builds do not assume away).
          if (h.is_nan() ? (got & 0x7fff'ffffU) <= 0x7f80'0000U : got != want) ++wrong;
        }
        CAPTURE(count);
        CAPTURE(first);
        CHECK(wrong == 0);
        CHECK(out[static_cast<std::size_t>(count)] == -7.0f);  // nothing written past the run
      }
    }
  }
  ordo::detail::set_host_capability(chosen);
}
#endif

#if defined(ORDO_IMPL_F16C_FUNCTION)
// Floats through F16C's vcvtps2ph, 8 at a time, as batch norm's AVX2 and AVX-512 element passes
// narrow half (nn/detail/batch_norm_kernels.hpp).
ORDO_IMPL_F16C_FUNCTION void narrow_all_f16c(const std::vector<float>& in, std::vector<ordo::half>& out) {
  for (std::size_t i = 0; i + 8 <= in.size(); i += 8) ordo::detail::narrow8_f16c(in.data() + i, out.data() + i);
}

TEST_CASE("narrow8_f16c rounds every class of float to narrow<half>'s bits") {
  if (!ordo::detail::cpu_has_f16c()) {
    MESSAGE("this CPU has no F16C: nothing to compare");
    return;
  }
  std::vector<float> floats = half_rounding_floats();
  while (floats.size() % 8 != 0) floats.push_back(0.0f);
  std::vector<ordo::half> got(floats.size());
  narrow_all_f16c(floats, got);
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < floats.size(); ++i) {
    if (got[i].bits() != ordo::detail::narrow_half_bits(floats[i])) ++mismatches;
  }
  CHECK(mismatches == 0);
  CHECK(floats.size() > 4'000'000);
}
#endif
