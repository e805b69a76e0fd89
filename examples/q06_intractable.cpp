// Question 6: what does "intractable" mean?
//
// A problem is intractable when no polynomial-time algorithm for it is known (NP-hard problems
// such as the travelling salesman problem). An exponential algorithm alone does not make a problem
// intractable: ordering a matrix chain by trying every parenthesization takes Catalan-many trees,
// C(n-1) ~ 4^n / (n^1.5 sqrt(pi)), yet the dynamic program solves the same problem in O(n^3).
// This example shows both growths side by side, and times the brute force against the DP.
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

namespace {

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
constexpr auto catalan = catalan_numbers();

// Published values, OEIS A000108.
static_assert(catalan[1] == 1 && catalan[2] == 2 && catalan[3] == 5 && catalan[4] == 14 && catalan[5] == 42);
static_assert(catalan[10] == 16'796);
static_assert(catalan[11] == 58'786);
static_assert(catalan[20] == 6'564'120'420);
static_assert(catalan[30] == 3'814'986'502'092'304);
// The closed form C(k) = (2k)! / (k! (k+1)!) = binom(2k, k) / (k + 1), e.g. for k = 10:
static_assert(catalan[10] == 184'756 / 11);

// The DP's work: (n^3 - n) / 6 candidate splits for n matrices (see q02_chain_dp).
constexpr std::uint64_t dp_splits(std::uint64_t n) { return (n * n * n - n) / 6; }
static_assert(dp_splits(30) == 4495);
// The exponential overtakes the cubic early: more trees than DP splits from 6 matrices on.
static_assert(catalan[4] < dp_splits(5) && catalan[5] > dp_splits(6));

// Calls visit(cost) once for every parenthesization of A(first) .. A(last): the trees of a range
// are all the ways to join a tree of the left part and a tree of the right part at some split k.
// Deliberately without memoization or pruning: this is the brute force that the DP replaces.
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

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main() {
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
  double seconds_per_tree = 0;
  for (std::size_t n = 2; n <= 12; ++n) {
    std::vector<std::size_t> dims(n + 1);
    for (std::size_t& d : dims) d = dim(rng);
    // Best of three runs: the machine is shared, and the least disturbed run shows the growth.
    std::uint64_t trees = 0, best = 0, dp_cost = 0;
    double t_brute = 1e300, t_dp = 1e300;
    for (int repetition = 0; repetition < 3; ++repetition) {
      auto start = std::chrono::steady_clock::now();
      trees = 0;
      best = UINT64_MAX;
      for_each_tree(dims, 0, n - 1, [&](std::uint64_t cost) {
        ++trees;
        best = cost < best ? cost : best;
      });
      t_brute = std::min(t_brute, seconds_since(start));
      start = std::chrono::steady_clock::now();
      dp_cost = ordo::plan_chain(dims, ordo::planner::dynamic_programming).cost();
      t_dp = std::min(t_dp, seconds_since(start));
    }
    const bool agree = trees == catalan[n - 1] && best == dp_cost;
    all_agree = all_agree && agree;
    seconds_per_tree = t_brute / static_cast<double>(trees);
    std::printf("%4zu %10llu %11.3f ms %11.1f ns %11.3f ms %12s\n", n, static_cast<unsigned long long>(trees), 1e3 * t_brute,
                1e9 * seconds_per_tree, 1e3 * t_dp, agree ? "yes" : "NO");
  }
  const double years = seconds_per_tree * static_cast<double>(catalan[29]) / (365.25 * 24 * 3600);
  std::printf("\nat the n = 12 rate per tree, brute force over 30 matrices (C(29) = %llu trees) would take\n"
              "%.0f years (more in fact: deeper trees cost more each); the DP needs 4495 splits.\n"
              "Matrix-chain ordering is therefore tractable: only the naive algorithm is exponential.\n",
              static_cast<unsigned long long>(catalan[29]), years);
  return all_agree ? 0 : 1;
}
