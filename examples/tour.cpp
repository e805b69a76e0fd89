// The ordo tour: a guided walk through the most striking of the teaching examples
// (examples/q01_chain_order.cpp ... examples/q12_mask.cpp, described in docs/questions.md), one
// short stop per interview question, in a few seconds.
//
// Every printed claim is also checked against an independent oracle (closed-form arithmetic,
// brute force, integer or long double references written here, never a value copied from ordo's
// output): a wrong result is reported and fails the run. Compile-time claims are static_asserts,
// so a tour that builds has already proved them. Times are printed, never tested.
#include <ordo/ordo.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iostream>
#include <limits>
#include <numbers>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace {

// Every result the tour prints is also checked; a wrong one is reported and fails the run.
int wrong_results = 0;

void expect(bool correct, const std::string& what) {
  if (!correct) {
    std::fprintf(stderr, "WRONG: %s\n", what.c_str());
    ++wrong_results;
  }
}

void stop(const char* title) { std::printf("\n== %s ==\n", title); }
void more(const char* where) { std::printf("more: %s\n", where); }

using host = Kokkos::DefaultHostExecutionSpace;  // for matrices filled element by element

// Median wall time of f over repeated runs, in units of Period (std::micro, std::milli).
template <class Period, class F>
double median_time(F&& f, int repetitions) {
  std::vector<double> times;
  for (int r = 0; r < repetitions; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    times.push_back(std::chrono::duration<double, Period>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(times.begin(), times.begin() + repetitions / 2, times.end());
  return times[static_cast<std::size_t>(repetitions / 2)];
}

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// ---------------------------------------------------------------------------------------------
// Q1: the seed chain. Closed-form costs, written out, against the compile-time plan.
namespace q1 {
using A = ordo::shape<100, 5>;
using B = ordo::shape<5, 200>;
using C = ordo::shape<200, 20>;
constexpr auto& plan = ordo::chain_plan_v<A, B, C>;
constexpr std::uint64_t ab_then_c = 100 * 5 * 200 + 100 * 200 * 20;  // 100,000 + 400,000
constexpr std::uint64_t a_then_bc = 5 * 200 * 20 + 100 * 5 * 20;     //  20,000 +  10,000
static_assert(ab_then_c == 500'000 && a_then_bc == 30'000);
static_assert(plan.left_to_right_cost() == ab_then_c && plan.cost() == a_then_bc);
static_assert(plan.flops() == 2 * a_then_bc && plan.order() == "(A1(A2A3))");
// The widely quoted "1,000,000 vs 50,000": 50,000 is neither unit for A(BC).
static_assert(plan.cost() != 50'000 && plan.flops() != 50'000);
// The only intermediate of A(BC) is BC, 5x20; (AB)C would form AB, 100x200.
static_assert(plan.peak_temporary_elements() == 5 * 20);

template <std::size_t R, std::size_t K>
ordo::matrix<double, R, K, host> random_small_integers(std::mt19937& rng, std::vector<std::int64_t>& copy) {
  // Integers in [-3, 3]: every sum below is an integer far below 2^53, exact in double in any order.
  std::uniform_int_distribution<int> value(-3, 3);
  ordo::matrix<double, R, K, host> m;
  copy.resize(R * K);
  for (std::size_t i = 0; i < R; ++i) {
    for (std::size_t j = 0; j < K; ++j) {
      copy[i * K + j] = value(rng);
      m(i, j) = static_cast<double>(copy[i * K + j]);
    }
  }
  return m;
}

void run() {
  stop("Q1 — which order for ABC, with A 100x5, B 5x200, C 200x20?");
  std::printf("(AB)C: 100*5*200 + 100*200*20 = %6llu multiplications (%7llu FLOPs), forms AB, 100x200\n",
              static_cast<unsigned long long>(ab_then_c), static_cast<unsigned long long>(2 * ab_then_c));
  std::printf("A(BC): 5*200*20 + 100*5*20    = %6llu multiplications (%7llu FLOPs), forms BC, 5x20\n",
              static_cast<unsigned long long>(a_then_bc), static_cast<unsigned long long>(2 * a_then_bc));
  std::printf("ordo's compile-time plan: %.*s, %.1fx fewer multiplications (the often quoted\n"
              "\"1,000,000 vs 50,000\" mixes units: A(BC) is 30,000 multiplications or 60,000 FLOPs)\n",
              static_cast<int>(plan.order().size()), plan.order().data(),
              static_cast<double>(ab_then_c) / static_cast<double>(a_then_bc));

  std::mt19937 rng(1);
  std::vector<std::int64_t> ai, bi, ci;
  const auto a = random_small_integers<100, 5>(rng, ai);
  const auto b = random_small_integers<5, 200>(rng, bi);
  const auto c = random_small_integers<200, 20>(rng, ci);
  ordo::matrix<double, 100, 200, host> ab(ordo::uninitialized);
  ordo::matrix<double, 5, 20, host> bc(ordo::uninitialized);
  ordo::matrix<double, 100, 20, host> r_left(ordo::uninitialized), r_right(ordo::uninitialized),
      r_planned(ordo::uninitialized);
  const auto left_first = [&] {
    ordo::gemm(1.0, a, b, 0.0, ab);
    ordo::gemm(1.0, ab, c, 0.0, r_left);
    Kokkos::fence();
  };
  const auto right_first = [&] {
    ordo::gemm(1.0, b, c, 0.0, bc);
    ordo::gemm(1.0, a, bc, 0.0, r_right);
    Kokkos::fence();
  };
  auto expression = a * b * c;  // lazy, planned by the compiler
  static_assert(decltype(expression)::order() == "(A1(A2A3))" && decltype(expression)::cost() == a_then_bc);
  const auto planned = [&] {
    r_planned = expression;
    Kokkos::fence();
  };
  left_first();
  right_first();
  planned();
  const double t_left = median_time<std::micro>(left_first, 201);
  const double t_right = median_time<std::micro>(right_first, 201);
  const double t_planned = median_time<std::micro>(planned, 201);
  std::printf("measured (double, median of 201): (AB)C %.1f us, A(BC) %.1f us (%.1fx faster), a * b * c %.1f us\n",
              t_left, t_right, t_left / t_right, t_planned);

  // Oracle: the product in 64-bit integers by a plain triple loop, in the (AB)C order.
  std::vector<std::int64_t> abi(100 * 200, 0), reference(100 * 20, 0);
  for (std::size_t i = 0; i < 100; ++i) {
    for (std::size_t k = 0; k < 5; ++k) {
      for (std::size_t j = 0; j < 200; ++j) abi[i * 200 + j] += ai[i * 5 + k] * bi[k * 200 + j];
    }
  }
  for (std::size_t i = 0; i < 100; ++i) {
    for (std::size_t k = 0; k < 200; ++k) {
      for (std::size_t j = 0; j < 20; ++j) reference[i * 20 + j] += abi[i * 200 + k] * ci[k * 20 + j];
    }
  }
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < 100; ++i) {
    for (std::size_t j = 0; j < 20; ++j) {
      const double want = static_cast<double>(reference[i * 20 + j]);
      if (r_left(i, j) != want || r_right(i, j) != want || r_planned(i, j) != want) ++mismatches;
    }
  }
  std::printf("all three equal an integer triple loop in all 2000 entries: %s\n", mismatches == 0 ? "yes" : "NO");
  expect(mismatches == 0, "both orders and a * b * c must equal the integer product");
  more("examples/q01_chain_order.cpp");
}
}  // namespace q1

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
namespace q2 {
// Catalan numbers by Segner's recurrence C(k+1) = sum C(i) C(k-i), checked against OEIS A000108.
constexpr std::array<std::uint64_t, 31> catalan = [] {
  std::array<std::uint64_t, 31> c{};
  c[0] = 1;
  for (std::size_t k = 0; k + 1 < c.size(); ++k) {
    for (std::size_t i = 0; i <= k; ++i) c[k + 1] += c[i] * c[k - i];
  }
  return c;
}();
static_assert(catalan[5] == 42 && catalan[10] == 16'796 && catalan[11] == 58'786);
static_assert(catalan[19] == 1'767'263'190 && catalan[20] == 6'564'120'420);
static_assert(catalan[29] == 1'002'242'216'651'368 && catalan[30] == 3'814'986'502'092'304);

// The DP's candidate splits, closed form, and counted as its three loops visit them.
constexpr std::uint64_t dp_splits(std::uint64_t n) { return (n * n * n - n) / 6; }
constexpr std::uint64_t count_dp_splits(std::uint64_t n) {
  std::uint64_t count = 0;
  for (std::uint64_t length = 2; length <= n; ++length) {
    for (std::uint64_t i = 1; i + length - 1 <= n; ++i) count += length - 1;
  }
  return count;
}
static_assert(dp_splits(20) == 1330 && count_dp_splits(20) == 1330);
static_assert(dp_splits(30) == 4495 && count_dp_splits(30) == 4495);

// Calls visit(cost) for every parenthesization of A(first) .. A(last), without memoization: the
// brute force that the DP replaces.
void for_each_tree(std::span<const std::size_t> d, std::size_t first, std::size_t last,
                   const std::function<void(std::uint64_t)>& visit) {
  if (first == last) return visit(0);
  for (std::size_t k = first; k < last; ++k) {
    const std::uint64_t join = std::uint64_t{d[first]} * d[k + 1] * d[last + 1];
    for_each_tree(d, first, k, [&](std::uint64_t left) {
      for_each_tree(d, k + 1, last, [&](std::uint64_t right) { visit(left + right + join); });
    });
  }
}

// The textbook DP, written independently of ordo: m[i][j] kept twice (row i and, mirrored, row j)
// so that the inner loop reads both contiguously.
std::uint64_t textbook_dp_cost(const std::vector<std::size_t>& d) {
  const std::size_t n = d.size() - 1;
  std::vector<std::uint64_t> m(n * n, 0), mirrored(n * n, 0);  // mirrored[j * n + i] = m[i][j]
  for (std::size_t length = 2; length <= n; ++length) {
    for (std::size_t i = 0; i + length <= n; ++i) {
      const std::size_t j = i + length - 1;
      std::uint64_t best = UINT64_MAX;
      for (std::size_t k = i; k < j; ++k) {
        const std::uint64_t cost = m[i * n + k] + mirrored[j * n + k + 1] + std::uint64_t{d[i]} * d[k + 1] * d[j + 1];
        best = cost < best ? cost : best;
      }
      m[i * n + j] = best;
      mirrored[j * n + i] = best;
    }
  }
  return m[n - 1];
}

void run() {
  stop("Q2 and Q6 — how do you order A1...An, and is that intractable?");
  for (const std::uint64_t n : std::array<std::uint64_t, 2>{20, 30}) {  // not a braced list: nvcc
    std::printf("n = %llu: C(%llu) = %llu trees to try, the DP tries (n^3 - n)/6 = %llu splits\n",
                static_cast<unsigned long long>(n), static_cast<unsigned long long>(n - 1),
                static_cast<unsigned long long>(catalan[n - 1]), static_cast<unsigned long long>(dp_splits(n)));
  }

  // Brute force over every tree of a 12-matrix chain against ordo's DP.
  std::mt19937 rng(6);
  std::uniform_int_distribution<std::size_t> small_dim(1, 100);
  std::vector<std::size_t> dims12(13);
  for (std::size_t& d : dims12) d = small_dim(rng);
  std::uint64_t trees = 0, best = UINT64_MAX;
  double t_brute = 1e300;
  for (int repetition = 0; repetition < 3; ++repetition) {
    const auto start = std::chrono::steady_clock::now();
    trees = 0;
    best = UINT64_MAX;
    for_each_tree(dims12, 0, 11, [&](std::uint64_t cost) {
      ++trees;
      best = cost < best ? cost : best;
    });
    t_brute = std::min(t_brute, milliseconds_since(start));
  }
  const std::uint64_t dp12 = ordo::plan_chain(dims12, ordo::planner::dynamic_programming).cost();
  const double years = t_brute / 1e3 / static_cast<double>(trees) * static_cast<double>(catalan[29]) /
                       (365.25 * 24 * 3600);
  std::printf("brute force, 12 random matrices: %llu trees (= C(11)) in %.1f ms, best cost %llu = ordo's DP;\n"
              "  at that rate 30 matrices would take %.0f years: exponential, yet the problem is tractable\n",
              static_cast<unsigned long long>(trees), t_brute, static_cast<unsigned long long>(best), years);
  expect(trees == catalan[11] && best == dp12, "the brute force must count C(11) trees and find the DP's cost");

  // 1,000 matrices with random dims: far beyond any enumeration, easy for the DP, easier for Hu-Shing.
  std::mt19937_64 rng64(2);
  std::uniform_int_distribution<std::size_t> dim(1, 1000);
  std::vector<std::size_t> dims(1001);
  for (std::size_t& d : dims) d = dim(rng64);
  auto start = std::chrono::steady_clock::now();
  const auto dp = ordo::plan_chain(dims, ordo::planner::dynamic_programming);
  const double t_dp = milliseconds_since(start);
  start = std::chrono::steady_clock::now();
  const auto hu_shing = ordo::plan_chain(dims, ordo::planner::hu_shing);
  const double t_hu_shing = milliseconds_since(start);
  const std::uint64_t textbook = textbook_dp_cost(dims);
  std::printf("1,000 matrices, dims uniform in [1, 1000], planned at run time (10^%.0f trees):\n",
              (std::lgamma(2 * 999.0 + 1) - std::lgamma(999.0 + 1) - std::lgamma(999.0 + 2)) / std::numbers::ln10);
  std::printf("  ordo DP, O(n^3): cost %llu in %.1f ms; Hu-Shing, O(n log n): cost %llu in %.2f ms\n",
              static_cast<unsigned long long>(dp.cost()), t_dp, static_cast<unsigned long long>(hu_shing.cost()),
              t_hu_shing);
  std::printf("  both equal a textbook DP written in this file; left to right would cost %.0fx the optimum\n",
              static_cast<double>(dp.left_to_right_cost()) / static_cast<double>(dp.cost()));
  expect(dp.cost() == textbook && hu_shing.cost() == textbook, "ordo's DP and Hu-Shing must find the optimum");
  more("examples/q02_chain_dp.cpp, examples/q06_intractable.cpp");
}
}  // namespace q2

// ---------------------------------------------------------------------------------------------
// Q7: the gradient of a scalar loss is a chain of Jacobians; its cheapest order is reverse mode.
namespace q7 {
constexpr std::size_t h = 512, d = 256;
// T = 4 as types: dL/dh_T (1 x H), three step Jacobians (H x H), dh_1/dx_1 (H x D).
constexpr auto& reverse4 = ordo::chain_plan_v<ordo::shape<1, h>, ordo::shape<h, h>, ordo::shape<h, h>,
                                              ordo::shape<h, h>, ordo::shape<h, d>>;
static_assert(reverse4.order() == "((((A1A2)A3)A4)A5)");                // left to right: reverse mode
static_assert(reverse4.cost() == 3 * (1 * h * h) + 1 * h * d);          // vector-Jacobian products only
// One input direction instead (H x 1 on the right): Jacobian-vector products, forward mode.
constexpr auto& forward4 =
    ordo::chain_plan_v<ordo::shape<h, h>, ordo::shape<h, h>, ordo::shape<h, h>, ordo::shape<h, 1>>;
static_assert(forward4.order() == "(A1(A2(A3A4)))" && forward4.cost() == 3 * (h * h * 1));

void run() {
  stop("Q7 — backpropagation through time: why reverse mode?");
  constexpr std::size_t jacobians = 1024;
  std::vector<std::size_t> dims(jacobians + 2, h);
  dims.front() = 1;
  dims.back() = d;
  const auto reverse = ordo::plan_chain(dims);  // 1025 matrices: Hu-Shing
  const std::vector<std::size_t> transposed(dims.rbegin(), dims.rend());
  const std::uint64_t right_to_left = ordo::plan_chain(transposed).left_to_right_cost();
  bool left_deep = true;  // every product takes in the gradient row vector, A1
  for (const ordo::planned_product& p : reverse.products()) left_deep = left_deep && p.first == 0;
  std::printf("dL/dx_1 = (1xH)(HxH)...(HxH)(HxD), %zu Jacobians, H = %zu, D = %zu, planned at run time:\n", jacobians,
              h, d);
  std::printf("  left to right (reverse mode), the plan: (T-1) H^2 + H D   = %12llu multiplications\n",
              static_cast<unsigned long long>(reverse.cost()));
  std::printf("  right to left (forward mode):           (T-1) H^2 D + H D = %12llu (%.0fx more)\n",
              static_cast<unsigned long long>(right_to_left),
              static_cast<double>(right_to_left) / static_cast<double>(reverse.cost()));
  std::printf("for T = 4 the compile-time plan is %.*s; for one input direction, (HxH)^3 (Hx1), it is\n"
              "%.*s: forward mode. A scalar loss and millions of parameters: reverse mode, backpropagation.\n",
              static_cast<int>(reverse4.order().size()), reverse4.order().data(),
              static_cast<int>(forward4.order().size()), forward4.order().data());
  expect(left_deep && reverse.cost() == reverse.left_to_right_cost() &&
             reverse.cost() == (jacobians - 1) * h * h + h * d && right_to_left == (jacobians - 1) * h * h * d + h * d,
         "the gradient chain must be planned left to right, with the closed-form costs");
  more("examples/q07_bptt.cpp (also the time and memory of BPTT, and checkpointing)");
}
}  // namespace q7

// ---------------------------------------------------------------------------------------------
// Q5: a roofline for one product on H100, from published numbers.
namespace q5 {
struct machine {
  double peak_flops;  // FLOP/s, dense
  double bandwidth;   // bytes/s of HBM
  constexpr double ridge() const { return peak_flops / bandwidth; }
};
// NVIDIA H100 Tensor Core GPU datasheet, SXM5: BF16 Tensor Core 1,979 TFLOPS with sparsity, so
// 989 dense; GPU memory bandwidth 3.35 TB/s.
constexpr machine h100_bf16{989e12, 3.35e12};
static_assert(h100_bf16.ridge() > 295 && h100_bf16.ridge() < 296);

// A product m x k times k x n: 2mkn FLOPs, at least (mk + kn + mn) bf16 elements of 2 bytes moved.
constexpr double intensity(const ordo::planned_product& p) {
  const double m = static_cast<double>(p.rows), k = static_cast<double>(p.inner), n = static_cast<double>(p.cols);
  return 2 * m * k * n / (2 * (m * k + k * n + m * n));
}
constexpr double roofline_seconds(const ordo::planned_product& p, const machine& on) {
  const double flops = 2.0 * static_cast<double>(p.multiplications());
  const double bytes = 2.0 * static_cast<double>(p.rows * p.inner + p.inner * p.cols + p.rows * p.cols);
  return std::max(flops / on.peak_flops, bytes / on.bandwidth);
}
constexpr auto square = ordo::plan_chain(std::array<std::size_t, 3>{4096, 4096, 4096});
constexpr auto decode = ordo::plan_chain(std::array<std::size_t, 3>{1, 4096, 16384});
// Square GEMM: 2n^3 / (3 n^2 * 2 bytes) = n/3 FLOP/byte, far above the ridge: compute-bound.
static_assert(intensity(square.products()[0]) == 4096.0 / 3 && intensity(square.products()[0]) > h100_bf16.ridge());
// 2 * 4096^3 / 989e12 s = 139 us.
static_assert(roofline_seconds(square.products()[0], h100_bf16) > 138e-6 &&
              roofline_seconds(square.products()[0], h100_bf16) < 140e-6);
// A vector times a matrix (decoding one token): about 1 FLOP per byte, memory-bound.
static_assert(intensity(decode.products()[0]) > 0.99 && intensity(decode.products()[0]) < 1.0);
// (4096 + 4096 * 16384 + 16384) * 2 bytes / 3.35e12 B/s = 40.1 us.
static_assert(roofline_seconds(decode.products()[0], h100_bf16) > 40.0e-6 &&
              roofline_seconds(decode.products()[0], h100_bf16) < 40.2e-6);

void run(double cpu_gflops) {
  stop("Q5 — why did GPUs win for deep learning? A roofline on H100");
  std::printf("H100 SXM, NVIDIA's datasheet: 989 TFLOP/s dense bf16, 3.35 TB/s -> ridge %.0f FLOP/byte\n",
              h100_bf16.ridge());
  const auto& big = square.products()[0];
  const auto& small = decode.products()[0];
  std::printf("  4096x4096 times 4096x4096 (bf16): %6.1f FLOP/byte, compute-bound, %3.0f us at the roof\n",
              intensity(big), 1e6 * roofline_seconds(big, h100_bf16));
  std::printf("  1x4096 times 4096x16384 (decode): %6.1f FLOP/byte, memory-bound,  %3.0f us at the roof\n",
              intensity(small), 1e6 * roofline_seconds(small, h100_bf16));
  std::printf("big dense products are all arithmetic, and H100's tensor cores peak at %.0fx the %.0f GFLOP/s\n"
              "this CPU reached in the h^T h GEMM above (fp64); matrix-vector products gain only bandwidth.\n",
              h100_bf16.peak_flops / (cpu_gflops * 1e9), cpu_gflops);
  more("examples/q05_roofline.cpp (every product of several plans, fp64, TPU v4, this CPU's measured roofs)");
}
}  // namespace q5

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
// Q12: the question's nested loop, ported as is, against ordo::sphere_mask.
namespace q12 {
struct volume {
  std::size_t nx, ny, nz;
  std::size_t size() const { return nx * ny * nz; }
  std::size_t index(std::size_t x, std::size_t y, std::size_t z) const { return (x * ny + y) * nz + z; }
};

// make_mask line by line: a function call, np.linalg.norm and an 8-byte store per voxel.
int within_radius(const double a[3], const double b[3], double radius) {
  const double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
  if (std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) < radius) return 1;
  return 0;
}

std::vector<double> make_mask(const volume& v, const double roi[3], double radius) {
  std::vector<double> mask(v.size(), 0.0);  // np.zeros(volume.shape): float64
  for (std::size_t x = 0; x < v.nx; ++x) {
    for (std::size_t y = 0; y < v.ny; ++y) {
      for (std::size_t z = 0; z < v.nz; ++z) {
        const double p[3] = {static_cast<double>(x), static_cast<double>(y), static_cast<double>(z)};
        mask[v.index(x, y, z)] = within_radius(p, roi, radius);
      }
    }
  }
  return mask;
}

void run() {
  stop("Q12 — what is wrong with make_mask's three nested loops?");
  const volume v{128, 128, 128};
  const double roi[3] = {56.5, 70.25, 64.0};
  const double radius = 33.7;
  std::vector<double> original;
  using mask_type = decltype(ordo::sphere_mask(host(), {1, 1, 1}, {0.0, 0.0, 0.0}, 1.0));
  mask_type m;
  const double t_original = median_time<std::milli>([&] { original = make_mask(v, roi, radius); }, 1);
  const double t_ordo = median_time<std::milli>(
      [&] { m = ordo::sphere_mask(host(), {v.nx, v.ny, v.nz}, {roi[0], roi[1], roi[2]}, radius); }, 11);
  std::size_t inside = 0, differences = 0;
  for (std::size_t x = 0; x < v.nx; ++x) {
    for (std::size_t y = 0; y < v.ny; ++y) {
      for (std::size_t z = 0; z < v.nz; ++z) {
        const bool in = original[v.index(x, y, z)] == 1.0;
        inside += in ? 1 : 0;
        differences += (m(x, y, z) == 1) != in ? 1 : 0;
      }
    }
  }
  const double ball = 4.0 / 3.0 * std::numbers::pi * radius * radius * radius;
  std::printf("sphere of radius %.1f in a 128^3 volume: %zu voxels inside (4/3 pi r^3 = %.0f), %zu differences\n",
              radius, inside, ball, differences);
  std::printf("  the question's loop (C++ port), float64 mask: %8.2f ms, %5.1f MiB\n", t_original,
              static_cast<double>(original.size() * sizeof(double)) / (1 << 20));
  std::printf("  ordo::sphere_mask, 1 byte, %d threads:         %8.2f ms, %5.1f MiB (%.0fx faster)\n",
              host().concurrency(), t_ordo, static_cast<double>(m.span()) / (1 << 20), t_original / t_ordo);
  // The question's test is strict: a voxel exactly at the radius is outside.
  const auto edge = ordo::sphere_mask(host(), {24, 20, 16}, {10.0, 10.0, 10.0}, 3.0);
  std::printf("  strict <, as in the question: radius 3 around (10, 10, 10) keeps (12, 10, 10): %d, "
              "drops (13, 10, 10): %d\n",
              edge(12, 10, 10), edge(13, 10, 10));
  expect(differences == 0 && std::fabs(static_cast<double>(inside) - ball) < 0.01 * ball,
         "ordo's mask must equal the nested loop's, voxel by voxel");
  expect(edge(12, 10, 10) == 1 && edge(13, 10, 10) == 0, "a voxel exactly at the radius must be outside");
  more("examples/q12_mask.cpp (the bounding-box fix too; the Python original is slower still)");
}
}  // namespace q12

}  // namespace

int main(int argc, char* argv[]) {
  const auto start = std::chrono::steady_clock::now();
  Kokkos::ScopeGuard kokkos(argc, argv);
  std::printf("ordo %d.%d.%d: a tour of the questions ordo answers\n\n", ORDO_VERSION_MAJOR, ORDO_VERSION_MINOR,
              ORDO_VERSION_PATCH);
  std::printf(
      "ordo plans matrix chains at compile time and runs them, with the numerical kernels of deep learning,\n"
      "on Kokkos. Each stop below takes one interview question of docs/questions.md, prints a few numbers\n"
      "computed here and names the example that answers it in full. Every printed claim is checked against an\n"
      "independent oracle (closed forms, brute force, integer or long double references) and a wrong one\n"
      "fails the run; compile-time claims are static_asserts, proved when this file compiled. Times are\n"
      "measured on this machine, never tested.\n");
  q1::run();
  const double cpu_gflops = h_transpose_h_x();
  q2::run();
  q7::run();
  q5::run(cpu_gflops);
  mean_of_a_million_floats();
  instability_and_batch_norm();
  q10::run();
  q12::run();
  stop("And more");
  std::printf("Q8 (memory): examples/q08_memory.cpp. The planner on the command line:\n"
              "  build/default/tools/ordo-plan 30 35 15 5 10 20 25 (docs/ordo-plan.md)\n"
              "Q9 (1 GPU vs 8, synchronized batch norm) needs MPI:\n"
              "  mpirun -np 4 build/default/examples/sync_batch_norm"
              " (and examples/q09_sync_batch_norm.cpp)\n");
  stop("Kokkos configuration");
  ordo::print_execution_spaces(std::cout);
  std::cout.flush();
  std::printf("\ntour finished in %.2f s\n", milliseconds_since(start) / 1e3);
  if (wrong_results > 0) std::fprintf(stderr, "the tour found %d wrong results\n", wrong_results);
  return wrong_results == 0 ? 0 : 1;
}
