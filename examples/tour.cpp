// The ordo tour: what this build of ordo can do, one section per feature.
#include <ordo/ordo.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <cstdio>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

namespace {

void section(const char* title) { std::printf("\n== %s ==\n", title); }

// Every result the tour prints is also checked; a wrong one is reported and fails the run.
int wrong_results = 0;

void expect(bool correct, const std::string& what) {
  if (!correct) {
    std::fprintf(stderr, "WRONG: %s\n", what.c_str());
    ++wrong_results;
  }
}

void seed_chain() {
  section("Compile-time chain planning: A 100x5, B 5x200, C 200x20");
  using A = ordo::shape<100, 5>;
  using B = ordo::shape<5, 200>;
  using C = ordo::shape<200, 20>;
  constexpr auto& plan = ordo::chain_plan_v<A, B, C>;
  // Both orders are checked by the compiler before this program exists.
  static_assert(plan.left_to_right_cost() == 100 * 5 * 200 + 100 * 200 * 20);
  static_assert(plan.cost() == 5 * 200 * 20 + 100 * 5 * 20);
  static_assert(plan.order() == "(A1(A2A3))");
  std::printf("(AB)C: %llu scalar multiplications (%llu FLOPs)\n",
              static_cast<unsigned long long>(plan.left_to_right_cost()),
              static_cast<unsigned long long>(2 * plan.left_to_right_cost()));
  std::printf("A(BC): %llu scalar multiplications (%llu FLOPs)  <- chosen at compile time\n",
              static_cast<unsigned long long>(plan.cost()), static_cast<unsigned long long>(plan.flops()));
  std::printf("order %.*s, %.1fx fewer multiplications, peak intermediate %llu elements\n",
              static_cast<int>(plan.order().size()), plan.order().data(),
              static_cast<double>(plan.left_to_right_cost()) / static_cast<double>(plan.cost()),
              static_cast<unsigned long long>(plan.peak_temporary_elements()));
}

// Median wall time of f over repeated runs, in microseconds.
template <class F>
double median_microseconds(F&& f, int repetitions) {
  std::vector<double> times;
  for (int r = 0; r < repetitions; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(times.begin(), times.begin() + repetitions / 2, times.end());
  return times[static_cast<std::size_t>(repetitions / 2)];
}

void seed_chain_evaluated() {
  section("Evaluating the seed chain on Kokkos (double, default execution space)");
  ordo::matrix<double, 100, 5> a;
  ordo::matrix<double, 5, 200> b;
  ordo::matrix<double, 200, 20> c;
  Kokkos::deep_copy(a.view(), 1.0);
  Kokkos::deep_copy(b.view(), 0.5);
  Kokkos::deep_copy(c.view(), 0.25);
  auto planned = ordo::chain(a, b, c);
  static_assert(decltype(planned)::order() == "(A1(A2A3))");
  ordo::matrix<double, 100, 20> r;
  ordo::matrix<double, 100, 200> ab;  // the (AB)C order needs this 100x200 temporary
  ordo::matrix<double, 100, 20> r_naive;
  const auto left_to_right = [&] {
    ordo::gemm(1.0, a, b, 0.0, ab);
    ordo::gemm(1.0, ab, c, 0.0, r_naive);
    Kokkos::fence();
  };
  const auto optimal = [&] { ordo::evaluate(planned, r); };
  left_to_right();
  optimal();
  const double t_naive = median_microseconds(left_to_right, 201);
  const double t_optimal = median_microseconds(optimal, 201);
  std::printf("(AB)C: %8llu multiplications, %8.1f us measured\n",
              static_cast<unsigned long long>(decltype(planned)::left_to_right_cost()), t_naive);
  std::printf("A(BC): %8llu multiplications, %8.1f us measured  (%.1fx predicted, %.1fx measured)\n",
              static_cast<unsigned long long>(decltype(planned)::cost()), t_optimal,
              static_cast<double>(decltype(planned)::left_to_right_cost()) / static_cast<double>(decltype(planned)::cost()),
              t_naive / t_optimal);
  auto host_r = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r.view());
  auto host_naive = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r_naive.view());
  // Every entry of A B C is 5 * 1 * 0.5 * 200 * 0.25 = 125, exact in double in either order.
  bool all_equal = true;
  for (int i = 0; i < 100; ++i) {
    for (int j = 0; j < 20; ++j) all_equal = all_equal && host_r(i, j) == 125.0 && host_naive(i, j) == 125.0;
  }
  std::printf("both give %.3f in every entry (%s); one workspace of %llu elements held B*C\n", host_r(0, 0),
              all_equal ? "equal" : "DIFFERENT",
              static_cast<unsigned long long>(planned.plan().peak_temporary_elements()));
  expect(all_equal, "A(BC) and (AB)C must both be 125 in every entry");
}

void h_transpose_h_x() {
  section("Written as it reads: h^T * h * x with h 2000x2000 (double)");
  constexpr std::size_t n = 2000;
  ordo::matrix<double, n, n> h;
  ordo::vector<double, n> x;
  Kokkos::deep_copy(h.view(), 0.001);
  Kokkos::deep_copy(x.view(), 1.0);
  auto e = ordo::transpose(h) * h * x;  // lazy, and planned by the compiler
  static_assert(decltype(e)::order() == "(A1(A2A3))");
  ordo::vector<double, n> y(ordo::uninitialized);
  ordo::matrix<double, n, n> hth(ordo::uninitialized);  // what left to right would form first
  ordo::vector<double, n> y_naive(ordo::uninitialized);
  const auto left_to_right = [&] {
    ordo::gemm(Kokkos::DefaultExecutionSpace(), 1.0, ordo::transpose(h).view(), h.view(), 0.0, hth.view());
    ordo::gemm(1.0, hth, x, 0.0, y_naive);
    Kokkos::fence();
  };
  const auto planned = [&] { y = e; };
  left_to_right();
  planned();
  const double t_naive = median_microseconds(left_to_right, 5);
  const double t_planned = median_microseconds(planned, 51);
  std::printf("(h^T h) x: %11llu multiplications, %9.1f us measured\n",
              static_cast<unsigned long long>(decltype(e)::left_to_right_cost()), t_naive);
  std::printf("h^T (h x): %11llu multiplications, %9.1f us measured  (%.0fx predicted, %.0fx measured)\n",
              static_cast<unsigned long long>(decltype(e)::cost()), t_planned,
              static_cast<double>(decltype(e)::left_to_right_cost()) / static_cast<double>(decltype(e)::cost()),
              t_naive / t_planned);
  auto host_y = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y.view());
  auto host_naive = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_naive.view());
  // Every entry is 2000 * 0.001 * 2000 * 0.001 = 4 up to rounding; both orders agree closely.
  const double difference = std::fabs(host_y(0, 0) - host_naive(0, 0));
  std::printf("y[0] = %.12f (planned), %.12f (left to right)\n", host_y(0, 0), host_naive(0, 0));
  expect(std::fabs(host_y(0, 0) - 4.0) < 1e-9 && difference < 1e-9, "h^T h x must be 4 in both orders");
}

void mean_of_a_million_floats() {
  section("The mean of 1M floats (question 11): every policy against the exact mean");
  const std::size_t n = 1 << 20;
  Kokkos::View<float*> x("x", n);
  auto host = Kokkos::create_mirror_view(x);
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  for (std::size_t i = 0; i < n; ++i) host(i) = 1000.0f + uniform(rng);  // readings near 1000
  Kokkos::deep_copy(x, host);
  const double exact = ordo::mean<double>(x, ordo::summation::exact);  // correctly rounded in double
  const float exact_float = ordo::mean(x, ordo::summation::exact);
  // An independent check: these floats are multiples of 2^-14 below 2^11, so their sum in double
  // (below 2^31, 45 significant bits) is exact in any order, and so is its division by n = 2^20.
  double exact_sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) exact_sum += static_cast<double>(host(i));
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
  // Sequential float summation in one thread shows the textbook failure most clearly.
  float sequential = 0.0f;
  for (std::size_t i = 0; i < n; ++i) sequential += host(i);
  report("loop", sequential / static_cast<float>(n), static_cast<double>(n));
  report("naive", ordo::mean(x, ordo::summation::naive), static_cast<double>(n));
  report("pairwise", ordo::mean(x, ordo::summation::pairwise), log2n + 20 + 1);
  report("kahan", ordo::mean(x, ordo::summation::kahan), 4 + 1);
  report("neumaier", ordo::mean(x, ordo::summation::neumaier), 4 + 1);
  report("exact", exact_float, 0.5);
  std::printf("exact is correctly rounded and bitwise identical for any thread count or order\n");
}

void batch_norm_small_batch() {
  section("Batch norm on a small batch (questions 3, 4 and 9)");
  // 4 samples, 2 channels: channel 0 varies, channel 1 is constant.
  Kokkos::View<double**> x("x", 4, 2), y("y", 4, 2);
  Kokkos::View<double*> gamma("gamma", 2), beta("beta", 2), running_mean("rm", 2), running_var("rv", 2);
  auto hx = Kokkos::create_mirror_view(x);
  const double samples[4] = {1.0, 2.0, 3.0, 6.0};
  for (int n = 0; n < 4; ++n) {
    hx(n, 0) = samples[n];
    hx(n, 1) = 5.0;
  }
  Kokkos::deep_copy(x, hx);
  Kokkos::deep_copy(gamma, 1.0);
  Kokkos::deep_copy(beta, 0.5);
  Kokkos::deep_copy(running_var, 1.0);
  const auto saved = ordo::nn::batch_norm_forward_training(x, gamma, beta, running_mean, running_var, y);
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  auto mean = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), saved.mean);
  auto invstd = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), saved.invstd);
  auto rv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), running_var);
  std::printf("channel 0: x = 1 2 3 6 -> mean %.3f, biased var %.3f, y = %.4f %.4f %.4f %.4f\n", mean(0),
              1.0 / (invstd(0) * invstd(0)) - 1e-5, hy(0, 0), hy(1, 0), hy(2, 0), hy(3, 0));
  std::printf("           running_var = 0.9 * 1 + 0.1 * unbiased var %.4f = %.4f\n", (rv(0) - 0.9) / 0.1, rv(0));
  std::printf("channel 1: constant 5 -> var 0, invstd = 1/sqrt(0 + eps) = %.1f (finite), y = beta = %.1f %.1f %.1f %.1f\n",
              invstd(1), hy(0, 1), hy(1, 1), hy(2, 1), hy(3, 1));
  // By hand: channel 0 has mean 3, squared deviations 4 + 1 + 0 + 9 = 14, biased variance 14 / 4,
  // unbiased 14 / 3; channel 1 has variance 0. Momentum 0.1, eps 1e-5, gamma 1, beta 0.5.
  auto rm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), running_mean);
  const auto near = [](double got, double want) { return std::fabs(got - want) <= 1e-12 * std::max(1.0, std::fabs(want)); };
  bool correct = near(mean(0), 3.0) && near(mean(1), 5.0) && near(invstd(0), 1.0 / std::sqrt(3.5 + 1e-5)) &&
                 near(invstd(1), 1.0 / std::sqrt(1e-5)) && near(rm(0), 0.1 * 3.0) && near(rm(1), 0.1 * 5.0) &&
                 near(rv(0), 0.9 + 0.1 * 14.0 / 3.0) && near(rv(1), 0.9);
  for (int n = 0; n < 4; ++n) {
    correct = correct && near(hy(n, 0), (samples[n] - 3.0) / std::sqrt(3.5 + 1e-5) + 0.5) && near(hy(n, 1), 0.5);
  }
  expect(correct, "batch norm must give the statistics and outputs computed by hand");
}


void mixed_precision() {
  section("Mixed precision (questions 3 and 10): 16-bit storage, float arithmetic");
  using half_limits = std::numeric_limits<ordo::half>;
  using bf16_limits = std::numeric_limits<ordo::bfloat16>;
  static_assert(half_limits::max() == 65504.0f && bf16_limits::epsilon() == 0x1p-7f);
  std::printf("half:     max %-9g epsilon %-10g smallest subnormal %g\n", static_cast<double>(half_limits::max()),
              static_cast<double>(half_limits::epsilon()), static_cast<double>(half_limits::denorm_min()));
  std::printf("bfloat16: max %-9.3g epsilon %-10g smallest subnormal %.3g\n", static_cast<double>(bf16_limits::max()),
              static_cast<double>(bf16_limits::epsilon()), static_cast<double>(bf16_limits::denorm_min()));

  // Swamping: a bfloat16 running sum of values in [0, 1) stops growing once its spacing exceeds
  // twice the addends; a float accumulator (ordo's default for 16-bit Views) does not.
  const std::size_t n = 1 << 20;
  Kokkos::View<ordo::bfloat16*> x("x", n);
  auto host = Kokkos::create_mirror_view(x);
  std::mt19937 rng(10);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  double true_sum = 0;  // exact: bfloat16 values in [2^-24, 1) are multiples of 2^-31, sum < 2^20
  for (std::size_t i = 0; i < n; ++i) {
    host(i) = ordo::bfloat16(uniform(rng));
    true_sum += static_cast<double>(host(i));
  }
  Kokkos::deep_copy(x, host);
  ordo::bfloat16 running(0.0f);
  for (std::size_t i = 0; i < n; ++i) running = ordo::bfloat16(running + host(i));
  const float exact_mean = ordo::mean<float>(x, ordo::summation::exact);
  std::printf("mean of 1M bfloat16 values in [0, 1): bfloat16 running sum %g -> mean %.3g; exact mean %.7g\n",
              static_cast<double>(running), static_cast<double>(running) / static_cast<double>(n),
              static_cast<double>(exact_mean));
  expect(exact_mean == static_cast<float>(true_sum / static_cast<double>(n)),
         "the exact mean of bfloat16 values must be the correctly rounded mean");
  expect(static_cast<float>(running) < 0.01f * static_cast<float>(true_sum), "a bfloat16 running sum must stall");

  // Overflow: softmax of bfloat16 logits (1e4, 0, -1e4). exp(1e4) is infinite in any format, so
  // exp/sum gives inf/inf = NaN; ordo subtracts the row's maximum, computes in float and rounds once.
  Kokkos::View<ordo::bfloat16**> logits("logits", 1, 3), probs("probs", 1, 3);
  auto hl = Kokkos::create_mirror_view(logits);
  hl(0, 0) = ordo::bfloat16(1e4f);
  hl(0, 1) = ordo::bfloat16(0.0f);
  hl(0, 2) = ordo::bfloat16(-1e4f);
  Kokkos::deep_copy(logits, hl);
  ordo::nn::softmax(logits, probs);
  auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), probs);
  const float naive = std::exp(static_cast<float>(hl(0, 0))) /
                      (std::exp(static_cast<float>(hl(0, 0))) + std::exp(0.0f) + std::exp(static_cast<float>(hl(0, 2))));
  std::printf("softmax(1e4, 0, -1e4): naive exp/sum %g; ordo::nn::softmax %g %g %g\n", static_cast<double>(naive),
              static_cast<double>(hp(0, 0)), static_cast<double>(hp(0, 1)), static_cast<double>(hp(0, 2)));
  expect(std::isnan(naive) && hp(0, 0) == 1.0f && hp(0, 1) == 0.0f && hp(0, 2) == 0.0f,
         "naive softmax must overflow and ordo's give (1, 0, 0)");

  // Underflow: an activation gradient of 1e-8 is 0 in half. Backward from the scaled loss carries
  // it as 1e-8 * 2^16, a normal half; the weight gradient it feeds is a float (AMP keeps weights
  // and their gradients in float), and unscaling it there recovers 1e-8.
  ordo::nn::loss_scaler scaler;
  const ordo::half carried(scaler.scale(1e-8f));
  Kokkos::View<float*> weight_grad("weight_grad", 1);
  Kokkos::deep_copy(weight_grad, static_cast<float>(carried));
  const bool finite = scaler.unscale_and_check(weight_grad);
  scaler.update();
  auto unscaled = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), weight_grad);
  std::printf("gradient 1e-8 in half: %g; carried scaled by 2^16: %g; unscaled in float: %.4g\n",
              static_cast<double>(ordo::half(1e-8f)), static_cast<double>(carried), static_cast<double>(unscaled(0)));
  expect(finite && ordo::half(1e-8f) == 0.0f && std::fabs(unscaled(0) - 1e-8f) < 1e-10f,
         "1e-8 must underflow in half and survive loss scaling");
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  std::printf("ordo %d.%d.%d\n", ORDO_VERSION_MAJOR, ORDO_VERSION_MINOR, ORDO_VERSION_PATCH);
  section("Kokkos configuration");
  ordo::print_execution_spaces(std::cout);
  std::cout.flush();
  seed_chain();
  seed_chain_evaluated();
  h_transpose_h_x();
  mean_of_a_million_floats();
  batch_norm_small_batch();
  mixed_precision();
  if (wrong_results > 0) std::fprintf(stderr, "the tour found %d wrong results\n", wrong_results);
  return wrong_results == 0 ? 0 : 1;
}
