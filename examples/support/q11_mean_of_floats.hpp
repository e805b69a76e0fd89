// Question 11: how do you average a million floats with minimal loss of precision?
//
// Add them up sequentially in float and the error grows with n: the running sum's rounding errors
// accumulate (bound (n - 1) u sum|x|, u = 2^-24). Pairwise summation brings it to about log2(n) u,
// Kahan/Neumaier compensation to about 2u, and an exact superaccumulator to nothing at all: the
// correctly rounded mean, with the same bits on any number of threads, any backend, any order.
// This example measures all of them against an oracle that uses no floating point, and on
// readings near 1000 against an exact double sum.
// Used by q11_mean_of_floats.cpp and the tour.
#pragma once

#include "harness.hpp"

#include <ordo/kernels/reduce.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace ordo_examples::q11 {

// unsigned __int128 is a GCC/Clang extension; __extension__ tells -Wpedantic that it is meant.
__extension__ typedef unsigned __int128 uint128;

inline constexpr std::uint64_t n = 1'000'000;  // not a power of two: the mean is not a short binary fraction
inline constexpr int float_bits = 23;          // a float in [1, 2) is K * 2^-23 for an integer K in [2^23, 2^24)

// The oracle. Every value is K_i / 2^23, so the exact mean is S / (n 2^23) with S = sum K_i, an
// integer below 2^44. A result r in [1, 2] is R / 2^23 for an integer R; it is off from the mean by
// |R n - S| / n units of 2^-23 (float's ulp in [1, 2)), relative |R n - S| / S: integers only.
struct oracle {
  std::uint64_t s = 0;

  // round(S / n) to nearest, ties to even: the significand of the correctly rounded float mean.
  std::uint64_t rounded_float_significand() const {
    std::uint64_t q = s / n;
    const std::uint64_t r = s % n;
    if (2 * r > n || (2 * r == n && (q & 1) != 0)) ++q;
    return q;
  }
  float correctly_rounded_mean() const {
    return std::ldexp(static_cast<float>(rounded_float_significand()), -float_bits);  // exact: q <= 2^24
  }
  // The double mean needs 52 fraction bits: round(S 2^29 / n), S 2^29 < 2^73, hence 128-bit integers.
  double correctly_rounded_double_mean() const {
    const uint128 scaled = static_cast<uint128>(s) << 29;
    auto q = static_cast<std::uint64_t>(scaled / n);
    const auto r = static_cast<std::uint64_t>(scaled % n);
    if (2 * r > n || (2 * r == n && (q & 1) != 0)) ++q;
    return std::ldexp(static_cast<double>(q), -52);  // q <= 2^53: exact
  }
  // Error of a float result r in [1, 2], in ulps (2^-23) and relative.
  double ulps(float result) const {
    const auto big_r = static_cast<std::int64_t>(std::ldexp(static_cast<double>(result), float_bits));
    const std::int64_t difference = big_r * static_cast<std::int64_t>(n) - static_cast<std::int64_t>(s);
    return static_cast<double>(difference < 0 ? -difference : difference) / static_cast<double>(n);
  }
  double relative(float result) const {
    return ulps(result) * static_cast<double>(n) / static_cast<double>(s);
  }
};

using host_view = Kokkos::View<float*, Kokkos::HostSpace>;

template <class Space, class Policy>
float mean_on(const host_view& x, Policy policy) {
  return ordo::mean(Space(), x, policy);
}

// Readings near 1000: the mean of 2^20 floats 1000 + U(0, 1) under every summation policy, each
// within its documented error bound of an exact double oracle.
inline void readings_near_1000() {
  const std::size_t count = 1 << 20;
  Kokkos::View<float*> x("x", count);
  auto host_x = Kokkos::create_mirror_view(x);
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  for (std::size_t i = 0; i < count; ++i) host_x(i) = 1000.0f + uniform(rng);  // readings near 1000
  Kokkos::deep_copy(x, host_x);
  const double exact = ordo::mean<double>(x, ordo::summation::exact);  // correctly rounded in double
  const float exact_float = ordo::mean(x, ordo::summation::exact);
  // The oracle: these floats are multiples of 2^-14 below 2^11, so their sum in double (below
  // 2^31, 45 significant bits) is exact in any order, and so is its division by count = 2^20.
  double exact_sum = 0.0;
  for (std::size_t i = 0; i < count; ++i) exact_sum += static_cast<double>(host_x(i));
  const double true_mean = exact_sum / static_cast<double>(count);
  expect(exact == true_mean, "mean<double>(exact) must be the exact mean");
  expect(exact_float == static_cast<float>(true_mean), "mean(exact) must be the exact mean rounded to float");
  const double ulp = static_cast<double>(std::nextafter(exact_float, 2000.0f) - exact_float);
  const auto report = [&](const char* name, float m, double bound_in_ulps) {
    const double error = std::fabs(static_cast<double>(m) - true_mean);
    std::printf("%-9s mean %.9g  error %.3g (%.2f ulp of float)\n", name, static_cast<double>(m), error, error / ulp);
    expect(error <= bound_in_ulps * ulp, std::string(name) + " mean must lie within its documented error bound");
  };
  // Each policy's documented bound on the sum, B u S (docs/reductions.md; u = 2^-24, S = count *
  // mean), plus u |sum| for the sum's rounding to float, divided by count: (B + 1) u mean, and
  // u mean < 2^-14, one float ulp of a mean in [512, 1024). So each mean is within B + 1 ulps.
  const double log2_count = 20;
  float sequential = 0.0f;  // one thread, in order: the textbook failure
  for (std::size_t i = 0; i < count; ++i) sequential += host_x(i);
  report("loop", sequential / static_cast<float>(count), static_cast<double>(count));
  report("naive", ordo::mean(x, ordo::summation::naive), static_cast<double>(count));
  report("pairwise", ordo::mean(x, ordo::summation::pairwise), log2_count + 20 + 1);
  report("kahan", ordo::mean(x, ordo::summation::kahan), 4 + 1);
  report("neumaier", ordo::mean(x, ordo::summation::neumaier), 4 + 1);
  report("exact", exact_float, 0.5);
  std::printf("exact is correctly rounded and bitwise identical for any thread count or order\n");
}

// The whole answer, as q11_mean_of_floats prints it; returns whether every check held.
inline bool demonstrate() {
  const int wrong_before = wrong_results;
  std::printf("Question 11: the mean of %llu floats in [1, 2) under every summation policy\n",
              static_cast<unsigned long long>(n));
  host_view x("x", n);
  oracle exact_mean;
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::uint64_t> fraction(0, (std::uint64_t{1} << float_bits) - 1);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t k = (std::uint64_t{1} << float_bits) + fraction(rng);
    exact_mean.s += k;
    x(i) = std::ldexp(static_cast<float>(k), -float_bits);  // exact: k < 2^24
  }
  const float reference = exact_mean.correctly_rounded_mean();
  std::printf("exact mean S / (n 2^23) = %llu / %llu / 2^23; correctly rounded to float: %.9g (ulp 2^-23 = %.3g)\n",
              static_cast<unsigned long long>(exact_mean.s), static_cast<unsigned long long>(n),
              static_cast<double>(reference), 0x1p-23);

  std::printf("\n== Errors against the integer oracle ==\n");
  const auto report = [&](const char* name, float value, double bound_in_ulps) {
    std::printf("%-32s %.9g  error %8.3f ulp, relative %.3g\n", name, static_cast<double>(value),
                exact_mean.ulps(value), exact_mean.relative(value));
    expect(exact_mean.ulps(value) <= bound_in_ulps, std::string(name) + " must lie within its error bound");
  };
  // Bounds (docs/reductions.md) on the sum are B u sum|x|; with the division's rounding, the mean
  // is within (B + 1) u mean < (B + 1) ulps, since u mean < 2^-23 for a mean below 2.
  float loop = 0.0f;
  for (std::uint64_t i = 0; i < n; ++i) loop += x(i);
  long double long_loop = 0;
  for (std::uint64_t i = 0; i < n; ++i) long_loop += x(i);
  report("float loop, left to right", loop / static_cast<float>(n), static_cast<double>(n));
  report("long double loop, then float", static_cast<float>(long_loop / n), 1);
  report("ordo::mean, naive", ordo::mean(x, ordo::summation::naive), static_cast<double>(n));
  report("ordo::mean, pairwise", ordo::mean(x, ordo::summation::pairwise), 20 + 20 + 1);
  report("ordo::mean, kahan", ordo::mean(x, ordo::summation::kahan), 4 + 1);
  report("ordo::mean, neumaier", ordo::mean(x, ordo::summation::neumaier), 4 + 1);
  const float exact = ordo::mean(x, ordo::summation::exact);
  report("ordo::mean, exact", exact, 0.5);
  expect(exact == reference, "the exact mean must be the correctly rounded mean");
  const double exact_double = ordo::mean<double>(x, ordo::summation::exact);
  std::printf("ordo::mean<double>, exact: %.17g, the oracle's correctly rounded double %.17g: %s\n", exact_double,
              exact_mean.correctly_rounded_double_mean(),
              exact_double == exact_mean.correctly_rounded_double_mean() ? "equal" : "DIFFERENT");
  expect(exact_double == exact_mean.correctly_rounded_double_mean(),
         "mean<double>(exact) must be the correctly rounded double mean");
  std::printf("(long double's 64 bits hold this sum exactly, since every value is a multiple of 2^-23 and the sum is\n"
              " below 2^21; spread values over many binades and it rounds too: only an exact method is exact)\n");

  std::printf("\n== Bitwise reproducibility ==\n");
  const auto bits = [](float v) { return std::bit_cast<std::uint32_t>(v); };
  std::printf("exact mean bits 0x%08x on %s (%d threads)\n", bits(exact), Kokkos::DefaultHostExecutionSpace::name(),
              Kokkos::DefaultHostExecutionSpace().concurrency());
#if defined(KOKKOS_ENABLE_SERIAL)
  const float serial_exact = mean_on<Kokkos::Serial>(x, ordo::summation::exact);
  const float serial_naive = mean_on<Kokkos::Serial>(x, ordo::summation::naive);
  std::printf("exact mean bits 0x%08x on Serial (1 thread): %s\n", bits(serial_exact),
              bits(serial_exact) == bits(exact) ? "identical" : "DIFFERENT");
  expect(bits(serial_exact) == bits(exact), "the exact mean must not depend on the backend or the thread count");
#if defined(KOKKOS_ENABLE_OPENMP)
  const float openmp_naive = mean_on<Kokkos::OpenMP>(x, ordo::summation::naive);
  std::printf("naive mean bits 0x%08x on Serial, 0x%08x on OpenMP (%d threads): %s\n", bits(serial_naive),
              bits(openmp_naive), Kokkos::OpenMP().concurrency(),
              bits(serial_naive) == bits(openmp_naive) ? "identical" : "different (the partial sums join differently)");
#else
  std::printf("naive mean bits 0x%08x on Serial (OpenMP is not enabled in this Kokkos)\n", bits(serial_naive));
#endif
#endif
  // Another order of the same values: a shuffled copy.
  host_view shuffled("shuffled", n);
  Kokkos::deep_copy(shuffled, x);
  std::shuffle(shuffled.data(), shuffled.data() + n, rng);
  const float shuffled_exact = ordo::mean(shuffled, ordo::summation::exact);
  const float shuffled_naive = ordo::mean(shuffled, ordo::summation::naive);
  std::printf("shuffled input: exact 0x%08x (%s), naive 0x%08x (%s)\n", bits(shuffled_exact),
              bits(shuffled_exact) == bits(exact) ? "identical" : "DIFFERENT", bits(shuffled_naive),
              bits(shuffled_naive) == bits(ordo::mean(x, ordo::summation::naive)) ? "identical" : "different");
  expect(bits(shuffled_exact) == bits(exact), "the exact mean must not depend on the order of the input");

  // Ranks or devices each reduce a part and merge: superaccumulators merge exactly, in any order.
  using exact_reducer = ordo::reducers::exact<float, Kokkos::HostSpace>;
  std::vector<exact_reducer::value_type> parts(7);
  std::vector<std::uint64_t> cuts = {0, n};
  for (int c = 0; c < 6; ++c) cuts.push_back(std::uniform_int_distribution<std::uint64_t>(0, n)(rng));
  std::sort(cuts.begin(), cuts.end());
  for (std::size_t p = 0; p < parts.size(); ++p) {
    parts[p] = exact_reducer::value_type{};
    for (std::uint64_t i = cuts[p]; i < cuts[p + 1]; ++i) exact_reducer::add(parts[p], shuffled(i));
    parts[p].normalize();
  }
  std::shuffle(parts.begin(), parts.end(), rng);
  exact_reducer::value_type total{};
  for (const auto& part : parts) total.merge(part);
  const float merged_sum = exact_reducer::result<float>(total);
  const float whole_sum = ordo::sum(x, ordo::summation::exact);
  std::printf("7 random chunks of the shuffled input, merged in a random order: sum 0x%08x, whole sum 0x%08x (%s)\n",
              bits(merged_sum), bits(whole_sum), bits(merged_sum) == bits(whole_sum) ? "identical" : "DIFFERENT");
  expect(bits(merged_sum) == bits(whole_sum), "merged superaccumulators must give the same bits");
  expect(whole_sum == static_cast<float>(std::ldexp(static_cast<double>(exact_mean.s), -float_bits)),
         "the exact sum must be the correctly rounded sum");

  std::printf("\n== Readings near 1000: 2^20 floats against an exact double sum ==\n");
  readings_near_1000();
  return wrong_results == wrong_before;
}

}  // namespace ordo_examples::q11
