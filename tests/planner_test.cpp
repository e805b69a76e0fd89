// The chain planners: Hu–Shing (exact, O(n log n)), the O(n) approximation and the automatic
// choice, against the DP, exhaustive search and independently recomputed trees.
#include <ordo/core/chain.hpp>

#include "support/brute_force_chain.hpp"
#include "support/tree_text.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

std::vector<std::size_t> as_vector(std::span<const std::size_t> dims) { return {dims.begin(), dims.end()}; }

// Checks that a plan's products form one binary tree over A1..An and returns its cost, recomputed
// from the dims and the ranges alone in 128 bits; returns nothing on any inconsistency.
template <class Plan>
std::optional<ordo_test::wide_cost> tree_cost(const Plan& plan, const std::vector<std::size_t>& dims) {
  const std::size_t n = dims.size() - 1;
  if (plan.matrices() != n || plan.products().size() != n - 1) return std::nullopt;
  std::vector<std::pair<std::size_t, std::size_t>> range(2 * n - 1);
  std::vector<bool> used(2 * n - 1, false);
  for (std::size_t i = 0; i < n; ++i) range[i] = {i, i};
  ordo_test::wide_cost total = 0;
  for (std::size_t p = 0; p + 1 < n; ++p) {
    const auto& step = plan.products()[p];
    if (step.left >= n + p || step.right >= n + p || used[step.left] || used[step.right]) return std::nullopt;
    used[step.left] = used[step.right] = true;
    const auto [lf, ll] = range[step.left];
    const auto [rf, rl] = range[step.right];
    if (ll + 1 != rf || step.first != lf || step.last != rl) return std::nullopt;
    if (step.rows != dims[lf] || step.inner != dims[rf] || step.cols != dims[rl + 1]) return std::nullopt;
    range[n + p] = {lf, rl};
    total += ordo_test::wide_cost{dims[lf]} * dims[rf] * dims[rl + 1];
  }
  if (range[2 * n - 2] != std::pair<std::size_t, std::size_t>{0, n - 1}) return std::nullopt;
  return total;
}

std::uint64_t dp_cost(const std::vector<std::size_t>& dims) {
  return ordo::plan_chain(dims, ordo::planner::dynamic_programming).cost();
}

// Draws chains: most short, a few long; dims often from tiny ranges, so that ties abound.
struct chain_source {
  std::mt19937_64 rng;
  std::vector<std::size_t> next(std::size_t longest) {
    const std::size_t n = 1 + rng() % longest;
    // The benchmark's distributions: small (many ties), [1, 10^3], [1, 10^5] and [1, 10^6] (whose
    // sums pass 64 bits: Hu-Shing's 128-bit path), and powers of two up to 2^20 (ties again).
    static constexpr std::array<std::size_t, 9> ranges{2, 3, 4, 10, 100, 1000, 100'000, 1'000'000, 0};
    const std::size_t range = ranges[rng() % ranges.size()];
    std::vector<std::size_t> dims(n + 1);
    for (auto& d : dims) d = range == 0 ? std::size_t{1} << (rng() % 21) : 1 + rng() % range;
    if (rng() % 16 == 0) dims[rng() % dims.size()] = 0;
    return dims;
  }
};

constexpr std::size_t long_dim(std::size_t i) { return 1 + (i * 7919 + 13) % 97; }

template <std::size_t N>
constexpr std::array<std::size_t, N + 1> long_dims() {
  std::array<std::size_t, N + 1> dims{};
  for (std::size_t i = 0; i <= N; ++i) dims[i] = long_dim(i);
  return dims;
}

template <std::size_t... I>
constexpr std::uint64_t type_level_cost(std::index_sequence<I...>) {
  return ordo::chain_cost_v<ordo::shape<long_dim(I), long_dim(I + 1)>...>;
}
template <std::size_t... I>
auto type_level_tree(std::index_sequence<I...>) -> ordo::chain_tree_t<ordo::shape<long_dim(I), long_dim(I + 1)>...>;
template <std::size_t... I>
auto increasing_tree(std::index_sequence<I...>) -> ordo::chain_tree_t<ordo::shape<I + 1, I + 2>...>;
template <std::size_t... I>
constexpr std::string_view increasing_order(std::index_sequence<I...>) {
  return ordo::chain_order_v<ordo::shape<I + 1, I + 2>...>;
}

// "((((A1A2)A3)A4)...An)": what the left-deep tree of n matrices writes.
template <std::size_t N>
constexpr bool is_left_deep_order(std::string_view order) {
  std::size_t at = 0;
  for (std::size_t i = 0; i + 1 < N; ++i) {
    if (order[at++] != '(') return false;
  }
  for (std::size_t i = 1; i <= N; ++i) {
    if (order[at++] != 'A') return false;
    std::array<char, 20> digits{};
    std::size_t count = 0;
    for (std::size_t v = i; v != 0; v /= 10) digits[count++] = static_cast<char>('0' + v % 10);
    while (count > 0) {
      if (order[at++] != digits[--count]) return false;
    }
    if (i > 1 && order[at++] != ')') return false;
  }
  return at == order.size();
}

template <class Planner>
concept plannable_with = requires(const std::vector<std::size_t>& dims, Planner how) { ordo::plan_chain(dims, how); };

}  // namespace

TEST_CASE("Hu-Shing agrees with the DP on 10^4 random chains of up to 400 matrices") {
  chain_source source{std::mt19937_64{20260215}};
  int long_chains = 0, beat_left_to_right = 0, different_trees = 0;
  for (int trial = 0; trial < 10'000; ++trial) {
    const std::size_t longest = trial % 1000 == 0 ? 400 : trial % 100 == 0 ? 120 : trial % 10 == 0 ? 40 : 12;
    const std::vector<std::size_t> dims = source.next(longest);
    CAPTURE(dims);
    const auto dp = ordo::plan_chain(dims, ordo::planner::dynamic_programming);
    const auto hs = ordo::plan_chain(dims, ordo::planner::hu_shing);
    REQUIRE(hs.cost() == dp.cost());
    const auto recomputed = tree_cost(hs, dims);
    REQUIRE(recomputed.has_value());
    REQUIRE(*recomputed == hs.cost());
    ordo_test::wide_cost left_to_right = 0;
    for (std::size_t k = 1; k + 1 < dims.size(); ++k) left_to_right += ordo_test::wide_cost{dims[0]} * dims[k] * dims[k + 1];
    if (left_to_right < std::numeric_limits<std::uint64_t>::max()) CHECK(hs.left_to_right_cost() == left_to_right);
    CHECK(hs.peak_temporary_elements() == ordo_test::simulated_peak_elements(hs));
    CHECK(ordo_test::workspace_layout_is_valid(hs));
    // The summary ordo-plan --cost-only prints, from the splits alone: the plan's numbers and height.
    const auto summary = ordo::detail::summarize_tree(dims, ordo::detail::planned_splits(dims, ordo::planner::hu_shing));
    CHECK(summary.cost == hs.cost());
    CHECK(summary.peak_elements == ordo_test::simulated_peak_elements(hs));
    std::vector<std::size_t> height(2 * dims.size(), 0);
    for (std::size_t p = 0; p < hs.products().size(); ++p) {
      const auto& step = hs.products()[p];
      height[hs.matrices() + p] = 1 + std::max(height[step.left], height[step.right]);
    }
    CHECK(summary.height == height[hs.root()]);
    different_trees += hs.order() != dp.order();
    long_chains += dims.size() > 100;
    beat_left_to_right += hs.cost() < left_to_right;
  }
  // The premise, counted: long chains were drawn (27 of more than 100 matrices with this seed),
  // and on most chains (7265) the optimum is cheaper than left to right, so that agreeing with the
  // DP says more than "both kept the input order".
  CHECK(long_chains >= 20);
  CHECK(beat_left_to_right > 5'000);
  // Ties are frequent: the planners often pick different trees of the same cost.
  CHECK(different_trees > 100);

  // A tree far deeper than the summary's first stack (64 frames): dims 1, 2, ..., 301 make left to
  // right the optimum, a left spine of 299 products above A1 A2.
  std::vector<std::size_t> rising(301);
  for (std::size_t i = 0; i < rising.size(); ++i) rising[i] = i + 1;
  const auto deep = ordo::detail::summarize_tree(rising, ordo::detail::planned_splits(rising, ordo::planner::hu_shing));
  std::uint64_t left_deep_cost = 0;
  for (std::size_t k = 1; k + 1 < rising.size(); ++k) left_deep_cost += rising[k] * rising[k + 1];
  CHECK(deep.height == 299);
  CHECK(deep.cost == left_deep_cost);
}

// Each exact arithmetic Hu-Shing may run on (64-bit sums; 128-bit sums with 256-bit cross
// products; 256- and 512-bit numbers), forced on the same chains: the optimum's cost, whatever
// the dims would have chosen.
template <class Number>
std::uint64_t hu_shing_cost_with(const std::vector<std::size_t>& dims) {
  const ordo::detail::relabelled_polygon w = ordo::detail::relabel_polygon(dims);
  ordo::detail::scratch_array<ordo::detail::polygon_triangle> triangles(dims.size() - 2);
  const auto vertices = static_cast<ordo::detail::polygon_index>(dims.size());
  return ordo::detail::hu_shing_triangulator<Number>(w, vertices).triangulate(triangles.data());
}

TEST_CASE("Hu-Shing's exact arithmetics each give the DP's optimum on 2000 random chains") {
  chain_source source{std::mt19937_64{20261126}};
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<std::size_t> dims = source.next(trial % 100 == 0 ? 120 : 16);
    if (dims.size() < 4) continue;          // n = 1, 2: no triangulation to choose
    for (auto& d : dims) d = d == 0 ? 1 : d;  // a zero weight takes the fan shortcut instead
    CAPTURE(dims);
    std::uint64_t optimum = 0;
    try {
      optimum = dp_cost(dims);
    } catch (const ordo::chain_overflow_error&) {
      continue;
    }
    const ordo_test::wide_cost largest = *std::max_element(dims.begin(), dims.end());
    const bool sums_fit_64_bits = 4 * (dims.size() + 2) * largest * largest * largest <
                                  std::numeric_limits<std::uint64_t>::max();
    if (sums_fit_64_bits) CHECK(hu_shing_cost_with<std::uint64_t>(dims) == optimum);
#if defined(__SIZEOF_INT128__)
    CHECK(hu_shing_cost_with<ordo::detail::uint128>(dims) == optimum);
#endif
    CHECK(hu_shing_cost_with<ordo::detail::wide_unsigned<4>>(dims) == optimum);
    CHECK(hu_shing_cost_with<ordo::detail::wide_unsigned<8>>(dims) == optimum);
  }
}

TEST_CASE("Hu-Shing matches exhaustive search for n <= 9, overflowing costs included") {
  std::mt19937_64 rng(77);
  const std::vector<std::pair<std::size_t, std::size_t>> ranges{
      {1, 2}, {0, 3}, {1, 40}, {1, 5000}, {std::size_t{1} << 20, std::size_t{1} << 23}, {1, std::size_t{1} << 40}};
  for (const auto& range : ranges) {
    std::uniform_int_distribution<std::size_t> dim(range.first, range.second);
    for (std::size_t n = 1; n <= 9; ++n) {
      for (int trial = 0; trial < 10; ++trial) {
        std::vector<std::size_t> dims(n + 1);
        for (auto& d : dims) d = dim(rng);
        CAPTURE(dims);
        const auto oracle = ordo_test::brute_force_optimum(dims);
        if (oracle.cost >= std::numeric_limits<std::uint64_t>::max()) {
          CHECK_THROWS_AS(ordo::plan_chain(dims, ordo::planner::hu_shing), ordo::chain_overflow_error);
          continue;
        }
        const auto hs = ordo::plan_chain(dims, ordo::planner::hu_shing);
        CHECK(hs.cost() == static_cast<std::uint64_t>(oracle.cost));
        CHECK(tree_cost(hs, dims) == oracle.cost);
      }
    }
  }
}

TEST_CASE("degenerate shapes: equal, monotone, one minimum, one maximum, zeros, n = 1, 2, 3") {
  using shape_maker = std::vector<std::size_t> (*)(std::size_t);
  const std::vector<std::pair<std::string, shape_maker>> shapes{
      {"all equal", [](std::size_t n) { return std::vector<std::size_t>(n + 1, 7); }},
      {"increasing", [](std::size_t n) { std::vector<std::size_t> d(n + 1); for (std::size_t i = 0; i <= n; ++i) d[i] = i + 1; return d; }},
      {"decreasing", [](std::size_t n) { std::vector<std::size_t> d(n + 1); for (std::size_t i = 0; i <= n; ++i) d[i] = 2 * (n - i) + 3; return d; }},
      {"one minimum", [](std::size_t n) { std::vector<std::size_t> d(n + 1); for (std::size_t i = 0; i <= n; ++i) d[i] = 2 + (i > n / 2 ? i - n / 2 : n / 2 - i); return d; }},
      {"one maximum", [](std::size_t n) { std::vector<std::size_t> d(n + 1); for (std::size_t i = 0; i <= n; ++i) d[i] = 2 + n - (i > n / 2 ? i - n / 2 : n / 2 - i); return d; }},
      {"zero inside", [](std::size_t n) { std::vector<std::size_t> d(n + 1, 9); d[(n + 1) / 2] = 0; return d; }},
      {"zero first", [](std::size_t n) { std::vector<std::size_t> d(n + 1); for (std::size_t i = 0; i <= n; ++i) d[i] = i % 5 + 1; d[0] = 0; return d; }},
      {"zero last", [](std::size_t n) { std::vector<std::size_t> d(n + 1); for (std::size_t i = 0; i <= n; ++i) d[i] = i % 5 + 1; d[n] = 0; return d; }},
      {"all zero", [](std::size_t n) { return std::vector<std::size_t>(n + 1, 0); }},
      {"ones and one large", [](std::size_t n) { std::vector<std::size_t> d(n + 1, 1); d[n / 3] = 1000; return d; }},
      {"alternating", [](std::size_t n) { std::vector<std::size_t> d(n + 1); for (std::size_t i = 0; i <= n; ++i) d[i] = i % 2 == 0 ? 1 : 10; return d; }},
  };
  for (const auto& shape : shapes) {
    for (const std::size_t n : {1u, 2u, 3u, 4u, 5u, 8u, 9u, 33u, 100u, 257u}) {
      const std::vector<std::size_t> dims = shape.second(n);
      const std::string& name = shape.first;  // clang 14 cannot capture structured bindings
      CAPTURE(name);
      CAPTURE(n);
      const std::uint64_t exact = n <= 9 ? static_cast<std::uint64_t>(ordo_test::brute_force_optimum(dims).cost) : dp_cost(dims);
      const auto hs = ordo::plan_chain(dims, ordo::planner::hu_shing);
      CHECK(hs.cost() == exact);
      CHECK(tree_cost(hs, dims) == exact);
      const auto approx = ordo::plan_chain(dims, ordo::planner::approximate);
      CHECK(tree_cost(approx, dims) == approx.cost());
      CHECK(approx.cost() >= exact);
      CHECK(ordo_test::wide_cost{approx.cost()} * 1000 <= ordo_test::wide_cost{exact} * 1155);
      CHECK(ordo::plan_chain(dims).cost() == exact);
    }
  }
  // Strictly increasing dims have one optimum, the left-deep tree: every planner finds it.
  const std::vector<std::size_t> up{1, 2, 3, 4, 5, 6};
  CHECK(ordo::plan_chain(up, ordo::planner::hu_shing).order() == "((((A1A2)A3)A4)A5)");
  CHECK(ordo::plan_chain(up, ordo::planner::approximate).order() == "((((A1A2)A3)A4)A5)");
  CHECK(ordo::plan_chain(std::vector<std::size_t>{4, 2}, ordo::planner::hu_shing).order() == "A1");
  CHECK(ordo::plan_chain(std::vector<std::size_t>{4, 2, 3}, ordo::planner::hu_shing).order() == "(A1A2)");
}

TEST_CASE("the approximation stays within Hu and Shing's bound of 15.5% above the optimum") {
  chain_source source{std::mt19937_64{1981}};
  double worst = 1.0;
  for (int trial = 0; trial < 4000; ++trial) {
    const std::vector<std::size_t> dims = source.next(trial % 50 == 0 ? 300 : 14);
    CAPTURE(dims);
    const std::uint64_t exact = dp_cost(dims);
    const auto approx = ordo::plan_chain(dims, ordo::planner::approximate);
    REQUIRE(tree_cost(approx, dims) == approx.cost());
    CHECK(approx.cost() >= exact);
    // 2 / sqrt(3) = 1.1547...
    CHECK(ordo_test::wide_cost{approx.cost()} * 10'000 <= ordo_test::wide_cost{exact} * 11'547);
    if (exact > 0) worst = std::max(worst, static_cast<double>(approx.cost()) / static_cast<double>(exact));
  }
  MESSAGE("worst ratio of the approximation to the optimum: " << worst);
  // The pentagon that comes within 10^-6 of the bound. On the polygon of weights m, m, p, p, m
  // (p > m, V0 the smallest) Chin's test 1/w0 + 1/wt < 1/ws + 1/wc never holds: the sweep's first
  // check compares 2/m with 1/m + 1/p, its other two compare equal sums. So nothing is cut off and
  // the result is the fan at V0, (((A1A2)A3)A4), of cost m (m p + p^2 + p m). Of the pentagon's 5
  // triangulations the fans at V1 and V4 are optimal, m (p^2 + p m + m^2). The ratio
  // (p^2 + 2pm) / (p^2 + pm + m^2) is largest, 2/sqrt(3), at p/m = 1 + sqrt(3) (Hu and Shing 1981);
  // m = 100, p = 273 give 129129/111829 = 1.1547003..., while 2/sqrt(3) = 1.1547005...
  const std::vector<std::size_t> pentagon{100, 100, 273, 273, 100};
  const auto optimum = static_cast<std::uint64_t>(ordo_test::brute_force_optimum(pentagon).cost);
  CHECK(optimum == 11'182'900);
  const auto near_bound = ordo::plan_chain(pentagon, ordo::planner::approximate);
  CHECK(near_bound.order() == "(((A1A2)A3)A4)");
  CHECK(tree_cost(near_bound, pentagon) == near_bound.cost());
  CHECK(near_bound.cost() * 111'829 == optimum * 129'129);
}

TEST_CASE("planner tags: automatic is the DP up to the limit and Hu-Shing beyond") {
  static_assert(ordo::chain_planner<ordo::planner::hu_shing_t>);
  static_assert(!ordo::chain_planner<int>);
  static_assert(plannable_with<ordo::planner::approximate_t>);
  static_assert(!plannable_with<int>);

  chain_source source{std::mt19937_64{5}};
  for (int trial = 0; trial < 300; ++trial) {
    const std::vector<std::size_t> dims = source.next(trial % 3 == 0 ? 80 : ordo::planner::automatic_dp_limit);
    const std::size_t n = dims.size() - 1;
    const auto automatic = ordo::plan_chain(dims);
    const auto expected = n <= ordo::planner::automatic_dp_limit
                              ? ordo::plan_chain(dims, ordo::planner::dynamic_programming)
                              : ordo::plan_chain(dims, ordo::planner::hu_shing);
    CAPTURE(dims);
    CHECK(automatic.order() == expected.order());
    REQUIRE(automatic.products().size() == expected.products().size());
    for (std::size_t p = 0; p < automatic.products().size(); ++p) CHECK(automatic.products()[p] == expected.products()[p]);
  }
  // chain_tables keeps the DP's tables whatever the planner.
  const ordo::chain_tables tables(std::vector<std::size_t>{30, 35, 15, 5, 10, 20, 25});
  CHECK(tables.cost(1, 6) == ordo::plan_chain(std::vector<std::size_t>{30, 35, 15, 5, 10, 20, 25}, ordo::planner::hu_shing).cost());
}

TEST_CASE("costs beyond 64 bits: Hu-Shing's wide arithmetic, and overflow reported") {
  constexpr std::size_t big = std::size_t{1} << 32;
  CHECK_THROWS_AS(ordo::plan_chain(std::vector<std::size_t>{big, big, big, big}, ordo::planner::hu_shing), ordo::chain_overflow_error);
  // Fan costs of 2^96 arise inside the algorithm while the optimum, 2 * 2^32, fits.
  const auto p = ordo::plan_chain(std::vector<std::size_t>{big, 1, big, 1, big, 1}, ordo::planner::hu_shing);
  CHECK(p.cost() == dp_cost({big, 1, big, 1, big, 1}));
  CHECK(tree_cost(p, {big, 1, big, 1, big, 1}) == p.cost());
  // Dims of 2^50: sums up to 2^150 inside the algorithm, past the 128-bit path, on 512-bit numbers.
  constexpr std::size_t huge = std::size_t{1} << 50;
  const std::vector<std::size_t> alternating{1, huge, 1, huge, 1, huge, 1};
  const auto h = ordo::plan_chain(alternating, ordo::planner::hu_shing);
  CHECK(h.cost() == ordo_test::brute_force_optimum(alternating).cost);
  CHECK(h.cost() == 3 * huge + 2);
  CHECK(tree_cost(h, alternating) == h.cost());
  // Random chains of small dims and a few near 2^42, so that the optimum often fits in 64 bits
  // while the algorithm's sums need 512-bit numbers: against the DP's saturating 64-bit search.
  std::mt19937_64 rng(3030);
  int fitting = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<std::size_t> dims(2 + rng() % 11);
    for (auto& d : dims) d = rng() % 3 == 0 ? (std::size_t{1} << 42) + rng() % 1024 : 1 + rng() % 8;
    CAPTURE(dims);
    std::optional<std::uint64_t> optimum;
    try {
      optimum = dp_cost(dims);
    } catch (const ordo::chain_overflow_error&) {
      CHECK_THROWS_AS(ordo::plan_chain(dims, ordo::planner::hu_shing), ordo::chain_overflow_error);
      continue;
    }
    const auto wide = ordo::plan_chain(dims, ordo::planner::hu_shing);
    CHECK(wide.cost() == *optimum);
    CHECK(tree_cost(wide, dims) == wide.cost());
    ++fitting;
  }
  CHECK(fitting > 500);
  // The approximation's test multiplies four dims: 2^90 here.
  constexpr std::size_t large = std::size_t{1} << 30;
  const auto q = ordo::plan_chain(std::vector<std::size_t>{1, large, 1, large, large, 1}, ordo::planner::approximate);
  CHECK(tree_cost(q, {1, large, 1, large, large, 1}) == q.cost());
  CHECK(ordo_test::wide_cost{q.cost()} * 10'000 <= ordo_test::wide_cost{dp_cost({1, large, 1, large, large, 1})} * 11'547);
}

TEST_CASE("a 256-matrix chain planned at compile time equals the DP's optimum at run time") {
  constexpr auto dims = long_dims<256>();
  constexpr auto hs = ordo::plan_chain(dims, ordo::planner::hu_shing);
  static_assert(hs.cost() == 534'156);
  static_assert(type_level_cost(std::make_index_sequence<256>{}) == 534'156);
  static_assert(ordo::plan_chain(dims, ordo::planner::approximate).cost() == 534'277);
  const auto dp = ordo::plan_chain(as_vector(dims), ordo::planner::dynamic_programming);
  CHECK(dp.cost() == hs.cost());
  const auto run = ordo::plan_chain(as_vector(dims), ordo::planner::hu_shing);
  CHECK(run.order() == hs.order());
  CHECK(tree_cost(run, as_vector(dims)) == 534'156);
  using tree = decltype(type_level_tree(std::make_index_sequence<256>{}));
  CHECK(ordo_test::tree_text<tree>() == hs.order());
}

TEST_CASE("a 1024-matrix chain planned at compile time, as a value and as a type") {
  constexpr auto dims = long_dims<1024>();
  constexpr auto hs = ordo::plan_chain(dims);  // automatic: Hu-Shing
  // 2'144'741 is the DP's optimum (bench/plan_chain computes it in a fraction of a second).
  static_assert(hs.cost() == 2'144'741);
  static_assert(type_level_cost(std::make_index_sequence<1024>{}) == 2'144'741);
  const auto run = ordo::plan_chain(as_vector(dims), ordo::planner::hu_shing);
  CHECK(run.cost() == 2'144'741);
  CHECK(run.order() == hs.order());
  CHECK(tree_cost(run, as_vector(dims)) == 2'144'741);
  CHECK(ordo_test::workspace_layout_is_valid(run));

  // Increasing dims: the optimum is left-deep, 1023 products deep, past g++'s template depth
  // of 900 if the tree type were built by recursion on its nodes.
  using deep = decltype(increasing_tree(std::make_index_sequence<1024>{}));
  static_assert(std::is_same_v<deep::right, ordo::operand<1023>>);
  static_assert(std::is_same_v<deep::left::right, ordo::operand<1022>>);
  static_assert(is_left_deep_order<1024>(increasing_order(std::make_index_sequence<1024>{})));
  std::vector<std::size_t> up(1025);
  for (std::size_t i = 0; i <= 1024; ++i) up[i] = i + 1;
  CHECK(is_left_deep_order<1024>(ordo::plan_chain(up).order()));
}

// Diagonal operands (issue 28): the structured DP against exhaustive search with its own cost
// rules (support/brute_force_chain.hpp), and the products' kinds against the operands' structure.
namespace {

using ordo::operand_structure;

// An MLP's backward pass g0 = W1^T D1 W2^T D2 W3^T G for widths 32, 64, 48, 10 and a batch of B
// gradients (G is 10 x B; D1, D2 are the activations' derivatives).
template <std::size_t Batch>
constexpr const auto& mlp_backward = ordo::chain_plan_v<ordo::shape<32, 64>, ordo::diagonal_shape<64>, ordo::shape<64, 48>,
                                                        ordo::diagonal_shape<48>, ordo::shape<48, 10>, ordo::shape<10, Batch>>;
constexpr std::array<operand_structure, 6> mlp_structures{operand_structure::general, operand_structure::diagonal,
                                                          operand_structure::general, operand_structure::diagonal,
                                                          operand_structure::general, operand_structure::general};

}  // namespace

TEST_CASE("diagonal factors: the MLP backward pass, planned at compile time and at run time") {
  // One gradient: right to left, every matrix read once (480 + 3072 + 2048 multiplications) and
  // each diagonal applied to a vector (48 + 64); no order can touch less.
  constexpr auto& one = ordo::chain_plan_v<ordo::shape<32, 64>, ordo::diagonal_shape<64>, ordo::shape<64, 48>,
                                           ordo::diagonal_shape<48>, ordo::shape<48, 10>, ordo::shape<10, 1>>;
  static_assert(one.cost() == 480 + 48 + 3072 + 64 + 2048);
  static_assert(one.order() == "(A1(A2(A3(A4(A5A6)))))");
  static_assert(one.products()[0].kind == ordo::product_kind::general);     // W3^T g
  static_assert(one.products()[1].kind == ordo::product_kind::scale_rows);  // D2 (W3^T g)
  const std::vector<std::size_t> dims_one{32, 64, 64, 48, 48, 10, 1};
  const auto run_one = ordo::plan_chain(dims_one, mlp_structures);
  CHECK(run_one.cost() == one.cost());
  CHECK(run_one.order() == one.order());

  // A batch of 1000: the weights and diagonals are multiplied first, G once at the end. Treated as
  // dense n x n matrices the diagonals would cost the plan 64^2 and 48^2 per column instead.
  constexpr auto& batch = mlp_backward<1000>;
  const std::vector<std::size_t> dims_batch{32, 64, 64, 48, 48, 10, 1000};
  const std::vector<bool> diagonal{false, true, false, true, false, false};
  const auto oracle = ordo_test::brute_force_structured_optimum(dims_batch, diagonal);
  CHECK(batch.cost() == oracle.cost);
  CHECK(batch.order() == oracle.order);
  static_assert(batch.order().ends_with("A6)"));
  static_assert(batch.cost() < ordo::plan_chain(std::array<std::size_t, 7>{32, 64, 64, 48, 48, 10, 1000}).cost());
  const auto run_batch = ordo::plan_chain(dims_batch, mlp_structures);
  CHECK(run_batch.cost() == batch.cost());
  CHECK(run_batch.order() == batch.order());
}

TEST_CASE("diagonal factors: every split of 3000 random chains against exhaustive search") {
  std::mt19937_64 rng(2828);
  std::uniform_int_distribution<std::size_t> length(1, 7), extent(1, 12), coin(0, 4);
  for (int trial = 0; trial < 3000; ++trial) {
    const std::size_t n = length(rng);
    std::vector<std::size_t> dims(n + 1);
    std::vector<bool> diagonal(n);
    std::vector<operand_structure> structures(n);
    dims[0] = extent(rng);
    for (std::size_t i = 0; i < n; ++i) {
      diagonal[i] = coin(rng) < 2;  // about 40 % diagonal, so that runs of diagonals occur
      structures[i] = diagonal[i] ? operand_structure::diagonal : operand_structure::general;
      dims[i + 1] = diagonal[i] ? dims[i] : extent(rng);
    }
    CAPTURE(trial);
    const auto plan = ordo::plan_chain(dims, structures);
    const auto oracle = ordo_test::brute_force_structured_optimum(dims, diagonal);
    CHECK(plan.cost() == oracle.cost);
    CHECK(plan.order() == oracle.order);
    // Each product's kind from its factors' structure: a factor is diagonal when all its operands are.
    const auto all_diagonal = [&](std::size_t node) {
      if (node < n) return static_cast<bool>(diagonal[node]);
      const auto& p = plan.product_at(node);
      for (std::size_t i = p.first; i <= p.last; ++i) {
        if (!diagonal[i]) return false;
      }
      return true;
    };
    ordo_test::wide_cost summed = 0;
    for (const auto& step : plan.products()) {
      const bool l = all_diagonal(step.left), r = all_diagonal(step.right);
      const auto expected = l && r ? ordo::product_kind::diagonal
                            : l    ? ordo::product_kind::scale_rows
                            : r    ? ordo::product_kind::scale_cols
                                   : ordo::product_kind::general;
      CHECK(step.kind == expected);
      summed += step.multiplications();
    }
    CHECK(summed == oracle.cost);
    CHECK(plan.peak_temporary_elements() == ordo_test::simulated_peak_elements(plan, diagonal));
    CHECK(ordo_test::workspace_layout_is_valid(plan, diagonal));
    // ((A1 A2) A3) ... costed by the same rules, one product at a time.
    ordo_test::wide_cost left_to_right = 0;
    bool prefix_diagonal = n > 0 && diagonal[0];
    for (std::size_t k = 1; k < n; ++k) {
      const ordo_test::wide_cost rows = dims[0], inner = dims[k], cols = dims[k + 1];
      left_to_right += prefix_diagonal && diagonal[k] ? rows
                       : (prefix_diagonal || diagonal[k]) ? rows * cols
                                                          : rows * inner * cols;
      prefix_diagonal = prefix_diagonal && diagonal[k];
    }
    CHECK(plan.left_to_right_cost() == left_to_right);
  }
}

TEST_CASE("diagonal factors: structures that do not describe the chain are refused") {
  const std::vector<std::size_t> dims{2, 3, 4};
  CHECK_THROWS_WITH_AS(static_cast<void>(ordo::plan_chain(dims, std::vector{operand_structure::diagonal,
                                                                               operand_structure::general})),
                       "ordo::plan_chain(dims, structures): A1 is diagonal but 2x3 (a diagonal matrix is square)",
                       ordo::chain_argument_error);
  CHECK_THROWS_WITH_AS(static_cast<void>(ordo::plan_chain(dims, std::vector{operand_structure::general})),
                       "ordo::plan_chain(dims, structures): 2 matrices but 1 structures", ordo::chain_argument_error);
  // Without a diagonal the general planner runs: the same plan as plan_chain(dims).
  const std::vector<std::size_t> general{10, 30, 5, 60};
  const auto plain = ordo::plan_chain(general);
  const auto structured = ordo::plan_chain(general, std::vector(3, operand_structure::general));
  CHECK(structured.order() == plain.order());
  CHECK(structured.cost() == plain.cost());
}
