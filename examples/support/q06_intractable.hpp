// Question 6: what does "intractable" mean?
//
// A problem is intractable when no polynomial-time algorithm for it is known (NP-hard problems
// such as the travelling salesman problem). An exponential algorithm alone does not make a problem
// intractable: ordering a matrix chain by trying every parenthesization takes Catalan-many trees,
// C(n-1) ~ 4^n / (n^1.5 sqrt(pi)), yet the dynamic program solves the same problem in O(n^3).
// This example shows both growths side by side, and times the brute force against the DP.
// Used by q06_intractable.cpp and the tour.
#pragma once

#include "harness.hpp"

#include <ordo/core/chain.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <numbers>
#include <random>
#include <span>
#include <vector>

namespace ordo_examples::q06 {

// Catalan numbers by Segner's recurrence C(k+1) = sum C(i) C(k-i): the number of trees with
// k + 1 leaves is the sum over the root's split of (left trees) x (right trees). C(33) is the
// last one below 2^64.
constexpr std::array<std::uint64_t, 34> catalan_numbers() {
  std::array<std::uint64_t, 34> c{};
  c[0] = 1;
  for (std::size_t k = 0; k + 1 < c.size(); ++k) {
    for (std::size_t i = 0; i <= k; ++i) c[k + 1] += c[i] * c[k - i];
  }
  return c;
}
inline constexpr auto catalan = catalan_numbers();

// Published values, OEIS A000108.
static_assert(catalan[1] == 1 && catalan[2] == 2 && catalan[3] == 5 && catalan[4] == 14 && catalan[5] == 42);
static_assert(catalan[10] == 16'796);
static_assert(catalan[11] == 58'786);
static_assert(catalan[19] == 1'767'263'190 && catalan[20] == 6'564'120'420);
static_assert(catalan[29] == 1'002'242'216'651'368 && catalan[30] == 3'814'986'502'092'304);
// The closed form C(k) = (2k)! / (k! (k+1)!) = binom(2k, k) / (k + 1), e.g. for k = 10:
static_assert(catalan[10] == 184'756 / 11);

// The DP's work: (n^3 - n) / 6 candidate splits for n matrices (see q02_chain_dp).
constexpr std::uint64_t dp_splits(std::uint64_t n) { return (n * n * n - n) / 6; }
static_assert(dp_splits(20) == 1330 && dp_splits(30) == 4495);
// The exponential overtakes the cubic early: more trees than DP splits from 6 matrices on.
static_assert(catalan[4] < dp_splits(5) && catalan[5] > dp_splits(6));

// Calls visit(cost) once for every parenthesization of A(first) .. A(last): the trees of a range
// are all the ways to join a tree of the left part and a tree of the right part at some split k.
// Deliberately without memoization or pruning: this is the brute force that the DP replaces.
inline void for_each_tree(std::span<const std::size_t> d, std::size_t first, std::size_t last,
                          const std::function<void(std::uint64_t)>& visit) {
  if (first == last) return visit(0);
  for (std::size_t k = first; k < last; ++k) {
    const std::uint64_t join = std::uint64_t{d[first]} * d[k + 1] * d[last + 1];
    for_each_tree(d, first, k, [&](std::uint64_t left) {
      for_each_tree(d, k + 1, last, [&](std::uint64_t right) { visit(left + right + join); });
    });
  }
}

struct brute_force_result {
  std::uint64_t trees, best, dp_cost;
  double brute_force_milliseconds, dp_milliseconds;  // best of three runs
  // The brute force must visit C(n-1) trees and find the DP's cost.
  bool agrees(std::size_t matrices) const { return trees == catalan[matrices - 1] && best == dp_cost; }
};

// Every tree of the chain with these dims against ordo's DP. Best of three runs: the machine is
// shared, and the least disturbed run shows the growth.
inline brute_force_result brute_force_against_dp(const std::vector<std::size_t>& dims) {
  brute_force_result r{0, 0, 0, 1e300, 1e300};
  for (int repetition = 0; repetition < 3; ++repetition) {
    auto start = std::chrono::steady_clock::now();
    r.trees = 0;
    r.best = UINT64_MAX;
    for_each_tree(dims, 0, dims.size() - 2, [&](std::uint64_t cost) {
      ++r.trees;
      r.best = cost < r.best ? cost : r.best;
    });
    r.brute_force_milliseconds = std::min(r.brute_force_milliseconds, milliseconds_since(start));
    start = std::chrono::steady_clock::now();
    r.dp_cost = ordo::plan_chain(dims, ordo::planner::dynamic_programming).cost();
    r.dp_milliseconds = std::min(r.dp_milliseconds, milliseconds_since(start));
  }
  return r;
}

// Years that the brute force over 30 matrices would take at the given rate.
inline double years_for_30_matrices(double milliseconds_per_tree) {
  return milliseconds_per_tree / 1e3 * static_cast<double>(catalan[29]) / (365.25 * 24 * 3600);
}

// The whole answer, as q06_intractable prints it; returns whether every check held.
inline bool demonstrate() {
  std::printf("Question 6: what does \"intractable\" mean?\n\n");
  std::printf("No polynomial-time algorithm is known. Trying every order of a matrix chain is exponential,\n"
              "C(n-1) trees for n matrices; the dynamic program is polynomial, (n^3 - n)/6 splits:\n\n");
  std::printf("%4s %22s %12s %22s %16s\n", "n", "trees C(n-1)", "DP splits", "trees / DP splits",
              "C(n-1) / approx");
  for (std::size_t n = 1; n <= 30; ++n) {
    const std::uint64_t trees = catalan[n - 1];
    const double k = static_cast<double>(n - 1);
    const double asymptotic = std::pow(4.0, k) / (std::pow(k, 1.5) * std::sqrt(std::numbers::pi));
    const std::uint64_t splits = dp_splits(n);
    std::printf("%4zu %22llu %12llu %22.4g", n, static_cast<unsigned long long>(trees),
                static_cast<unsigned long long>(splits),
                splits == 0 ? 0.0 : static_cast<double>(trees) / static_cast<double>(splits));
    if (n > 1) std::printf(" %16.3f", static_cast<double>(trees) / asymptotic);
    std::printf("\n");
  }
  std::printf("(approx = 4^(n-1) / ((n-1)^1.5 sqrt(pi)); the ratio tends to 1)\n\n");

  // Brute force against the DP on random chains: the minimum over every tree must be the DP's cost.
  std::mt19937 rng(6);
  std::uniform_int_distribution<std::size_t> dim(1, 100);
  std::printf("%4s %10s %14s %14s %14s %12s\n", "n", "trees", "brute force", "per tree", "ordo DP", "same cost");
  bool all_agree = true;
  double milliseconds_per_tree = 0;
  for (std::size_t n = 2; n <= 12; ++n) {
    std::vector<std::size_t> dims(n + 1);
    for (std::size_t& d : dims) d = dim(rng);
    const brute_force_result r = brute_force_against_dp(dims);
    all_agree = expect(r.agrees(n), "the brute force must count C(n-1) trees and find the DP's cost") && all_agree;
    milliseconds_per_tree = r.brute_force_milliseconds / static_cast<double>(r.trees);
    std::printf("%4zu %10llu %11.3f ms %11.1f ns %11.3f ms %12s\n", n, static_cast<unsigned long long>(r.trees),
                r.brute_force_milliseconds, 1e6 * milliseconds_per_tree, r.dp_milliseconds,
                r.agrees(n) ? "yes" : "NO");
  }
  std::printf("\nat the n = 12 rate per tree, brute force over 30 matrices (C(29) = %llu trees) would take\n"
              "%.0f years (more in fact: deeper trees cost more each); the DP needs 4495 splits.\n"
              "Matrix-chain ordering is therefore tractable: only the naive algorithm is exponential.\n",
              static_cast<unsigned long long>(catalan[29]), years_for_30_matrices(milliseconds_per_tree));
  return all_agree;
}

}  // namespace ordo_examples::q06
