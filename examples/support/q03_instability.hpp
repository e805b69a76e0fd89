// Question 3: what causes numerical instability in deep learning?
//
// A gallery of three failures, each shown computed the textbook way and then by an ordo kernel,
// with the error measured against a reference that does not use the code under test:
//   1. overflow and underflow: softmax as exp(x) / sum(exp(x)) on large or very negative logits;
//   2. catastrophic cancellation: the variance as E[x^2] - E[x]^2 on data with a large mean;
//   3. accumulation error: a long float sum, added left to right.
// (Ill-conditioning, the fourth cause, is a property of the problem rather than of the
// arithmetic, and no kernel can remove it; it is not shown here.)
// Used by q03_instability.cpp and the tour.
#pragma once

#include "harness.hpp"

#include <ordo/kernels/reduce.hpp>
#include <ordo/nn/batch_norm.hpp>
#include <ordo/nn/softmax.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <utility>

namespace ordo_examples::q03 {

// 1. Overflow: two rows of logits whose exp overflows (exp(1000) = inf) or underflows
//    (exp(-1000) = 0) in float.
inline constexpr float logit_rows[2][3] = {{1000.0f, 999.0f, 998.0f}, {-1000.0f, -1000.0f, -1000.0f}};

struct softmax_row {
  float naive[3];  // exp(x) / sum exp(x) in float
  float ordo[3];   // ordo::nn::softmax
  double worst;    // largest relative error of ordo's against the closed form
};

// Both rows, the textbook way and by ordo::nn::softmax, each checked: the naive one must give
// NaN, ordo's the closed form to within a few float roundoffs.
inline std::array<softmax_row, 2> softmax_overflow() {
  Kokkos::View<float**, Kokkos::HostSpace> x("x", 2, 3), y("y", 2, 3);
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 3; ++c) x(r, c) = logit_rows[r][c];
  }
  ordo::nn::softmax(x, y);
  // The oracle is a closed form: softmax is unchanged by adding a constant to every logit, so
  // softmax(1000, 999, 998) = softmax(2, 1, 0) = (e^2, e, 1) / (e^2 + e + 1), and a row of equal
  // logits gives 1/3 each. Both are evaluated in long double.
  const long double e = std::exp(1.0L);
  const long double expected[2][3] = {{e * e / (e * e + e + 1), e / (e * e + e + 1), 1 / (e * e + e + 1)},
                                      {1.0L / 3, 1.0L / 3, 1.0L / 3}};
  std::array<softmax_row, 2> rows{};
  for (int r = 0; r < 2; ++r) {
    softmax_row& row = rows[static_cast<std::size_t>(r)];
    float denominator = 0.0f;
    for (int c = 0; c < 3; ++c) denominator += std::exp(logit_rows[r][c]);
    for (int c = 0; c < 3; ++c) row.naive[c] = std::exp(logit_rows[r][c]) / denominator;
    row.worst = 0.0;
    for (int c = 0; c < 3; ++c) {
      row.ordo[c] = y(r, c);
      const long double relative = std::fabs((static_cast<long double>(y(r, c)) - expected[r][c]) / expected[r][c]);
      row.worst = std::max(row.worst, static_cast<double>(relative));
    }
    expect(std::isnan(row.naive[0]) && std::isnan(row.naive[1]) && std::isnan(row.naive[2]),
           "the naive softmax must give NaN (inf/inf or 0/0)");
    // exp, the sum and the division each round once in float: a few units of roundoff.
    expect(row.worst < 8 * 0x1p-24, "ordo's softmax must be within a few float roundoffs of the closed form");
  }
  return rows;
}

inline void print_softmax_overflow() {
  std::printf("\n== 1. Overflow: softmax of large logits ==\n");
  const std::array<softmax_row, 2> rows = softmax_overflow();
  for (int r = 0; r < 2; ++r) {
    const float* logits = logit_rows[r];
    const softmax_row& row = rows[static_cast<std::size_t>(r)];
    std::printf("logits (%g, %g, %g): exp(%g) = %g in float\n", static_cast<double>(logits[0]),
                static_cast<double>(logits[1]), static_cast<double>(logits[2]), static_cast<double>(logits[0]),
                static_cast<double>(std::exp(logits[0])));
    std::printf("  naive exp(x)/sum exp(x): %g %g %g\n", static_cast<double>(row.naive[0]),
                static_cast<double>(row.naive[1]), static_cast<double>(row.naive[2]));
    std::printf("  ordo::nn::softmax:       %.7g %.7g %.7g  (largest relative error %.2g; float's u = %.2g)\n",
                static_cast<double>(row.ordo[0]), static_cast<double>(row.ordo[1]), static_cast<double>(row.ordo[2]),
                row.worst, 0x1p-24);
  }
  std::printf("  why: ordo subtracts the row's maximum before exp (exp(0) = 1 is the largest term) and sums in double\n");
}

// 2. Catastrophic cancellation: the variance of 2^20 floats 1e4 + N(0, 1), one channel.
struct variance_result {
  double reference_mean, reference;  // two passes in long double
  float naive;                       // E[x^2] - E[x]^2 with float sums
  float rounded_once;                // the same formula with exact sums rounded once to float
  double ordo, ordo_mean;            // ordo::nn::batch_norm_local_statistics
  double merged;                     // two halves' statistics merged (Chan et al.)
  double relative(double variance) const { return std::fabs(variance - reference) / reference; }
};

// Every variance above, checked: the textbook one must be badly wrong, ordo's must match the
// reference.
inline variance_result variance_cancellation() {
  const std::size_t n = 1 << 20;
  Kokkos::View<float**, Kokkos::HostSpace> x("x", n, 1);  // a batch of n values of one channel
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (std::size_t i = 0; i < n; ++i) x(i, 0) = static_cast<float>(1e4 + normal(rng));
  variance_result v{};

  // Reference: two passes in long double (64-bit significand). Every float converts exactly; the
  // mean is off by far less than 1e-15 relative, and the squared deviations are then small numbers
  // added without cancellation.
  long double sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += x(i, 0);
  const long double mean_ref = sum / static_cast<long double>(n);
  long double m2 = 0;
  for (std::size_t i = 0; i < n; ++i) m2 += (x(i, 0) - mean_ref) * (x(i, 0) - mean_ref);
  v.reference_mean = static_cast<double>(mean_ref);
  v.reference = static_cast<double>(m2 / static_cast<long double>(n));

  // Textbook one pass in float: E[x^2] is about 1e8, where float's spacing is 8, so the difference
  // of two numbers near 1e8 cannot resolve a variance of 1.
  float s = 0.0f, s2 = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    s += x(i, 0);
    s2 += x(i, 0) * x(i, 0);
  }
  const float mean_f = s / static_cast<float>(n);
  v.naive = s2 / static_cast<float>(n) - mean_f * mean_f;
  // The same formula even with exactly known sums rounded once to float: cancellation alone.
  long double exact_s2 = 0;
  for (std::size_t i = 0; i < n; ++i) exact_s2 += static_cast<long double>(x(i, 0)) * x(i, 0);
  const float e_x2 = static_cast<float>(exact_s2 / static_cast<long double>(n));
  const float e_x = static_cast<float>(mean_ref);
  v.rounded_once = e_x2 - e_x * e_x;

  // ordo: batch norm's statistics, (count, mean, M2) per channel by two passes in double.
  const auto statistics = ordo::nn::batch_norm_local_statistics(x);
  auto mean_ordo = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), statistics.mean);
  auto m2_ordo = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), statistics.m2);
  v.ordo = m2_ordo(0) / statistics.count;
  v.ordo_mean = mean_ordo(0);
  // Two halves merged with Chan et al.'s formula, as two devices or ranks would: still accurate.
  const auto first = Kokkos::subview(x, std::make_pair(std::size_t{0}, n / 2), Kokkos::ALL);
  const auto second = Kokkos::subview(x, std::make_pair(n / 2, n), Kokkos::ALL);
  const auto merged = ordo::nn::merge(ordo::nn::batch_norm_local_statistics(first),
                                      ordo::nn::batch_norm_local_statistics(second));
  auto m2_merged = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), merged.m2);
  v.merged = m2_merged(0) / merged.count;

  const double naive = static_cast<double>(v.naive);
  expect(v.relative(naive) > 0.5 && std::fabs(naive - v.reference) > 1.0,
         "the one-pass float variance must be badly wrong");
  expect(v.relative(v.ordo) < 1e-12 && v.relative(v.merged) < 1e-9,
         "ordo's two-pass statistics must match the long double reference");
  return v;
}

inline void print_variance_cancellation() {
  std::printf("\n== 2. Catastrophic cancellation: variance of 1e4 + N(0, 1) in float ==\n");
  const variance_result v = variance_cancellation();
  std::printf("reference (two passes, long double): mean %.6f, variance %.9f\n", v.reference_mean, v.reference);
  std::printf("E[x^2] - E[x]^2, float sums:          variance %-14.6g relative error %.3g\n",
              static_cast<double>(v.naive), v.relative(static_cast<double>(v.naive)));
  std::printf("E[x^2] - E[x]^2, exact sums -> float:  variance %-14.6g relative error %.3g\n",
              static_cast<double>(v.rounded_once), v.relative(static_cast<double>(v.rounded_once)));
  std::printf("ordo batch_norm_local_statistics:     variance %-14.9f relative error %.3g (mean %.6f)\n", v.ordo,
              v.relative(v.ordo), v.ordo_mean);
  std::printf("ordo, two halves merged (Chan et al.): variance %-14.9f relative error %.3g\n", v.merged,
              v.relative(v.merged));
}

// 3. Accumulation error: the sum of 2^20 floats in [0, 1), left to right in float and exact.
inline void long_sum() {
  std::printf("\n== 3. Accumulation error: the sum of 2^20 floats in [0, 1) ==\n");
  const std::size_t n = 1 << 20;
  Kokkos::View<float*, Kokkos::HostSpace> x("x", n);
  // Each value is k / 2^24 with an integer k < 2^24, so the exact sum is (sum of the k) / 2^24,
  // an integer computation that needs no floating point at all.
  std::mt19937 rng(11);
  std::uniform_int_distribution<std::uint32_t> digits(0, (1u << 24) - 1);
  std::uint64_t k_sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t k = digits(rng);
    k_sum += k;
    x(i) = std::ldexp(static_cast<float>(k), -24);
  }
  const double exact = std::ldexp(static_cast<double>(k_sum), -24);  // k_sum < 2^44: exact in double
  const float exact_float = std::ldexp(static_cast<float>(k_sum), -24);  // one correct rounding

  float loop = 0.0f;
  for (std::size_t i = 0; i < n; ++i) loop += x(i);
  const float ordo_exact = ordo::sum(x, ordo::summation::exact);
  const float ulp = std::nextafter(exact_float, 2 * exact_float) - exact_float;
  const auto report = [&](const char* name, float value) {
    const double error = std::fabs(static_cast<double>(value) - exact);
    std::printf("%-22s %.9g  error %-10.4g = %8.2f ulp, relative %.2g\n", name, static_cast<double>(value), error,
                error / static_cast<double>(ulp), error / exact);
  };
  std::printf("exact (integer oracle)  %.9g\n", exact);
  report("float loop, in order", loop);
  report("ordo::sum (exact)", ordo_exact);
  std::printf("  why: once the running sum passes 2^18 its spacing is 2^-5, and each addend loses up to\n"
              "  half of that; ordo's exact policy keeps every bit in a superaccumulator and rounds once\n");
  expect(ordo_exact == exact_float, "ordo's exact sum must be the correctly rounded sum");
  expect(std::fabs(static_cast<double>(loop) - exact) > 16 * static_cast<double>(ulp),
         "the sequential float loop must be visibly off");
}

// The whole answer, as q03_instability prints it; returns whether every check held.
inline bool demonstrate() {
  const int wrong_before = wrong_results;
  std::printf("Question 3: causes of numerical instability, each failing naively and fixed by ordo\n");
  print_softmax_overflow();
  print_variance_cancellation();
  long_sum();
  return wrong_results == wrong_before;
}

}  // namespace ordo_examples::q03
