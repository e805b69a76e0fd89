// The ordo tour: a guided walk through the most striking of the teaching examples
// (examples/q01_chain_order.cpp ... examples/q12_mask.cpp, described in docs/questions.md), one
// short stop per interview question, in a few seconds.
//
// Each stop calls its question's example code in examples/support/ (support/q01_chain_order.hpp
// ... support/q12_mask.hpp) and prints a shorter summary, or a case the example shows too; only
// "Q1 at scale" computes its own. Every printed claim is also checked against an independent
// oracle (closed-form arithmetic, brute force, integer or long double references, never a value
// copied from ordo's output): a wrong result is reported and fails the run. Compile-time claims
// are static_asserts, so a tour that builds has already proved them. Times are printed, never
// tested.
#include "support/harness.hpp"
#include "support/q01_chain_order.hpp"
#include "support/q02_chain_dp.hpp"
#include "support/q03_instability.hpp"
#include "support/q04_batch_norm_eps.hpp"
#include "support/q05_roofline.hpp"
#include "support/q06_intractable.hpp"
#include "support/q07_bptt.hpp"
#include "support/q10_reduced_precision.hpp"
#include "support/q11_mean_of_floats.hpp"
#include "support/q12_mask.hpp"

#include <ordo/ordo.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <numbers>
#include <random>
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
// Q11: the mean of 1M floats near 1000 under every summation policy, each within its error bound
// of an exact double sum (support/q11_mean_of_floats.hpp).
void mean_of_a_million_floats() {
  stop("Q11 — the mean of 1M floats with minimal loss of precision?");
  ordo_examples::q11::readings_near_1000();
  more("examples/q11_mean_of_floats.cpp (an integer oracle, reproducibility across spaces and chunks)");
}

// ---------------------------------------------------------------------------------------------
// Q3 and Q4: overflow and cancellation (support/q03_instability.hpp), and the epsilon of batch
// norm on four samples checked by hand (support/q04_batch_norm_eps.hpp).
void instability_and_batch_norm() {
  namespace q03 = ordo_examples::q03;
  stop("Q3 and Q4 — what makes training unstable, and why the small eps in batch norm?");
  // Overflow: softmax(1000, 999, 998) = softmax(2, 1, 0) = (e^2, e, 1) / (e^2 + e + 1).
  const q03::softmax_row large = q03::softmax_overflow()[0];
  std::printf("softmax(1000, 999, 998): exp/sum gives %g (exp(1000) = inf); ordo::nn::softmax %.7g %.7g %.7g,\n"
              "  the closed form (e^2, e, 1)/(e^2 + e + 1) to %.1e relative\n",
              static_cast<double>(large.naive[0]), static_cast<double>(large.ordo[0]),
              static_cast<double>(large.ordo[1]), static_cast<double>(large.ordo[2]), large.worst);
  // Cancellation: the variance of 2^20 floats 1e4 + N(0, 1).
  const q03::variance_result v = q03::variance_cancellation();
  std::printf("variance of 2^20 floats 1e4 + N(0, 1): E[x^2] - E[x]^2 in float %.4g; ordo's batch-norm\n"
              "  statistics (two passes in double) %.9f, a long double reference to %.1e relative\n",
              static_cast<double>(v.naive), v.ordo, v.relative(v.ordo));
  // Epsilon: 4 samples, channel 0 varies, channel 1 is constant; once with eps = 1e-5, once with 0.
  ordo_examples::q04::four_samples();
  more("examples/q03_instability.cpp, examples/q04_batch_norm_eps.cpp");
}

// ---------------------------------------------------------------------------------------------
// Q10: 16-bit storage, float arithmetic, loss scaling (support/q10_reduced_precision.hpp, whose
// static_asserts prove the range and precision printed here).
void reduced_precision() {
  namespace q10 = ordo_examples::q10;
  stop("Q10 — benefits and problems of reduced precision?");
  std::printf("2 bytes a value: half the memory and traffic of float; but half(65520) = %g (max 65504),\n"
              "  bfloat16(257) = %g (8 significant bits), half(2^-26) = %g\n",
              static_cast<double>(q10::half(65520.0f)), static_cast<double>(q10::bfloat16(257.0f)),
              static_cast<double>(q10::half(0x1p-26f)));
  q10::stalled_running_sum();
  q10::one_small_gradient();
  more("examples/q10_reduced_precision.cpp");
}

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
  reduced_precision();
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
