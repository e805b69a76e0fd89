// The ordo tour: a guided walk through the most striking of the teaching examples
// (examples/q01_chain_order.cpp ... examples/q12_mask.cpp, described in docs/questions.md), one
// short stop per interview question, in a few seconds.
//
// Where a stop shows what a question's example shows, it calls that example's code in
// examples/support/ (Q1, Q2, Q5, Q6, Q7, Q12) and prints a shorter summary; the other stops
// compute their own, smaller cases. Every printed claim is also checked against an independent
// oracle (closed-form arithmetic, brute force, integer or long double references, never a value
// copied from ordo's output): a wrong result is reported and fails the run. Compile-time claims
// are static_asserts, so a tour that builds has already proved them. Times are printed, never
// tested.
#include "support/harness.hpp"
#include "support/q01_chain_order.hpp"
#include "support/q02_chain_dp.hpp"
#include "support/q05_roofline.hpp"
#include "support/q06_intractable.hpp"
#include "support/q07_bptt.hpp"
#include "support/q12_mask.hpp"

#include <ordo/ordo.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <vector>
#include "support/kokkos_session.hpp"

namespace {

using ordo_examples::expect;
using ordo_examples::median_time;
using ordo_examples::milliseconds_since;

void stop(const char* title) { std::printf("\n== %s ==\n", title); }
void more(const char* where) { std::printf("more: %s\n", where); }

// ---------------------------------------------------------------------------------------------
// Q1: the seed chain, its closed-form costs proved against the compile-time plan in
// support/q01_chain_order.hpp, and both orders run and checked against an integer product.
void chain_order() {
  using namespace ordo_examples::q01;
  stop("Q1 — which order for ABC, with A 100x5, B 5x200, C 200x20?");
  std::printf("(AB)C: 100*5*200 + 100*200*20 = %6llu multiplications (%7llu FLOPs), forms AB, 100x200\n",
              static_cast<unsigned long long>(ab_then_c), static_cast<unsigned long long>(2 * ab_then_c));
  std::printf("A(BC): 5*200*20 + 100*5*20    = %6llu multiplications (%7llu FLOPs), forms BC, 5x20\n",
              static_cast<unsigned long long>(b_then_a), static_cast<unsigned long long>(2 * b_then_a));
  std::printf("ordo's compile-time plan: %.*s, %.1fx fewer multiplications (the often quoted\n"
              "\"1,000,000 vs 50,000\" mixes units: A(BC) is 30,000 multiplications or 60,000 FLOPs)\n",
              static_cast<int>(plan.order().size()), plan.order().data(),
              static_cast<double>(ab_then_c) / static_cast<double>(b_then_a));
  const orders_result r = evaluate_both_orders(201);
  std::printf("measured (double, median of 201): (AB)C %.1f us, A(BC) %.1f us (%.1fx faster), a * b * c %.1f us\n",
              r.left_microseconds, r.right_microseconds, r.left_microseconds / r.right_microseconds,
              r.planned_microseconds);
  std::printf("all three equal an integer triple loop in all 2000 entries: %s\n", r.mismatches == 0 ? "yes" : "NO");
  expect(r.mismatches == 0, "both orders and a * b * c must equal the integer product");
  more("examples/q01_chain_order.cpp");
}

// ---------------------------------------------------------------------------------------------
// Q1 at scale: h^T * h * x written as it reads. Returns the GFLOP/s of the left-to-right GEMM.
double h_transpose_h_x() {
  stop("Q1 at scale — what does h^T * h * x cost as written? (h 2000x2000, double)");
  constexpr std::size_t n = 2000;
  ordo::matrix<double, n, n> h;
  ordo::vector<double, n> x;
  Kokkos::deep_copy(h.view(), 0.001);
  Kokkos::deep_copy(x.view(), 1.0);
  auto e = ordo::transpose(h) * h * x;  // lazy, and planned by the compiler
  static_assert(decltype(e)::order() == "(A1(A2A3))");
  static_assert(decltype(e)::left_to_right_cost() == n * n * n + n * n && decltype(e)::cost() == 2 * n * n);
  ordo::vector<double, n> y(ordo::uninitialized);
  ordo::matrix<double, n, n> hth(ordo::uninitialized);  // what left to right forms first
  ordo::vector<double, n> y_naive(ordo::uninitialized);
  const auto left_to_right = [&] {
    ordo::gemm(Kokkos::DefaultExecutionSpace(), 1.0, ordo::transpose(h).view(), h.view(), 0.0, hth.view());
    ordo::gemm(1.0, hth, x, 0.0, y_naive);
    Kokkos::fence();
  };
  const auto planned = [&] {
    y = e;
    Kokkos::fence();
  };
  left_to_right();
  planned();
  const double t_naive = median_time<std::micro>(left_to_right, 3);
  const double t_planned = median_time<std::micro>(planned, 31);
  std::printf("(h^T h) x: n^3 + n^2 = %10llu multiplications, %9.1f us measured\n",
              static_cast<unsigned long long>(decltype(e)::left_to_right_cost()), t_naive);
  std::printf("h^T (h x): 2 n^2     = %10llu multiplications, %9.1f us measured  (%.0fx predicted, %.0fx measured)\n",
              static_cast<unsigned long long>(decltype(e)::cost()), t_planned,
              static_cast<double>(decltype(e)::left_to_right_cost()) / static_cast<double>(decltype(e)::cost()),
              t_naive / t_planned);
  auto host_y = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y.view());
  auto host_naive = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_naive.view());
  // Every entry is 2000 * 0.001 * 2000 * 0.001 = 4 up to rounding, in both orders.
  double worst = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    worst = std::max({worst, std::fabs(host_y(i, 0) - 4.0), std::fabs(host_naive(i, 0) - 4.0)});
  }
  std::printf("both orders give y = 4 in every entry (largest deviation %.1e)\n", worst);
  expect(worst < 1e-9, "h^T h x must be 4 in every entry, in both orders");
  more("README.md (A first example), docs/expressions.md");
  return 2.0 * static_cast<double>(n * n * n) / (t_naive * 1e3);
}

// ---------------------------------------------------------------------------------------------
// Q2 and Q6: trees against DP work, a brute force, and a 1000-matrix chain at run time.
void chain_dp_and_intractability() {
  namespace q02 = ordo_examples::q02;
  namespace q06 = ordo_examples::q06;
  stop("Q2 and Q6 — how do you order A1...An, and is that intractable?");
  for (const std::uint64_t n : std::array<std::uint64_t, 2>{20, 30}) {  // not a braced list: nvcc
    std::printf("n = %llu: C(%llu) = %llu trees to try, the DP tries (n^3 - n)/6 = %llu splits\n",
                static_cast<unsigned long long>(n), static_cast<unsigned long long>(n - 1),
                static_cast<unsigned long long>(q06::catalan[n - 1]), static_cast<unsigned long long>(q06::dp_splits(n)));
  }

  // Brute force over every tree of a 12-matrix chain against ordo's DP.
  std::mt19937 rng(6);
  std::uniform_int_distribution<std::size_t> small_dim(1, 100);
  std::vector<std::size_t> dims12(13);
  for (std::size_t& d : dims12) d = small_dim(rng);
  const q06::brute_force_result brute = q06::brute_force_against_dp(dims12);
  std::printf("brute force, 12 random matrices: %llu trees (= C(11)) in %.1f ms, best cost %llu = ordo's DP;\n"
              "  at that rate 30 matrices would take %.0f years: exponential, yet the problem is tractable\n",
              static_cast<unsigned long long>(brute.trees), brute.brute_force_milliseconds,
              static_cast<unsigned long long>(brute.best),
              q06::years_for_30_matrices(brute.brute_force_milliseconds / static_cast<double>(brute.trees)));
  expect(brute.agrees(12), "the brute force must count C(11) trees and find the DP's cost");

  // 1,000 matrices with random dims: far beyond any enumeration, easy for the DP, easier for Hu-Shing.
  const q02::thousand_matrices r = q02::plan_a_thousand_matrices();
  std::printf("1,000 matrices, dims uniform in [1, 1000], planned at run time (10^%.0f trees):\n",
              q02::log10_catalan(999));
  std::printf("  ordo DP, O(n^3): cost %llu in %.1f ms; Hu-Shing, O(n log n): cost %llu in %.2f ms\n",
              static_cast<unsigned long long>(r.dp), r.dp_milliseconds, static_cast<unsigned long long>(r.hu_shing),
              r.hu_shing_milliseconds);
  std::printf("  both equal a textbook DP without ordo; left to right would cost %.0fx the optimum\n",
              static_cast<double>(r.left_to_right) / static_cast<double>(r.dp));
  expect(r.agree(), "ordo's DP and Hu-Shing must find the optimum");
  more("examples/q02_chain_dp.cpp, examples/q06_intractable.cpp");
}

// ---------------------------------------------------------------------------------------------
// Q7: the gradient of a scalar loss is a chain of Jacobians; its cheapest order is reverse mode.
// Every number here is a static_assert in support/q07_bptt.hpp.
void backpropagation_order() {
  using namespace ordo_examples::q07;
  stop("Q7 — backpropagation through time: why reverse mode?");
  std::printf("dL/dx_1 = (1xH)(HxH)...(HxH)(HxD), %zu Jacobians, H = %zu, D = %zu, planned at compile time:\n",
              jacobians, h, d);
  std::printf("  left to right (reverse mode), the plan: (T-1) H^2 + H D   = %12llu multiplications\n",
              static_cast<unsigned long long>(reverse_mode.cost()));
  std::printf("  right to left (forward mode):           (T-1) H^2 D + H D = %12llu (%.0fx more)\n",
              static_cast<unsigned long long>(reverse_right_to_left),
              static_cast<double>(reverse_right_to_left) / static_cast<double>(reverse_mode.cost()));
  std::printf("for T = 4 the plan is %.*s; for one input direction, (HxH)^3 (Hx1), it is\n"
              "%.*s: forward mode. A scalar loss and millions of parameters: reverse mode, backpropagation.\n",
              static_cast<int>(reverse4.order().size()), reverse4.order().data(),
              static_cast<int>(forward4.order().size()), forward4.order().data());
  more("examples/q07_bptt.cpp (also the time and memory of BPTT, and checkpointing)");
}

// ---------------------------------------------------------------------------------------------
// Q5: a roofline for one product on H100, from published numbers (support/q05_roofline.hpp).
void roofline(double cpu_gflops) {
  using namespace ordo_examples::q05;
  stop("Q5 — why did GPUs win for deep learning? A roofline on H100");
  std::printf("H100 SXM, NVIDIA's datasheet: 989 TFLOP/s dense bf16, 3.35 TB/s -> ridge %.0f FLOP/byte\n",
              h100_bf16.ridge());
  const auto& big = square.products()[0];
  const auto& small = mlp_decode.products()[0];
  std::printf("  4096x4096 times 4096x4096 (bf16): %6.1f FLOP/byte, compute-bound, %3.0f us at the roof\n",
              point(big, 2).intensity(), 1e6 * roofline_seconds(big, h100_bf16));
  std::printf("  1x4096 times 4096x16384 (decode): %6.1f FLOP/byte, memory-bound,  %3.0f us at the roof\n",
              point(small, 2).intensity(), 1e6 * roofline_seconds(small, h100_bf16));
  std::printf("big dense products are all arithmetic, and H100's tensor cores peak at %.0fx the %.0f GFLOP/s\n"
              "this CPU reached in the h^T h GEMM above (fp64); matrix-vector products gain only bandwidth.\n",
              h100_bf16.peak_flops / (cpu_gflops * 1e9), cpu_gflops);
  more("examples/q05_roofline.cpp (every product of several plans, fp64, TPU v4, this CPU's measured roofs)");
}

// ---------------------------------------------------------------------------------------------
// Q11: the mean of 1M floats under every summation policy.
void mean_of_a_million_floats() {
  stop("Q11 — the mean of 1M floats with minimal loss of precision?");
  const std::size_t n = 1 << 20;
  Kokkos::View<float*> x("x", n);
  auto host_x = Kokkos::create_mirror_view(x);
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  for (std::size_t i = 0; i < n; ++i) host_x(i) = 1000.0f + uniform(rng);  // readings near 1000
  Kokkos::deep_copy(x, host_x);
  const double exact = ordo::mean<double>(x, ordo::summation::exact);  // correctly rounded in double
  const float exact_float = ordo::mean(x, ordo::summation::exact);
  // The oracle: these floats are multiples of 2^-14 below 2^11, so their sum in double (below
  // 2^31, 45 significant bits) is exact in any order, and so is its division by n = 2^20.
  double exact_sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) exact_sum += static_cast<double>(host_x(i));
  const double true_mean = exact_sum / static_cast<double>(n);
  expect(exact == true_mean, "mean<double>(exact) must be the exact mean");
  expect(exact_float == static_cast<float>(true_mean), "mean(exact) must be the exact mean rounded to float");
  const double ulp = static_cast<double>(std::nextafter(exact_float, 2000.0f) - exact_float);
  const auto report = [&](const char* name, float m, double bound_in_ulps) {
    const double error = std::fabs(static_cast<double>(m) - true_mean);
    std::printf("%-9s mean %.9g  error %.3g (%.2f ulp of float)\n", name, static_cast<double>(m), error, error / ulp);
    expect(error <= bound_in_ulps * ulp, std::string(name) + " mean must lie within its documented error bound");
  };
  // Each policy's documented bound on the sum, B u S (docs/reductions.md; u = 2^-24, S = n * mean),
  // plus u |sum| for the sum's rounding to float, divided by n: (B + 1) u mean, and u mean < 2^-14,
  // one float ulp of a mean in [512, 1024). So each mean is within B + 1 ulps.
  const double log2n = 20;
  float sequential = 0.0f;  // one thread, in order: the textbook failure
  for (std::size_t i = 0; i < n; ++i) sequential += host_x(i);
  report("loop", sequential / static_cast<float>(n), static_cast<double>(n));
  report("naive", ordo::mean(x, ordo::summation::naive), static_cast<double>(n));
  report("pairwise", ordo::mean(x, ordo::summation::pairwise), log2n + 20 + 1);
  report("kahan", ordo::mean(x, ordo::summation::kahan), 4 + 1);
  report("neumaier", ordo::mean(x, ordo::summation::neumaier), 4 + 1);
  report("exact", exact_float, 0.5);
  std::printf("exact is correctly rounded and bitwise identical for any thread count or order\n");
  more("examples/q11_mean_of_floats.cpp (an integer oracle, reproducibility across spaces and chunks)");
}

// ---------------------------------------------------------------------------------------------
// Q3 and Q4: overflow, cancellation, and the epsilon of batch norm.
void instability_and_batch_norm() {
  stop("Q3 and Q4 — what makes training unstable, and why the small eps in batch norm?");
  // Overflow: softmax(1000, 999, 998) = softmax(2, 1, 0) = (e^2, e, 1) / (e^2 + e + 1).
  {
    const float logits[3] = {1000.0f, 999.0f, 998.0f};
    Kokkos::View<float**, Kokkos::HostSpace> in("logits", 1, 3), out("probabilities", 1, 3);
    for (int c = 0; c < 3; ++c) in(0, c) = logits[c];
    ordo::nn::softmax(in, out);
    float naive[3], denominator = 0.0f;
    for (int c = 0; c < 3; ++c) denominator += std::exp(logits[c]);
    for (int c = 0; c < 3; ++c) naive[c] = std::exp(logits[c]) / denominator;
    const long double e = std::exp(1.0L), z = e * e + e + 1;
    const long double closed_form[3] = {e * e / z, e / z, 1 / z};
    double worst = 0.0;
    for (int c = 0; c < 3; ++c) {
      worst = std::max(worst, static_cast<double>(std::fabs((out(0, c) - closed_form[c]) / closed_form[c])));
    }
    std::printf("softmax(1000, 999, 998): exp/sum gives %g (exp(1000) = inf); ordo::nn::softmax %.7g %.7g %.7g,\n"
                "  the closed form (e^2, e, 1)/(e^2 + e + 1) to %.1e relative\n",
                static_cast<double>(naive[0]), static_cast<double>(out(0, 0)), static_cast<double>(out(0, 1)),
                static_cast<double>(out(0, 2)), worst);
    expect(std::isnan(naive[0]) && worst < 8 * 0x1p-24, "naive softmax must overflow, ordo's match the closed form");
  }
  // Cancellation: the variance of 2^20 floats 1e4 + N(0, 1).
  {
    const std::size_t n = 1 << 20;
    Kokkos::View<float**, Kokkos::HostSpace> x("x", n, 1);  // a batch of n values of one channel
    std::mt19937_64 rng(3);
    std::normal_distribution<double> normal(0.0, 1.0);
    for (std::size_t i = 0; i < n; ++i) x(i, 0) = static_cast<float>(1e4 + normal(rng));
    long double sum = 0;  // reference: two passes in long double
    for (std::size_t i = 0; i < n; ++i) sum += x(i, 0);
    const long double mean = sum / static_cast<long double>(n);
    long double m2 = 0;
    for (std::size_t i = 0; i < n; ++i) m2 += (x(i, 0) - mean) * (x(i, 0) - mean);
    const double reference = static_cast<double>(m2 / static_cast<long double>(n));
    float s = 0.0f, s2 = 0.0f;  // the textbook one pass in float
    for (std::size_t i = 0; i < n; ++i) {
      s += x(i, 0);
      s2 += x(i, 0) * x(i, 0);
    }
    const float naive = s2 / static_cast<float>(n) - (s / static_cast<float>(n)) * (s / static_cast<float>(n));
    const auto statistics = ordo::nn::batch_norm_local_statistics(x);
    auto m2_ordo = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), statistics.m2);
    const double variance = m2_ordo(0) / statistics.count;
    const double relative = std::fabs(variance - reference) / reference;
    std::printf("variance of 2^20 floats 1e4 + N(0, 1): E[x^2] - E[x]^2 in float %.4g; ordo's batch-norm\n"
                "  statistics (two passes in double) %.9f, a long double reference to %.1e relative\n",
                static_cast<double>(naive), variance, relative);
    expect(std::fabs(static_cast<double>(naive) - reference) > 1.0 && relative < 1e-12,
           "E[x^2] - E[x]^2 must fail in float, ordo's variance match the reference");
  }
  // Epsilon: 4 samples, channel 0 varies, channel 1 is constant; once with eps = 1e-5, once with 0.
  Kokkos::View<double**> x("x", 4, 2), y("y", 4, 2), y_zero("y_zero", 4, 2);
  Kokkos::View<double*> gamma("gamma", 2), beta("beta", 2), running_mean("rm", 2), running_var("rv", 2);
  auto hx = Kokkos::create_mirror_view(x);
  const double samples[4] = {1.0, 2.0, 3.0, 6.0};
  for (int i = 0; i < 4; ++i) {
    hx(i, 0) = samples[i];
    hx(i, 1) = 5.0;
  }
  Kokkos::deep_copy(x, hx);
  Kokkos::deep_copy(gamma, 1.0);
  Kokkos::deep_copy(beta, 0.5);
  Kokkos::deep_copy(running_var, 1.0);
  const auto saved = ordo::nn::batch_norm_forward_training(x, gamma, beta, running_mean, running_var, y);
  ordo::nn::batch_norm_options no_eps;
  no_eps.eps = 0.0;
  const auto saved_zero =
      ordo::nn::batch_norm_forward_training(x, gamma, beta, running_mean, running_var, y_zero, no_eps);
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  auto hy_zero = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_zero);
  auto mean = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), saved.mean);
  auto invstd = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), saved.invstd);
  auto invstd_zero = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), saved_zero.invstd);
  std::printf("batch norm, x = 1 2 3 6: mean %.3f, var %.3f, y = %.4f %.4f %.4f %.4f\n", mean(0),
              1.0 / (invstd(0) * invstd(0)) - 1e-5, hy(0, 0), hy(1, 0), hy(2, 0), hy(3, 0));
  std::printf("constant channel, x = 5 5 5 5: var 0, invstd = 1/sqrt(0 + 1e-5) = %.1f, "
              "y = beta = %.1f %.1f %.1f %.1f;\n"
              "  with eps = 0, invstd = %g and y = 0 * inf = %g: eps keeps it finite (no noise, no regularizer)\n",
              invstd(1), hy(0, 1), hy(1, 1), hy(2, 1), hy(3, 1), invstd_zero(1), hy_zero(0, 1));
  // By hand: channel 0 has mean 3, squared deviations 4 + 1 + 0 + 9 = 14, biased variance 14 / 4.
  const auto near = [](double got, double want) {
    return std::fabs(got - want) <= 1e-12 * std::max(1.0, std::fabs(want));
  };
  bool correct = near(mean(0), 3.0) && near(mean(1), 5.0) && near(invstd(0), 1.0 / std::sqrt(3.5 + 1e-5)) &&
                 near(invstd(1), 1.0 / std::sqrt(1e-5)) && std::isinf(invstd_zero(1));
  for (int i = 0; i < 4; ++i) {
    correct = correct && near(hy(i, 0), (samples[i] - 3.0) / std::sqrt(3.5 + 1e-5) + 0.5) && hy(i, 1) == 0.5 &&
              std::isnan(hy_zero(i, 1));
  }
  expect(correct, "batch norm must give the statistics and outputs computed by hand");
  more("examples/q03_instability.cpp, examples/q04_batch_norm_eps.cpp");
}

// ---------------------------------------------------------------------------------------------
// Q10: 16-bit storage, float arithmetic, loss scaling.
namespace q10 {
using ordo::bfloat16;
using ordo::half;
constexpr float infinity = std::numeric_limits<float>::infinity();
static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2);
static_assert(std::numeric_limits<half>::max() == 65504.0f && half(65520.0f) == infinity);
static_assert(std::numeric_limits<bfloat16>::digits == 8 && bfloat16(256.0f + 1.0f) == 256.0f);
static_assert(half(0x1p-26f) == 0.0f);

void run() {
  stop("Q10 — benefits and problems of reduced precision?");
  std::printf("2 bytes a value: half the memory and traffic of float; but half(65520) = %g (max 65504),\n"
              "  bfloat16(257) = %g (8 significant bits), half(2^-26) = %g\n",
              static_cast<double>(half(65520.0f)), static_cast<double>(bfloat16(257.0f)),
              static_cast<double>(half(0x1p-26f)));
  // Swamping: a bfloat16 running sum of values in [0, 1) stops growing once its spacing exceeds
  // twice the addends; ordo reads 16-bit values into float and sums exactly.
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

  // Underflow: a gradient of 1e-8 is 0 in half. Carried scaled by 2^16 it is a normal half; the
  // weight gradient it feeds is a float, and unscaling it there recovers 1e-8.
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
  more("examples/q10_reduced_precision.cpp");
}
}  // namespace q10

// ---------------------------------------------------------------------------------------------
// Q12: the question's nested loop, ported as is, against ordo::sphere_mask (support/q12_mask.hpp).
void make_mask_loops() {
  namespace q12 = ordo_examples::q12;
  stop("Q12 — what is wrong with make_mask's three nested loops?");
  const q12::masks m = q12::make_masks(q12::large, q12::large_centre, q12::large_radius, 1, 11);
  const q12::comparison c = q12::compare(q12::large, m);
  const double radius = q12::large_radius;
  const double ball = 4.0 / 3.0 * std::numbers::pi * radius * radius * radius;
  std::printf("sphere of radius %.1f in a 128^3 volume: %zu voxels inside (4/3 pi r^3 = %.0f), %zu differences\n",
              radius, c.inside, ball, c.box_differences + c.ordo_differences);
  std::printf("  the question's loop (C++ port), float64 mask: %8.2f ms, %5.1f MiB\n", m.original_milliseconds,
              q12::mebibytes(m.original.size() * sizeof(double)));
  std::printf("  1-byte mask, bounding box only:               %8.2f ms, %5.1f MiB (%.0fx faster)\n",
              m.box_milliseconds, q12::mebibytes(m.box.size()), m.original_milliseconds / m.box_milliseconds);
  std::printf("  ordo::sphere_mask, 1 byte, %d threads:         %8.2f ms, %5.1f MiB (%.0fx faster)\n",
              q12::space().concurrency(), m.ordo_milliseconds, q12::mebibytes(m.ordo.span()),
              m.original_milliseconds / m.ordo_milliseconds);
  // The question's test is strict: a voxel exactly at the radius is outside.
  const q12::masks edge = q12::make_masks(q12::small, q12::edge_centre, 3.0);
  std::printf("  strict <, as in the question: radius 3 around (10, 10, 10) keeps (12, 10, 10): %d, "
              "drops (13, 10, 10): %d\n",
              edge.ordo(12, 10, 10), edge.ordo(13, 10, 10));
  expect(c.same() && std::fabs(static_cast<double>(c.inside) - ball) < 0.01 * ball,
         "both fixes must equal the nested loop's mask, voxel by voxel");
  expect(q12::edge_is_strict(edge), "a voxel exactly at the radius must be outside");
  more("examples/q12_mask.cpp (a sphere sticking out of the volume; the Python original is slower still)");
}

}  // namespace

int main(int argc, char* argv[]) {
  const auto start = std::chrono::steady_clock::now();
  const ordo_examples::kokkos_session kokkos(argc, argv);
  std::printf("ordo %d.%d.%d: a tour of the questions ordo answers\n\n", ORDO_VERSION_MAJOR, ORDO_VERSION_MINOR,
              ORDO_VERSION_PATCH);
  std::printf(
      "ordo plans matrix chains at compile time and runs them, with the numerical kernels of deep learning,\n"
      "on Kokkos. Each stop below takes one interview question of docs/questions.md, prints a few numbers\n"
      "computed here and names the example that answers it in full. Every printed claim is checked against an\n"
      "independent oracle (closed forms, brute force, integer or long double references) and a wrong one\n"
      "fails the run; compile-time claims are static_asserts, proved when this file compiled. Times are\n"
      "measured on this machine, never tested.\n");
  chain_order();
  const double cpu_gflops = h_transpose_h_x();
  chain_dp_and_intractability();
  backpropagation_order();
  roofline(cpu_gflops);
  mean_of_a_million_floats();
  instability_and_batch_norm();
  q10::run();
  make_mask_loops();
  stop("And more");
  std::printf("Q8 (memory): examples/q08_memory.cpp. The planner on the command line (scripts/tour builds it):\n"
              "  build/default/tools/ordo-plan 30 35 15 5 10 20 25 (docs/ordo-plan.md)\n"
              "Q9 (1 GPU vs 8, synchronized batch norm) needs MPI:\n"
              "  cmake --build --preset default --target sync_batch_norm &&\n"
              "  mpirun -np 4 build/default/examples/sync_batch_norm (and examples/q09_sync_batch_norm.cpp)\n");
  stop("Kokkos configuration");
  ordo::print_execution_spaces(std::cout);
  std::cout.flush();
  std::printf("\ntour finished in %.2f s\n", milliseconds_since(start) / 1e3);
  const int wrong = ordo_examples::wrong_results;
  if (wrong > 0) std::fprintf(stderr, "the tour found %d wrong results\n", wrong);
  return wrong == 0 ? 0 : 1;
}
