// Question 1: A is 100x5, B is 5x200, C is 200x20. In which order do you compute ABC, and why?
//
// The compiler proves both costs and the order; the run measures both orders and checks that they
// give the same matrix as an independent integer triple loop. Used by q01_chain_order.cpp and the
// tour.
#pragma once

#include "harness.hpp"

#include <ordo/ordo.hpp>

#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

namespace ordo_examples::q01 {

using A = ordo::shape<100, 5>;
using B = ordo::shape<5, 200>;
using C = ordo::shape<200, 20>;
inline constexpr auto& plan = ordo::chain_plan_v<A, B, C>;

// Closed-form arithmetic, independent of the planner: rows * inner * cols per product.
inline constexpr std::uint64_t ab_then_c = 100 * 5 * 200 + 100 * 200 * 20;  // (AB)C: 100,000 + 400,000
inline constexpr std::uint64_t b_then_a = 5 * 200 * 20 + 100 * 5 * 20;      // A(BC):  20,000 +  10,000
static_assert(ab_then_c == 500'000 && b_then_a == 30'000);
static_assert(plan.left_to_right_cost() == ab_then_c);
static_assert(plan.cost() == b_then_a);
static_assert(plan.order() == "(A1(A2A3))");
static_assert(plan.flops() == 60'000 && 2 * plan.left_to_right_cost() == 1'000'000);
static_assert(ab_then_c / b_then_a == 16);  // 16.7x fewer multiplications

// A widely circulated answer says "(AB)C: 1,000,000, A(BC): 50,000". 1,000,000 is the FLOP count
// of (AB)C (a multiply and an add per term), 50,000 is neither unit for A(BC): it is 30,000
// multiplications or 60,000 FLOPs.
static_assert(plan.cost() != 50'000 && plan.flops() != 50'000);
static_assert(2 * (5 * 200 * 20 + 100 * 5 * 20) == 60'000);

// The intermediate each order keeps alive: AB is 100x200, BC is 5x20.
static_assert(plan.peak_temporary_elements() == 5 * 20);
inline constexpr std::uint64_t ab_bytes = 100 * 200 * sizeof(double);
static_assert(ab_bytes == 160'000 && plan.peak_temporary_elements() * sizeof(double) == 800);

using host = Kokkos::DefaultHostExecutionSpace;  // filled element by element below

template <std::size_t R, std::size_t K>
ordo::matrix<double, R, K, host> random_small_integers(std::mt19937& rng, std::vector<std::int64_t>& copy) {
  // Integers in [-3, 3]: every sum below is an integer far below 2^53, so double arithmetic is
  // exact in any order and both orders must agree bit for bit.
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

struct orders_result {
  double left_microseconds, right_microseconds, planned_microseconds;  // medians
  std::size_t mismatches;  // entries where an order differs from the integer product
};

// (AB)C and A(BC) by hand and a * b * c as ordo plans it, on random small integers (seed 1),
// each timed as the median of `repetitions` runs and checked entry by entry.
inline orders_result evaluate_both_orders(int repetitions) {
  std::mt19937 rng(1);
  std::vector<std::int64_t> ai, bi, ci;
  const auto a = random_small_integers<100, 5>(rng, ai);
  const auto b = random_small_integers<5, 200>(rng, bi);
  const auto c = random_small_integers<200, 20>(rng, ci);

  ordo::matrix<double, 100, 200, host> ab(ordo::uninitialized);
  ordo::matrix<double, 100, 20, host> r_left(ordo::uninitialized);
  ordo::matrix<double, 5, 20, host> bc(ordo::uninitialized);
  ordo::matrix<double, 100, 20, host> r_right(ordo::uninitialized);
  ordo::matrix<double, 100, 20, host> r_planned(ordo::uninitialized);
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
  static_assert(decltype(expression)::order() == "(A1(A2A3))");
  static_assert(decltype(expression)::cost() == b_then_a);
  const auto planned = [&] {
    r_planned = expression;
    Kokkos::fence();
  };
  left_first();
  right_first();
  planned();
  orders_result result{};
  result.left_microseconds = median_time<std::micro>(left_first, repetitions);
  result.right_microseconds = median_time<std::micro>(right_first, repetitions);
  result.planned_microseconds = median_time<std::micro>(planned, repetitions);

  // Oracle: the product in 64-bit integers by a plain triple loop, (AB)C order.
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
  for (std::size_t i = 0; i < 100; ++i) {
    for (std::size_t j = 0; j < 20; ++j) {
      const double want = static_cast<double>(reference[i * 20 + j]);
      if (r_left(i, j) != want || r_right(i, j) != want || r_planned(i, j) != want) ++result.mismatches;
    }
  }
  return result;
}

// The whole answer, as q01_chain_order prints it; returns whether every check held.
inline bool demonstrate() {
  std::printf("Question 1: A is 100x5, B is 5x200, C is 200x20. Which order for ABC?\n\n");
  std::printf("(AB)C: 100*5*200 + 100*200*20 = %7llu multiplications = %9llu FLOPs\n",
              static_cast<unsigned long long>(ab_then_c), static_cast<unsigned long long>(2 * ab_then_c));
  std::printf("A(BC): 5*200*20 + 100*5*20    = %7llu multiplications = %9llu FLOPs\n",
              static_cast<unsigned long long>(b_then_a), static_cast<unsigned long long>(2 * b_then_a));
  std::printf("ordo's compile-time plan: %.*s, %.1fx fewer multiplications\n",
              static_cast<int>(plan.order().size()), plan.order().data(),
              static_cast<double>(ab_then_c) / static_cast<double>(b_then_a));
  std::printf("why: AB is a 100x200 intermediate (%llu bytes of double), BC only 5x20 (%llu bytes);\n"
              "     the cheap order never forms the big one.\n",
              static_cast<unsigned long long>(ab_bytes),
              static_cast<unsigned long long>(plan.peak_temporary_elements() * sizeof(double)));
  std::printf("note: the often quoted \"1,000,000 vs 50,000\" is wrong: 1,000,000 counts FLOPs of (AB)C,\n"
              "      and A(BC) is 30,000 multiplications or 60,000 FLOPs, never 50,000 (static_assert).\n\n");

  const orders_result r = evaluate_both_orders(301);
  std::printf("measured on %s (double, median of 301 runs):\n", host::name());
  std::printf("  (AB)C written by hand  %8.1f us\n", r.left_microseconds);
  std::printf("  A(BC) written by hand  %8.1f us  (%.1fx faster than (AB)C)\n", r.right_microseconds,
              r.left_microseconds / r.right_microseconds);
  std::printf("  a * b * c, ordo's plan %8.1f us\n", r.planned_microseconds);
  std::printf("all three results equal an integer triple loop in all 2000 entries: %s\n",
              r.mismatches == 0 ? "yes" : "NO");
  return expect(r.mismatches == 0, "both orders and a * b * c must equal the integer product");
}

}  // namespace ordo_examples::q01
