// Question 10: benefits and problems of reduced precision (half and bfloat16 storage).
//
// Benefit: half the bytes per value, so half the memory and half the traffic (and, on GPUs with
// tensor cores, faster arithmetic). Problems: range (half overflows above 65504), precision
// (bfloat16 keeps 8 significant bits, so 256 + 1 == 256), sums that stall when accumulated in 16
// bits, and small gradients that flush to zero. Remedies shown: float accumulation and loss
// scaling (ordo::nn::loss_scaler); master weights are in docs/precision.md.
// Used by q10_reduced_precision.cpp and the tour.
#pragma once

#include "harness.hpp"

#include <ordo/core/float16.hpp>
#include <ordo/kernels/reduce.hpp>
#include <ordo/nn/loss_scaler.hpp>
#include <ordo/nn/softmax.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

namespace ordo_examples::q10 {

using ordo::bfloat16;
using ordo::half;
inline constexpr float infinity = std::numeric_limits<float>::infinity();

// Bytes: every claim here is checked by the compiler.
static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2 && sizeof(float) == 4);
inline constexpr std::size_t elements = std::size_t{1} << 22;
static_assert(elements * sizeof(float) == 16 * 1024 * 1024 && elements * sizeof(bfloat16) == 8 * 1024 * 1024);
// Range: half's largest value is 65504; from 65520 (half an ulp above it) a value rounds to infinity.
static_assert(std::numeric_limits<half>::max() == 65504.0f);
static_assert(half(65519.0f) == 65504.0f && half(65520.0f) == infinity);
static_assert(bfloat16(65520.0f) == 65536.0f && std::numeric_limits<bfloat16>::max() > 3e38f);
// Precision: 11 and 8 significant bits. The first integer each cannot hold: 2049 and 257.
static_assert(std::numeric_limits<half>::digits == 11 && std::numeric_limits<bfloat16>::digits == 8);
static_assert(bfloat16(256.0f + 1.0f) == 256.0f && bfloat16(256.0f + 2.0f) == 258.0f);
static_assert(half(2048.0f + 1.0f) == 2048.0f);
// Underflow: half's smallest subnormal is 2^-24; below half of it a value becomes 0.
static_assert(half(0x1p-24f) == 0x1p-24f && half(0x1p-26f) == 0.0f);

inline void range_and_precision() {
  std::printf("\n== Range and precision (static_asserts, printed) ==\n");
  std::printf("half(65504) = %g, half(65520) = %g, bfloat16(65520) = %g\n", static_cast<double>(half(65504.0f)),
              static_cast<double>(half(65520.0f)), static_cast<double>(bfloat16(65520.0f)));
  std::printf("bfloat16(256 + 1) = %g, half(2048 + 1) = %g, half(2^-26) = %g\n", static_cast<double>(bfloat16(257.0f)),
              static_cast<double>(half(2049.0f)), static_cast<double>(half(0x1p-26f)));
  const float logit = 12.0f;
  std::printf("exp(%g) = %g overflows half: %g (a naive softmax in half fails from logits of 11.1)\n",
              static_cast<double>(logit), static_cast<double>(std::exp(logit)), static_cast<double>(half(std::exp(logit))));
  expect(half(std::exp(logit)).is_inf(), "exp(12) must overflow half");

  // Rounding error of storing values: 2^20 log-uniform values in [1e-3, 1e3), well inside half's
  // normal range, compared in double with the unit roundoffs 2^-11 (half) and 2^-8 (bfloat16).
  std::mt19937 rng(10);
  std::uniform_real_distribution<double> exponent(-3.0, 3.0);
  double worst_half = 0, worst_bf16 = 0, total_half = 0, total_bf16 = 0;
  const int count = 1 << 20;
  for (int i = 0; i < count; ++i) {
    const float value = static_cast<float>(std::pow(10.0, exponent(rng)));
    const double exact = value;
    const double e_half = std::fabs(static_cast<double>(half(value)) - exact) / exact;
    const double e_bf16 = std::fabs(static_cast<double>(bfloat16(value)) - exact) / exact;
    worst_half = std::max(worst_half, e_half);
    worst_bf16 = std::max(worst_bf16, e_bf16);
    total_half += e_half;
    total_bf16 += e_bf16;
  }
  std::printf("storing 2^20 floats from [1e-3, 1e3): relative error mean %.3g, max %.3g in half (u = 2^-11 = %.3g);\n"
              "                                      mean %.3g, max %.3g in bfloat16 (u = 2^-8 = %.3g)\n",
              total_half / count, worst_half, 0x1p-11, total_bf16 / count, worst_bf16, 0x1p-8);
  expect(worst_half <= 0x1p-11 && worst_bf16 <= 0x1p-8, "storing must round to nearest: error at most u");
}

inline void bytes_and_speed() {
  std::printf("\n== Bytes and speed: %zu values (float against bfloat16 storage) ==\n", elements);
  Kokkos::View<float*, Kokkos::HostSpace> x32("x32", elements);
  Kokkos::View<bfloat16*, Kokkos::HostSpace> x16("x16", elements);
  std::mt19937 rng(100);
  std::uniform_real_distribution<float> logits(-4.0f, 4.0f);  // cheap to draw: the values do not matter for speed
  for (std::size_t i = 0; i < elements; ++i) {
    x16(i) = bfloat16(logits(rng));
    x32(i) = x16(i);  // the same values, so the sums agree exactly
  }
  std::printf("View bytes: float %zu, bfloat16 %zu\n", x32.span() * sizeof(float), x16.span() * sizeof(bfloat16));
  float s32 = 0, s16 = 0;
  const double t32 = median_time<std::milli>([&] { s32 = ordo::sum(x32, ordo::summation::pairwise); }, 5);
  const double t16 = median_time<std::milli>([&] { s16 = ordo::sum(x16, ordo::summation::pairwise); }, 5);
  const double e32 = median_time<std::milli>([&] { s32 = ordo::sum(x32, ordo::summation::exact); }, 5);
  const double e16 = median_time<std::milli>([&] { s16 = ordo::sum(x16, ordo::summation::exact); }, 5);
  std::printf("ordo::sum, pairwise: float %.3f ms, bfloat16 %.3f ms (float time / bfloat16 time: %.2f)\n", t32, t16, t32 / t16);
  std::printf("ordo::sum, exact:    float %.3f ms, bfloat16 %.3f ms (%.2f); both give %.9g\n", e32, e16, e32 / e16,
              static_cast<double>(s16));
  expect(s32 == s16, "the exact sums of the same values must agree");

  const std::size_t rows = 2048, classes = 1024;
  Kokkos::View<float**, Kokkos::HostSpace> l32("l32", rows, classes), p32("p32", rows, classes);
  Kokkos::View<bfloat16**, Kokkos::HostSpace> l16("l16", rows, classes), p16("p16", rows, classes);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < classes; ++c) {
      l32(r, c) = x32(r * classes + c);
      l16(r, c) = x16(r * classes + c);
    }
  }
  const double s_t32 = median_time<std::milli>([&] { ordo::nn::softmax(l32, p32); }, 3);
  const double s_t16 = median_time<std::milli>([&] { ordo::nn::softmax(l16, p16); }, 3);
  std::printf("ordo::nn::softmax %zux%zu: float %.3f ms, bfloat16 %.3f ms (%.2f)\n", rows, classes, s_t32, s_t16,
              s_t32 / s_t16);
  std::printf("(times on this CPU, not asserted: 16-bit storage halves the bytes moved, but a CPU without\n"
              " 16-bit arithmetic spends instructions widening each value to float; the speed-up comes on\n"
              " memory-bound kernels and on GPUs whose tensor cores multiply 16-bit inputs)\n");
}

// Swamping: a bfloat16 running sum of 2^20 values in [0, 1) stops growing once its spacing
// exceeds twice the addends; ordo reads 16-bit values into float and sums exactly.
inline void stalled_running_sum() {
  const std::size_t n = 1 << 20;
  Kokkos::View<bfloat16*> x("x", n);
  auto host_x = Kokkos::create_mirror_view(x);
  std::mt19937 rng(10);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  double true_sum = 0;  // exact: bfloat16 values in [2^-24, 1) are multiples of 2^-31, sum < 2^20
  for (std::size_t i = 0; i < n; ++i) {
    host_x(i) = bfloat16(uniform(rng));
    true_sum += static_cast<double>(host_x(i));
  }
  Kokkos::deep_copy(x, host_x);
  bfloat16 running(0.0f);
  for (std::size_t i = 0; i < n; ++i) running = bfloat16(running + host_x(i));
  const float exact_mean = ordo::mean<float>(x, ordo::summation::exact);
  std::printf("1M bfloat16 values in [0, 1): a bfloat16 running sum stalls at %g; ordo::mean %.7g, the exact mean\n",
              static_cast<double>(running), static_cast<double>(exact_mean));
  expect(static_cast<float>(running) == 256.0f, "a bfloat16 running sum must stall at 256");
  expect(exact_mean == static_cast<float>(true_sum / static_cast<double>(n)),
         "the exact mean of bfloat16 values must be the correctly rounded mean");
}

inline void accumulation() {
  std::printf("\n== Accumulating in 16 bits against accumulating in float ==\n");
  stalled_running_sum();
  const std::size_t n = 1 << 20;
  Kokkos::View<bfloat16*, Kokkos::HostSpace> x("x", n);
  Kokkos::View<half*, Kokkos::HostSpace> xh("xh", n);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> digits(1, 65535);
  double exact = 0, exact_h = 0;  // values are multiples of 2^-24 below 1: double sums of 2^20 are exact
  for (std::size_t i = 0; i < n; ++i) {
    const float value = std::ldexp(static_cast<float>(digits(rng)), -16);
    x(i) = bfloat16(value);
    xh(i) = half(value);
    exact += static_cast<double>(x(i));
    exact_h += static_cast<double>(xh(i));
  }
  bfloat16 running(0.0f);
  half running_h(0.0f);
  float running_float = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    running = bfloat16(running + x(i));
    running_h = half(running_h + xh(i));
    running_float += x(i);
  }
  const float ordo_sum = ordo::sum(x);  // float result, exact accumulation, rounded once
  std::printf("sum of 2^20 values in (0, 1):       exact %.1f (bfloat16 data), %.1f (half data)\n", exact, exact_h);
  std::printf("  bfloat16 running sum:             %g   (stalls at 256: spacing 2 there, addends below 1)\n",
              static_cast<double>(running));
  std::printf("  half running sum:                 %g  (stalls at 2048 for the same reason)\n",
              static_cast<double>(running_h));
  std::printf("  float running sum:                %.1f (relative error %.2g)\n", static_cast<double>(running_float),
              std::fabs(static_cast<double>(running_float) - exact) / exact);
  std::printf("  ordo::sum (float, exact):         %.1f (relative error %.2g)\n", static_cast<double>(ordo_sum),
              std::fabs(static_cast<double>(ordo_sum) - exact) / exact);
  expect(static_cast<float>(running) == 256.0f && static_cast<float>(running_h) == 2048.0f,
         "16-bit running sums must stall at 256 (bfloat16) and 2048 (half)");
  expect(ordo_sum == static_cast<float>(exact), "ordo's sum of 16-bit values must be the correctly rounded sum");
}

// Underflow: a gradient of 1e-8 is 0 in half. Carried scaled by 2^16 it is a normal half; the
// weight gradient it feeds is a float, and unscaling it there recovers 1e-8.
inline void one_small_gradient() {
  ordo::nn::loss_scaler scaler;
  const half carried(scaler.scale(1e-8f));
  Kokkos::View<float*> weight_grad("weight_grad", 1);
  Kokkos::deep_copy(weight_grad, static_cast<float>(carried));
  const bool finite = scaler.unscale_and_check(weight_grad);
  scaler.update();
  auto unscaled = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), weight_grad);
  std::printf("a gradient of 1e-8 in half: %g; loss-scaled by 2^16: %g; unscaled in float: %.4g\n",
              static_cast<double>(half(1e-8f)), static_cast<double>(carried), static_cast<double>(unscaled(0)));
  expect(finite && half(1e-8f) == 0.0f && std::fabs(unscaled(0) - 1e-8f) < 1e-8f * 0x1p-10f,
         "1e-8 must underflow in half and survive loss scaling to within half's precision");
}

inline void loss_scaling() {
  std::printf("\n== Loss scaling: small gradients in half ==\n");
  one_small_gradient();
  // Gradients spread log-uniformly over [2^-30, 2^-12) (9e-10 to 2e-4), as small activation
  // gradients are. Backward through half activations stores each one in half. Half's normal range
  // starts at 2^-14: below it precision drops bit by bit (subnormals), below 2^-25 values are 0.
  const std::size_t n = 1 << 16;
  std::vector<float> truth(n);
  std::mt19937 rng(16);
  std::uniform_real_distribution<float> exponent(-30.0f, -12.0f);
  for (std::size_t i = 0; i < n; ++i) truth[i] = std::exp2(exponent(rng));

  ordo::nn::loss_scaler scaler;  // PyTorch's GradScaler defaults: scale 2^16
  const float scale = scaler.scale(1.0f);
  // Without scaling: half(g). With scaling: backward from scale * loss carries half(g * scale); the
  // weight gradient it feeds is float (master weights), where unscale_and_check divides by scale.
  Kokkos::View<float*, Kokkos::HostSpace> unscaled("weight gradient", n);
  std::size_t zero_plain = 0, zero_scaled = 0;
  double worst_plain = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const half plain(truth[i]);
    zero_plain += plain == 0.0f ? 1 : 0;
    if (plain != 0.0f) worst_plain = std::max(worst_plain, std::fabs(static_cast<double>(plain) / truth[i] - 1));
    unscaled(i) = half(truth[i] * scale);
  }
  const bool finite = scaler.unscale_and_check(unscaled);
  scaler.update();
  double worst_scaled = 0;
  for (std::size_t i = 0; i < n; ++i) {
    zero_scaled += unscaled(i) == 0.0f ? 1 : 0;
    if (unscaled(i) != 0.0f) worst_scaled = std::max(worst_scaled, std::fabs(static_cast<double>(unscaled(i)) / truth[i] - 1));
  }
  std::printf("%zu gradients in [2^-30, 2^-12): stored in half, %zu (%.1f%%) become 0 and the survivors\n  (subnormals below 2^-14 keep few bits) are off by up to %.3g\n",
              n, zero_plain, 100.0 * static_cast<double>(zero_plain) / static_cast<double>(n), worst_plain);
  std::printf("scaled by %g first: %zu become 0, the largest relative error is %.3g (half's u = %.3g); step taken: %s\n",
              static_cast<double>(scale), zero_scaled, worst_scaled, 0x1p-11, finite ? "yes" : "no");
  // Scaled by 2^16 every gradient lands in [2^-14, 2^4): normal in half, so rounded once to 11 bits.
  expect(zero_plain > n / 5 && zero_scaled == 0 && worst_scaled <= 0x1p-11,
         "scaling must rescue every gradient from underflow, to half's precision");
  expect(finite, "scaled gradients below 2^-12 must stay finite");

  // Too large a scale overflows instead: the step is skipped and the scale backs off.
  Kokkos::View<half*, Kokkos::HostSpace> big("big gradient", 1);
  big(0) = half(1.5f * scaler.current_scale());  // 1.5 * 65536 > 65504: inf in half
  const float before = scaler.current_scale();
  const bool step = scaler.unscale_and_check(big);
  scaler.update();
  big(0) = half(1.5f * scaler.current_scale());
  const bool step_after = scaler.unscale_and_check(big);
  scaler.update();
  std::printf("a gradient of 1.5 at scale %g is %g in half: step %s, scale backs off to %g; then %g: step %s, gradient %g\n",
              static_cast<double>(before), static_cast<double>(half(1.5f * before)), step ? "taken" : "skipped",
              static_cast<double>(before * 0.5f), static_cast<double>(1.5f * before * 0.5f), step_after ? "taken" : "skipped",
              static_cast<double>(big(0)));
  expect(!step && step_after && big(0) == 1.5f && scaler.current_scale() == before * 0.5f,
         "an overflowing gradient must skip the step and halve the scale");
}

// The whole answer, as q10_reduced_precision prints it; returns whether every check held.
inline bool demonstrate() {
  const int wrong_before = wrong_results;
  std::printf("Question 10: reduced precision, its benefits and problems\n");
  std::printf("bytes per value: float %zu, half %zu, bfloat16 %zu (static_assert)\n", sizeof(float), sizeof(half),
              sizeof(bfloat16));
  range_and_precision();
  bytes_and_speed();
  accumulation();
  loss_scaling();
  return wrong_results == wrong_before;
}

}  // namespace ordo_examples::q10
