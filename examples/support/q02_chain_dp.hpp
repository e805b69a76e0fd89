// Question 2: how do you order the product A1 A2 ... An?
//
// The matrix-chain dynamic program (CLRS 3rd ed., section 15.2):
//   m[i][j] = min over i <= k < j of m[i][k] + m[k+1][j] + d[i-1] d[k] d[j],   m[i][i] = 0,
// filled by increasing chain length, with the minimizing k kept in s[i][j] to read the tree back.
// The example checks its size and work with closed forms, the published CLRS instance, and a
// 1,000-matrix chain planned at run time by the DP and by Hu and Shing's O(n log n) algorithm.
// Used by q02_chain_dp.cpp and the tour.
#pragma once

#include "harness.hpp"

#include <ordo/core/chain.hpp>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

namespace ordo_examples::q02 {

// Entries of m that the DP fills: every (i, j) with 1 <= i <= j <= n.
constexpr std::uint64_t table_entries(std::uint64_t n) { return n * (n + 1) / 2; }

// Triples (i, k, j) with i <= k < j: each is one candidate split, one add and compare.
// Closed form: the sum over chain lengths L of (n - L + 1)(L - 1) = (n^3 - n) / 6.
constexpr std::uint64_t split_candidates(std::uint64_t n) { return (n * n * n - n) / 6; }

// The same number counted the slow way, as the DP's three loops visit them: the oracle for the
// closed form.
constexpr std::uint64_t count_split_candidates(std::uint64_t n) {
  std::uint64_t count = 0;
  for (std::uint64_t length = 2; length <= n; ++length) {
    for (std::uint64_t i = 1; i + length - 1 <= n; ++i) {
      for (std::uint64_t k = i; k < i + length - 1; ++k) ++count;
    }
  }
  return count;
}

// Catalan number C(k) by C(k+1) = C(k) * 2(2k+1) / (k+2), exact in 64 bits for k <= 30.
constexpr std::uint64_t catalan(std::uint64_t k) {
  std::uint64_t c = 1;
  for (std::uint64_t i = 0; i < k; ++i) c = c * 2 * (2 * i + 1) / (i + 2);
  return c;
}

// The number of binary trees with n leaves, counted by the recursion that enumerates them
// (choose the root's split, multiply the counts of both sides): an oracle for catalan(n - 1).
constexpr std::uint64_t count_trees(std::size_t n) {
  std::array<std::uint64_t, 21> trees{};
  trees[1] = 1;
  for (std::size_t leaves = 2; leaves <= n; ++leaves) {
    for (std::size_t left = 1; left < leaves; ++left) trees[leaves] += trees[left] * trees[leaves - left];
  }
  return trees[n];
}

static_assert(table_entries(6) == 21 && split_candidates(6) == 35);
static_assert(split_candidates(6) == count_split_candidates(6));
static_assert(split_candidates(20) == count_split_candidates(20) && split_candidates(20) == 1330);
static_assert(split_candidates(30) == count_split_candidates(30) && split_candidates(30) == 4495);
static_assert(split_candidates(60) == count_split_candidates(60));
static_assert(catalan(5) == 42 && count_trees(6) == 42);
static_assert(catalan(19) == 1'767'263'190 && count_trees(20) == catalan(19));

// CLRS figure 15.5: dims 30,35,15,5,10,20,25.
inline constexpr std::array<std::size_t, 7> clrs{30, 35, 15, 5, 10, 20, 25};
inline constexpr auto clrs_plan = ordo::plan_chain(clrs);
static_assert(clrs_plan.cost() == 15'125);
static_assert(clrs_plan.order() == "((A1(A2A3))((A4A5)A6))");
// The root's cost as CLRS computes it: m[1][3] + m[4][6] + d0 d3 d6 = 7875 + 2500 + 30*5*25.
static_assert(ordo::chain_tables(clrs).cost(1, 3) == 7875 && ordo::chain_tables(clrs).cost(4, 6) == 3500);
static_assert(7875 + 3500 + 30 * 5 * 25 == 15'125);
static_assert(ordo::chain_tables(clrs).split(1, 6) == 3 && ordo::chain_tables(clrs).split(4, 6) == 5);
static_assert(ordo::chain_tables(clrs).cost(2, 5) == 7125);

// Textbook DP with the recurrence above, written independently of ordo (plain loops, 64-bit
// costs): the oracle for the 1,000-matrix chain. m[i][j] is kept twice (row i and, mirrored, row
// j) so that the inner loop reads both contiguously.
inline std::uint64_t textbook_dp_cost(const std::vector<std::size_t>& d) {
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

// log10 of C(k) = (2k)! / (k! (k+1)!), for counts far beyond 64 bits.
inline double log10_catalan(double k) {
  return (std::lgamma(2 * k + 1) - std::lgamma(k + 1) - std::lgamma(k + 2)) / std::log(10.0);
}

struct thousand_matrices {
  std::uint64_t dp, hu_shing, textbook, left_to_right;  // costs in multiplications
  double dp_milliseconds, hu_shing_milliseconds, textbook_milliseconds;
  bool agree() const { return dp == hu_shing && dp == textbook; }
};

// 1,000 matrices with random dims (uniform in [1, 1000], seed 2): too long for any enumeration,
// easy for the DP and easier still for Hu-Shing, both checked against the textbook DP.
inline thousand_matrices plan_a_thousand_matrices() {
  std::mt19937_64 rng(2);
  std::uniform_int_distribution<std::size_t> dim(1, 1000);
  std::vector<std::size_t> dims(1001);
  for (std::size_t& d : dims) d = dim(rng);
  thousand_matrices r{};
  auto start = std::chrono::steady_clock::now();
  const auto dp = ordo::plan_chain(dims, ordo::planner::dynamic_programming);
  r.dp_milliseconds = milliseconds_since(start);
  r.dp = dp.cost();
  r.left_to_right = dp.left_to_right_cost();
  start = std::chrono::steady_clock::now();
  r.hu_shing = ordo::plan_chain(dims, ordo::planner::hu_shing).cost();
  r.hu_shing_milliseconds = milliseconds_since(start);
  start = std::chrono::steady_clock::now();
  r.textbook = textbook_dp_cost(dims);
  r.textbook_milliseconds = milliseconds_since(start);
  return r;
}

// The whole answer, as q02_chain_dp prints it; returns whether every check held.
inline bool demonstrate() {
  std::printf("Question 2: how do you order A1 A2 ... An?\n\n");
  std::printf("Dynamic program (CLRS 15.2): m[i][j] = min_k m[i][k] + m[k+1][j] + d[i-1] d[k] d[j]\n");
  std::printf("table: n(n+1)/2 costs and splits (O(n^2) memory); work: (n^3 - n)/6 candidate splits (O(n^3));\n");
  std::printf("trying every order instead means C(n-1) trees (Catalan):\n\n");
  std::printf("%6s %14s %18s %26s\n", "n", "table entries", "split candidates", "trees C(n-1)");
  for (const std::uint64_t n : std::array<std::uint64_t, 6>{3, 6, 10, 15, 20, 30}) {
    std::printf("%6llu %14llu %18llu %26llu\n", static_cast<unsigned long long>(n),
                static_cast<unsigned long long>(table_entries(n)), static_cast<unsigned long long>(split_candidates(n)),
                static_cast<unsigned long long>(catalan(n - 1)));
  }

  std::printf("\nCLRS instance, dims 30,35,15,5,10,20,25: cost %llu, order %.*s (checked by static_assert)\n",
              static_cast<unsigned long long>(clrs_plan.cost()), static_cast<int>(clrs_plan.order().size()),
              clrs_plan.order().data());
  const ordo::chain_tables tables(clrs);
  std::printf("m[i][j], row i = 1..5, j = 1..6 (numpy's test_dynamic_programming_logic has the same table):\n");
  for (std::size_t i = 1; i <= 5; ++i) {
    std::printf("  ");
    for (std::size_t j = 1; j <= 6; ++j) {
      std::printf("%7llu", static_cast<unsigned long long>(j < i ? 0 : tables.cost(i, j)));
    }
    std::printf("\n");
  }

  const thousand_matrices r = plan_a_thousand_matrices();
  std::printf("\n1,000 matrices, dims uniform in [1, 1000] (seed 2), planned at run time:\n");
  std::printf("  %llu split candidates for the DP, against 10^%.0f trees\n",
              static_cast<unsigned long long>(split_candidates(1000)), log10_catalan(999));
  std::printf("  ordo DP (O(n^3))           cost %llu  in %8.2f ms\n", static_cast<unsigned long long>(r.dp),
              r.dp_milliseconds);
  std::printf("  ordo Hu-Shing (O(n log n)) cost %llu  in %8.2f ms\n", static_cast<unsigned long long>(r.hu_shing),
              r.hu_shing_milliseconds);
  std::printf("  textbook DP, no ordo code  cost %llu  in %8.2f ms\n", static_cast<unsigned long long>(r.textbook),
              r.textbook_milliseconds);
  std::printf("  left to right would cost   %llu (%.0fx the optimum)\n", static_cast<unsigned long long>(r.left_to_right),
              static_cast<double>(r.left_to_right) / static_cast<double>(r.dp));
  std::printf("  all three agree on the optimal cost: %s\n", r.agree() ? "yes" : "NO");
  return expect(r.agree(), "ordo's DP and Hu-Shing must find the textbook DP's optimum");
}

}  // namespace ordo_examples::q02
