// Question 4: why the small epsilon in batch norm?
//
// Batch norm computes y = (x - mean) / sqrt(var + eps) * gamma + beta per channel. A channel whose
// values are all equal has var = 0 and x - mean = 0, so without eps every y is 0 / 0 = NaN, and
// the NaN spreads through the next layers and the gradients. With eps = 1e-5 the division is
// finite and y = beta exactly.
//
// What eps is not: a regularizer, or noise. It is a fixed number in a deterministic formula. For
// a channel with variance var it scales every normalized value by the same factor
// sqrt(var / (var + eps)) = 1 - eps / (2 var) + O(eps^2): a tiny, uniform, repeatable shrink.
// Used by q04_batch_norm_eps.cpp and the tour.
#pragma once

#include "harness.hpp"

#include <ordo/nn/batch_norm.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>

namespace ordo_examples::q04 {

using host_matrix = Kokkos::View<double**, Kokkos::HostSpace>;
using host_vector = Kokkos::View<double*, Kokkos::HostSpace>;

constexpr std::size_t batch = 4096;
constexpr double constant_value = 3.25;
constexpr double beta_value = 0.5;

// One training-mode forward pass of a fresh layer (gamma 1, beta 0.5, PyTorch's defaults
// otherwise): the output and the per-channel statistics saved for the backward pass.
struct forward_pass {
  host_matrix y;
  host_vector mean, invstd;
};

inline forward_pass forward(const host_matrix& x, double eps) {
  const std::size_t channels = x.extent(1);
  host_matrix y("y", x.extent(0), channels);
  host_vector gamma("gamma", channels), beta("beta", channels), running_mean("running_mean", channels),
      running_var("running_var", channels);
  Kokkos::deep_copy(gamma, 1.0);
  Kokkos::deep_copy(beta, beta_value);
  Kokkos::deep_copy(running_var, 1.0);
  ordo::nn::batch_norm_options options;
  options.eps = eps;
  const auto saved = ordo::nn::batch_norm_forward_training(x, gamma, beta, running_mean, running_var, y, options);
  return {y, saved.mean, saved.invstd};
}

// Four samples small enough to check by hand: channel 0 varies (1 2 3 6), channel 1 is constant
// (5 5 5 5); once with eps = 1e-5, once with eps = 0.
inline void four_samples() {
  host_matrix x("x", 4, 2);
  const double samples[4] = {1.0, 2.0, 3.0, 6.0};
  for (int i = 0; i < 4; ++i) {
    x(i, 0) = samples[i];
    x(i, 1) = 5.0;
  }
  const forward_pass with_eps = forward(x, 1e-5);
  const forward_pass without_eps = forward(x, 0.0);
  const host_vector& mean = with_eps.mean;
  const host_vector& invstd = with_eps.invstd;
  const host_matrix& y = with_eps.y;
  std::printf("batch norm, x = 1 2 3 6: mean %.3f, var %.3f, y = %.4f %.4f %.4f %.4f\n", mean(0),
              1.0 / (invstd(0) * invstd(0)) - 1e-5, y(0, 0), y(1, 0), y(2, 0), y(3, 0));
  std::printf("constant channel, x = 5 5 5 5: var 0, invstd = 1/sqrt(0 + 1e-5) = %.1f, "
              "y = beta = %.1f %.1f %.1f %.1f;\n"
              "  with eps = 0, invstd = %g and y = 0 * inf = %g: eps keeps it finite (no noise, no regularizer)\n",
              invstd(1), y(0, 1), y(1, 1), y(2, 1), y(3, 1), without_eps.invstd(1), without_eps.y(0, 1));
  // By hand: channel 0 has mean 3, squared deviations 4 + 1 + 0 + 9 = 14, biased variance 14 / 4.
  const auto near = [](double got, double want) {
    return std::fabs(got - want) <= 1e-12 * std::max(1.0, std::fabs(want));
  };
  bool correct = near(mean(0), 3.0) && near(mean(1), 5.0) && near(invstd(0), 1.0 / std::sqrt(3.5 + 1e-5)) &&
                 near(invstd(1), 1.0 / std::sqrt(1e-5)) && std::isinf(without_eps.invstd(1));
  for (int i = 0; i < 4; ++i) {
    correct = correct && near(y(i, 0), (samples[i] - 3.0) / std::sqrt(3.5 + 1e-5) + beta_value) &&
              y(i, 1) == beta_value && std::isnan(without_eps.y(i, 1));
  }
  expect(correct, "batch norm must give the statistics and outputs computed by hand");
}

// The whole answer, as q04_batch_norm_eps prints it; returns whether every check held.
inline bool demonstrate() {
  const int wrong_before = wrong_results;
  std::printf("Question 4: the epsilon in y = (x - mean) / sqrt(var + eps) * gamma + beta\n");

  std::printf("\n== Four samples, checked by hand (gamma 1, beta %g) ==\n", beta_value);
  four_samples();

  // Channel 0 is constant (a dead ReLU, a padded border, a saturated feature); channel 1 is
  // N(0, 0.1^2): a healthy variance of about 0.01, small enough that eps's effect shows in print.
  host_matrix x("x", batch, 2);
  std::mt19937_64 rng(4);
  std::normal_distribution<double> normal(0.0, 0.1);
  for (std::size_t i = 0; i < batch; ++i) {
    x(i, 0) = constant_value;
    x(i, 1) = normal(rng);
  }

  std::printf("\n== A constant channel (all values %g, variance 0), gamma 1, beta %g ==\n", constant_value, beta_value);
  const forward_pass with_eps = forward(x, 1e-5);
  const host_matrix& y_eps = with_eps.y;
  bool all_beta = true;
  for (std::size_t i = 0; i < batch; ++i) all_beta = all_beta && y_eps(i, 0) == beta_value;
  std::printf("eps = 1e-5: invstd = 1/sqrt(0 + 1e-5) = %.6g, y = (x - mean) * invstd + beta = %g for all %zu values\n",
              with_eps.invstd(0), y_eps(0, 0), batch);
  expect(all_beta, "with eps, a constant channel must give y = beta exactly");

  host_matrix y_zero;
  bool zero_rejected = false;
  try {
    const forward_pass without_eps = forward(x, 0.0);
    y_zero = without_eps.y;
    std::size_t nan_count = 0;
    for (std::size_t i = 0; i < batch; ++i) nan_count += std::isnan(y_zero(i, 0)) ? 1 : 0;
    std::printf("eps = 0:    invstd = 1/sqrt(0) = %g, y = 0 * inf + beta = %g: %zu of %zu values are NaN\n",
                without_eps.invstd(0), y_zero(0, 0), nan_count, batch);
    std::printf("            (ordo accepts eps = 0 and does not check for it: the NaN is the arithmetic's answer)\n");
    expect(std::isinf(without_eps.invstd(0)) && nan_count == batch,
           "with eps = 0 a constant channel must give inf and NaN");
  } catch (const std::invalid_argument& error) {
    zero_rejected = true;
    std::printf("eps = 0: ordo rejects it: %s\n", error.what());
  }
  // The arithmetic itself, independent of ordo: 0 / sqrt(0) is 0 / 0.
  volatile double zero = 0.0;
  const double by_hand = zero / std::sqrt(zero) + beta_value;
  std::printf("by hand:    (x - mean) / sqrt(var) + beta = 0 / 0 + %g = %g\n", beta_value, by_hand);
  expect(std::isnan(by_hand), "0 / sqrt(0) must be NaN");

  std::printf("\n== eps is not a regularizer and adds no noise: a normal channel ==\n");
  // Independent reference statistics of channel 1: two passes in long double.
  long double sum = 0;
  for (std::size_t i = 0; i < batch; ++i) sum += x(i, 1);
  const long double mean = sum / batch;
  long double m2 = 0;
  for (std::size_t i = 0; i < batch; ++i) m2 += (x(i, 1) - mean) * (x(i, 1) - mean);
  const long double var = m2 / batch;
  const long double eps = 1e-5L;
  // y - beta scales with 1/sqrt(var + eps): eps shrinks every value by this same factor.
  const double predicted = static_cast<double>(1 - std::sqrt(var / (var + eps)));
  const double first_order = static_cast<double>(eps / (2 * var));
  double smallest = 1, largest = 0;
  for (std::size_t i = 0; i < batch; ++i) {
    const double without = y_zero.extent(0) ? y_zero(i, 1) - beta_value : 0.0;
    if (std::fabs(without) < 1e-3) continue;  // the ratio of two tiny numbers says little
    const double change = 1 - (y_eps(i, 1) - beta_value) / without;
    smallest = std::min(smallest, change);
    largest = std::max(largest, change);
  }
  std::printf("variance %.6g (long double reference); eps / (2 var) = %.6g, 1 - sqrt(var / (var + eps)) = %.6g\n",
              static_cast<double>(var), first_order, predicted);
  if (!zero_rejected) {
    std::printf("measured relative change of y - beta, eps = 1e-5 against eps = 0: from %.6g to %.6g over %zu values\n",
                smallest, largest, batch);
    std::printf("every value shrinks by the same factor (spread %.2g): a deterministic rescale, not noise\n",
                largest - smallest);
    expect(std::fabs(smallest - predicted) < 1e-9 && std::fabs(largest - predicted) < 1e-9,
           "eps must change every normalized value by the relative amount 1 - sqrt(var / (var + eps))");
  }
  // Deterministic: the same batch gives the same bits.
  const host_matrix again = forward(x, 1e-5).y;
  const bool same_bits = std::memcmp(again.data(), y_eps.data(), batch * 2 * sizeof(double)) == 0;
  std::printf("a second forward pass of the same batch gives %s bits\n", same_bits ? "the same" : "DIFFERENT");
  expect(same_bits, "batch norm with eps must be deterministic");
  std::printf("a channel with variance 1 would change by only eps / 2 = 5e-6; eps matters only near var = 0\n");
  return wrong_results == wrong_before;
}

}  // namespace ordo_examples::q04
