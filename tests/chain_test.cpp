#include <ordo/core/chain.hpp>

#include "support/brute_force_chain.hpp"
#include "support/cpu_requirements.hpp"
#include "support/tree_text.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {

std::vector<std::size_t> as_vector(std::span<const std::size_t> dims) {
  return {dims.begin(), dims.end()};
}

// Costs of a plan's tree recomputed from its products alone.
template <class Plan>
ordo_test::wide_cost recomputed_cost(const Plan& plan) {
  ordo_test::wide_cost total = 0;
  for (const auto& step : plan.products()) total += ordo_test::wide_cost{step.rows} * step.inner * step.cols;
  return total;
}

// The tree's shapes are consistent: each product's factors have the shapes it claims.
template <class Plan>
bool products_conform(const Plan& plan) {
  const auto dims = plan.dims();
  const auto shape_of_node = [&](std::size_t node) -> std::pair<std::size_t, std::size_t> {
    if (plan.is_operand(node)) return {dims[node], dims[node + 1]};
    const auto& p = plan.product_at(node);
    return {p.rows, p.cols};
  };
  for (std::size_t p = 0; p < plan.products().size(); ++p) {
    const auto& step = plan.products()[p];
    if (step.left >= plan.matrices() + p || step.right >= plan.matrices() + p) return false;
    const auto [lr, lc] = shape_of_node(step.left);
    const auto [rr, rc] = shape_of_node(step.right);
    if (lr != step.rows || lc != step.inner || rr != step.inner || rc != step.cols) return false;
  }
  return true;
}

constexpr std::array<std::size_t, 7> clrs_dims{30, 35, 15, 5, 10, 20, 25};

// Extents read through a volatile: the compiler cannot fold the plan of these, so checks on it run
// the planner's run-time code.
template <std::size_t N>
std::array<std::size_t, N> runtime_dims(const std::array<std::size_t, N>& dims) {
  std::array<std::size_t, N> out{};
  for (std::size_t i = 0; i < N; ++i) {
    volatile std::size_t d = dims[i];
    out[i] = d;
  }
  return out;
}

}  // namespace

TEST_CASE("the seed chain: A(BC) costs 30,000 multiplications, (AB)C 500,000") {
  constexpr auto p = ordo::plan_chain(std::array<std::size_t, 4>{100, 5, 200, 20});
  static_assert(p.cost() == 30'000);
  static_assert(p.left_to_right_cost() == 500'000);
  static_assert(p.order() == std::string_view{"(A1(A2A3))"});
  static_assert(p.matrices() == 3);
  static_assert(p.flops() == 60'000);
  // Only B*C (5x20, 100 elements) is an intermediate.
  static_assert(p.peak_temporary_elements() == 100);
  static_assert(p.products()[0].rows == 5 && p.products()[0].cols == 20 && p.products()[0].workspace_offset == 0);

  const std::vector<std::size_t> dims{100, 5, 200, 20};
  const auto q = ordo::plan_chain(dims);
  CHECK(q.cost() == 30'000);
  CHECK(q.left_to_right_cost() == 500'000);
  CHECK(q.order() == "(A1(A2A3))");
  CHECK(q.matrices() == 3);
  CHECK(q.flops() == 60'000);
  CHECK(q.peak_temporary_elements() == 100);
  // 100*5*200 + 100*200*20 and 5*200*20 + 100*5*20, by hand.
  CHECK(q.left_to_right_cost() == 100 * 5 * 200 + 100 * 200 * 20);
  CHECK(q.cost() == 5 * 200 * 20 + 100 * 5 * 20);
}

// order_view's own comparisons (core/order_view.hpp), against std::string_view's as the oracle,
// at compile time and at run time.
constexpr bool order_views_compare_as_string_views() {
  constexpr char padded[16] = "(A1A2)";  // a literal in a larger array: compared up to its NUL
  const auto plan = ordo::plan_chain({10, 20, 30});
  const ordo::order_view order = plan.order();
  const std::string_view texts[] = {"(A1A2)", "(A1A3)", "(A1A2(", "[A1A2)", "(A1A2", "(A1A2))", "", "((A1A2)"};
  bool agree = (order == padded) == (std::string_view(order) == std::string_view(padded));
  for (const std::string_view t : texts) {
    const bool expected = std::string_view(order) == t;
    agree = agree && (order == t) == expected && (t == order) == expected && (order != t) == !expected;
  }
  return agree && order == "(A1A2)" && "(A1A2)" == order && order != "(A2A1)" && order != "(A1A2" &&
         !(order == "(A1A2))") && ordo::order_view("") == "";
}
static_assert(order_views_compare_as_string_views());

TEST_CASE("a plan's order compares as a std::string_view, at compile time and at run time") {
  CHECK(order_views_compare_as_string_views());
  const auto plan = ordo::plan_chain({30, 35, 15, 5, 10, 20, 25});
  CHECK(plan.order() == std::string("((A1(A2A3))((A4A5)A6))"));
  CHECK(plan.order() != std::string("((A1(A2A3))((A4A5)A7))"));
  static_assert(std::is_convertible_v<ordo::order_view, std::string_view>);
}

TEST_CASE("dims as a braced list or any integral container; a negative dim is refused by name") {
  static_assert(ordo::plan_chain({100, 5, 200, 20}).cost() == 5 * 200 * 20 + 100 * 5 * 20);
  CHECK(ordo::plan_chain({100, 5, 200, 20}).order() == "(A1(A2A3))");
  CHECK(ordo::plan_chain(std::vector<int>{100, 5, 200, 20}).cost() == 30'000);
  CHECK(ordo::plan_chain(std::array<long, 4>{100, 5, 200, 20}).cost() == 30'000);
  CHECK(ordo::plan_chain(std::vector<unsigned char>{10, 20, 30}).cost() == 10 * 20 * 30);
  CHECK_THROWS_WITH_AS(ordo::plan_chain({100, -5, 200}),
                       "ordo::plan_chain(dims): d1 is -5; a dim is a matrix extent, never negative",
                       ordo::chain_argument_error);
  CHECK_THROWS_WITH_AS(ordo::plan_chain(std::vector<int>{7}),
                       "ordo::plan_chain(dims) requires at least 2 dims: d0..dn describe n >= 1 matrices",
                       ordo::chain_argument_error);
}

TEST_CASE("the type-level planner gives the same plan as a tree type") {
  using A = ordo::shape<100, 5>;
  using B = ordo::shape<5, 200>;
  using C = ordo::shape<200, 20>;
  static_assert(std::is_same_v<ordo::chain_tree_t<A, B, C>,
                               ordo::product<ordo::operand<0>, ordo::product<ordo::operand<1>, ordo::operand<2>>>>);
  static_assert(ordo::chain_cost_v<A, B, C> == 30'000);
  static_assert(ordo::chain_order_v<A, B, C> == std::string_view{"(A1(A2A3))"});
  static_assert(ordo::chain_flops_v<A, B, C> == 60'000);
  static_assert(ordo::chain_peak_temporary_elements_v<A, B, C> == 100);
  static_assert(std::is_same_v<ordo::chain_tree_t<A>, ordo::operand<0>>);
  static_assert(ordo::chain_cost_v<A> == 0 && ordo::chain_order_v<A> == "A1");

  // The same planner at run time, on extents the compiler cannot see: chain_plan_v is
  // plan_chain(std::array) evaluated at compile time.
  const auto q = ordo::plan_chain(runtime_dims<4>({100, 5, 200, 20}));
  CHECK(q.cost() == ordo::chain_cost_v<A, B, C>);
  CHECK(q.cost() == 30'000);
  CHECK(q.order() == ordo::chain_order_v<A, B, C>);
  CHECK(q.flops() == ordo::chain_flops_v<A, B, C>);
  CHECK(q.peak_temporary_elements() == ordo::chain_peak_temporary_elements_v<A, B, C>);
  CHECK(q.products().size() == ordo::chain_plan_v<A, B, C>.products().size());
  // The tree type, written out at run time, is the order the run-time planner finds.
  CHECK(ordo_test::tree_text<ordo::chain_tree_t<A, B, C>>() == q.order());
  CHECK(ordo_test::tree_text<ordo::chain_tree_t<A, B, C>>() == "(A1(A2A3))");
}

namespace {
template <std::size_t R, std::size_t C>
struct tagged_matrix {
  using shape_type = ordo::shape<R, C>;
};
}  // namespace

TEST_CASE("the CLRS chain 30,35,15,5,10,20,25 with its full m and s tables") {
  // CLRS 3rd ed. figure 15.5; numpy's test_dynamic_programming_logic checks the same tables.
  static constexpr std::uint64_t m[5][6] = {{0, 15750, 7875, 9375, 11875, 15125}, {0, 0, 2625, 4375, 7125, 10500},
                                     {0, 0, 0, 750, 2500, 5375},           {0, 0, 0, 0, 1000, 3500},
                                     {0, 0, 0, 0, 0, 5000}};
  static constexpr std::size_t s[5][6] = {{0, 1, 1, 3, 3, 3}, {0, 0, 2, 3, 3, 3}, {0, 0, 0, 3, 3, 3},
                                   {0, 0, 0, 0, 4, 5}, {0, 0, 0, 0, 0, 5}};
  constexpr auto tables_match = [] {
    const ordo::chain_tables t(clrs_dims);
    for (std::size_t i = 1; i <= 5; ++i) {
      for (std::size_t j = i + 1; j <= 6; ++j) {
        if (t.cost(i, j) != m[i - 1][j - 1] || t.split(i, j) != s[i - 1][j - 1]) return false;
      }
    }
    return t.cost(1, 1) == 0 && t.matrices() == 6;
  };
  static_assert(tables_match());
  constexpr auto p = ordo::plan_chain(clrs_dims);
  static_assert(p.cost() == 15125);
  static_assert(p.order() == "((A1(A2A3))((A4A5)A6))");

  CHECK(tables_match());
  const std::vector<std::size_t> dims(clrs_dims.begin(), clrs_dims.end());
  const ordo::chain_tables t(dims);
  for (std::size_t i = 1; i <= 5; ++i) {
    for (std::size_t j = i + 1; j <= 6; ++j) {
      CHECK(t.cost(i, j) == m[i - 1][j - 1]);
      CHECK(t.split(i, j) == s[i - 1][j - 1]);
    }
  }
  const auto q = ordo::plan_chain(dims);
  CHECK(q.cost() == 15125);
  CHECK(q.order() == "((A1(A2A3))((A4A5)A6))");

  using tree = ordo::chain_tree_t<tagged_matrix<30, 35>, tagged_matrix<35, 15>, tagged_matrix<15, 5>,
                                  tagged_matrix<5, 10>, tagged_matrix<10, 20>, tagged_matrix<20, 25>>;
  using o0 = ordo::operand<0>;
  using o1 = ordo::operand<1>;
  using o2 = ordo::operand<2>;
  using o3 = ordo::operand<3>;
  using o4 = ordo::operand<4>;
  using o5 = ordo::operand<5>;
  using expected = ordo::product<ordo::product<o0, ordo::product<o1, o2>>,
                                 ordo::product<ordo::product<o3, o4>, o5>>;
  static_assert(std::is_same_v<tree, expected>);
  // At run time: the tree type spelled out equals the run-time planner's order on the same dims,
  // and the type-level plan equals a plan of extents read at run time.
  CHECK(ordo_test::tree_text<tree>() == q.order());
  CHECK(ordo_test::tree_text<expected>() == "((A1(A2A3))((A4A5)A6))");
  const auto r = ordo::plan_chain(runtime_dims<7>({30, 35, 15, 5, 10, 20, 25}));
  CHECK(r.cost() == ordo::chain_cost_v<tagged_matrix<30, 35>, tagged_matrix<35, 15>, tagged_matrix<15, 5>,
                                       tagged_matrix<5, 10>, tagged_matrix<10, 20>, tagged_matrix<20, 25>>);
  CHECK(r.order() == ordo_test::tree_text<tree>());
}

TEST_CASE("published optima") {
  // CLRS exercise 15.2-1.
  constexpr auto a = ordo::plan_chain(std::array<std::size_t, 7>{5, 10, 3, 12, 5, 50, 6});
  static_assert(a.cost() == 2010 && a.order() == "((A1A2)((A3A4)(A5A6)))");
  constexpr auto b = ordo::plan_chain(std::array<std::size_t, 4>{10, 100, 5, 50});
  static_assert(b.cost() == 7500 && b.order() == "((A1A2)A3)");
  constexpr auto c = ordo::plan_chain(std::array<std::size_t, 5>{40, 20, 30, 10, 30});
  static_assert(c.cost() == 26000);
  // Balanced: no left-deep order reaches 21.
  constexpr auto d = ordo::plan_chain(std::array<std::size_t, 5>{1, 10, 1, 10, 1});
  static_assert(d.cost() == 21 && d.order() == "((A1A2)(A3A4))");

  CHECK(ordo::plan_chain(as_vector(a.dims())).cost() == 2010);
  CHECK(ordo::plan_chain(as_vector(a.dims())).order() == "((A1A2)((A3A4)(A5A6)))");
  CHECK(ordo::plan_chain(as_vector(b.dims())).cost() == 7500);
  CHECK(ordo::plan_chain(as_vector(c.dims())).cost() == 26000);
  CHECK(ordo::plan_chain(as_vector(d.dims())).order() == "((A1A2)(A3A4))");
}

TEST_CASE("ties take the smallest split: equal dims nest to the right") {
  constexpr auto p = ordo::plan_chain(std::array<std::size_t, 5>{7, 7, 7, 7, 7});
  static_assert(p.order() == "(A1(A2(A3A4)))");
  static_assert(p.cost() == 3 * 343);
  // Three equal squares tie ((AB)C and A(BC) both cost 2 * 343): the smallest split is A(BC).
  constexpr auto q = ordo::plan_chain(std::array<std::size_t, 4>{7, 7, 7, 7});
  static_assert(q.cost() == 2 * 343 && q.order() == "(A1(A2A3))");
  // Not a tie: (AB)C costs 24, A(BC) 36.
  constexpr auto r = ordo::plan_chain(std::array<std::size_t, 4>{2, 3, 2, 3});
  static_assert(r.cost() == 2 * 3 * 2 + 2 * 2 * 3 && r.order() == "((A1A2)A3)");

  CHECK(ordo::plan_chain(std::vector<std::size_t>{7, 7, 7, 7, 7}).order() == "(A1(A2(A3A4)))");
  CHECK(ordo::plan_chain(std::vector<std::size_t>{7, 7, 7, 7}).order() == "(A1(A2A3))");
}

TEST_CASE("three operands: every tie and every other case as numpy's multi_dot decides them") {
  // numpy/linalg/linalg.py, _multi_dot_three: cost1 = cost((AB)C), cost2 = cost(A(BC)),
  // "if cost1 < cost2: return dot(dot(A, B), C) else: return dot(A, dot(B, C))": a tie goes to
  // A(BC). Every dims vector in [1, 7]^4, at run time and through the static planner's path.
  int ties = 0;
  for (std::size_t a0 = 1; a0 <= 7; ++a0) {
    for (std::size_t a1 = 1; a1 <= 7; ++a1) {
      for (std::size_t b1 = 1; b1 <= 7; ++b1) {
        for (std::size_t c1 = 1; c1 <= 7; ++c1) {
          const std::size_t cost1 = a0 * a1 * b1 + a0 * b1 * c1;
          const std::size_t cost2 = a1 * b1 * c1 + a0 * a1 * c1;
          ties += cost1 == cost2;
          const std::string numpy = cost1 < cost2 ? "((A1A2)A3)" : "(A1(A2A3))";
          CAPTURE(a0);
          CAPTURE(a1);
          CAPTURE(b1);
          CAPTURE(c1);
          CHECK(ordo::plan_chain(std::vector<std::size_t>{a0, a1, b1, c1}).order() == numpy);
          CHECK(ordo::plan_chain(std::vector<std::size_t>{a0, a1, b1, c1}, ordo::planner::dynamic_programming).order() ==
                numpy);
        }
      }
    }
  }
  CHECK(ties == 99);  // the premise: 99 ties in the range (counted by a Python enumeration of the same formulas)
}

TEST_CASE("a single matrix and zero-sized dimensions") {
  constexpr auto one = ordo::plan_chain(std::array<std::size_t, 2>{4, 9});
  static_assert(one.cost() == 0 && one.order() == "A1" && one.products().empty());
  static_assert(one.peak_temporary_elements() == 0 && one.left_to_right_cost() == 0);
  constexpr auto zero = ordo::plan_chain(std::array<std::size_t, 4>{3, 0, 5, 2});
  static_assert(zero.cost() == 0);
  static_assert(zero.left_to_right_cost() == 3 * 0 * 5 + 3 * 5 * 2);

  const auto r = ordo::plan_chain(std::vector<std::size_t>{4, 9});
  CHECK(r.cost() == 0);
  CHECK(r.order() == "A1");
  CHECK(r.root() == 0);
  const auto z = ordo::plan_chain(std::vector<std::size_t>{3, 0, 5, 2, 0});
  CHECK(z.cost() == 0);
  CHECK(z.order() == ordo_test::brute_force_optimum({3, 0, 5, 2, 0}).order);
}

TEST_CASE("bad input: empty chains throw, costs beyond 64 bits never wrap") {
  CHECK_THROWS_AS(ordo::plan_chain(std::vector<std::size_t>{}), ordo::chain_argument_error);
  CHECK_THROWS_AS(ordo::plan_chain(std::vector<std::size_t>{5}), ordo::chain_argument_error);
  CHECK_THROWS_AS(ordo::chain_tables(std::vector<std::size_t>{5}), ordo::chain_argument_error);

  constexpr std::size_t big = std::size_t{1} << 32;
  CHECK_THROWS_AS(ordo::plan_chain(std::vector<std::size_t>{big, big, big, big}), ordo::chain_overflow_error);
  CHECK_THROWS_AS(ordo::plan_chain(std::array<std::size_t, 3>{big, big, big}), ordo::chain_overflow_error);

  // The optimum fits (2 * 2^32) while left to right needs 2^65.
  const auto p = ordo::plan_chain(std::vector<std::size_t>{big, 1, big, 1});
  CHECK(p.cost() == 2 * big);
  CHECK(p.order() == "(A1(A2A3))");
  CHECK_THROWS_AS((void)p.left_to_right_cost(), ordo::chain_overflow_error);

  // cost = 2^63 fits, 2 * cost does not.
  const std::size_t d = std::size_t{1} << 21;
  const auto f = ordo::plan_chain(std::vector<std::size_t>{d, d, d});
  CHECK(f.cost() == std::uint64_t{1} << 63);
  CHECK_THROWS_AS((void)f.flops(), ordo::chain_overflow_error);

  // Products of zero inner size cost nothing, but their results may be huge.
  const auto e = ordo::plan_chain(std::vector<std::size_t>{big, 0, big, 0, big});
  CHECK(e.cost() == 0);
  CHECK_THROWS_AS((void)e.peak_temporary_elements(), ordo::chain_overflow_error);

  const ordo::chain_tables t(std::vector<std::size_t>{2, 3, 4});
  CHECK_THROWS_AS((void)t.cost(0, 1), ordo::chain_argument_error);
  CHECK_THROWS_AS((void)t.cost(2, 3), ordo::chain_argument_error);
  CHECK_THROWS_AS((void)t.split(2, 2), ordo::chain_argument_error);
}

TEST_CASE("a run-time plan is a value: copies own their storage") {
  // The same plan in constant evaluation (clang 14 too) and at run time.
  static_assert(ordo::plan_chain({30, 35, 15, 5, 10, 20, 25}).order() == "((A1(A2A3))((A4A5)A6))");
  ordo::chain_plan<ordo::dynamic> copy = ordo::plan_chain({2, 3, 4});
  std::vector<ordo::planned_product> expected;
  {
    const auto original = ordo::plan_chain({30, 35, 15, 5, 10, 20, 25});
    ordo::chain_plan<ordo::dynamic> constructed = original;
    copy = constructed;
    expected.assign(original.products().begin(), original.products().end());
  }
  // The originals are gone; the copy still reads its own dims, products and order.
  CHECK(copy.cost() == 15'125);
  CHECK(copy.order() == "((A1(A2A3))((A4A5)A6))");
  CHECK(std::vector<std::size_t>(copy.dims().begin(), copy.dims().end()) ==
        std::vector<std::size_t>{30, 35, 15, 5, 10, 20, 25});
  REQUIRE(copy.products().size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(copy.products()[i].left == expected[i].left);
    CHECK(copy.products()[i].right == expected[i].right);
    CHECK(copy.products()[i].workspace_offset == expected[i].workspace_offset);
  }
  const auto& same = copy;
  copy = same;  // self-assignment keeps the plan
  CHECK(copy.order() == "((A1(A2A3))((A4A5)A6))");
}

TEST_CASE("the planner's errors are ordo::chain_error, a std::exception, with their whole message") {
  // Both kinds derive from chain_error and std::exception, and neither from the other.
  static_assert(std::is_base_of_v<std::exception, ordo::chain_error>);
  static_assert(std::is_base_of_v<ordo::chain_error, ordo::chain_argument_error>);
  static_assert(std::is_base_of_v<ordo::chain_error, ordo::chain_overflow_error>);
  static_assert(!std::is_base_of_v<ordo::chain_argument_error, ordo::chain_overflow_error>);
  static_assert(std::is_nothrow_copy_constructible_v<ordo::chain_error>);
  CHECK_THROWS_WITH_AS(ordo::plan_chain(std::vector<std::size_t>{1}),
                       "ordo::plan_chain(dims) requires at least 2 dims: d0..dn describe n >= 1 matrices",
                       std::exception);
  constexpr std::size_t big = std::size_t{1} << 32;
  CHECK_THROWS_WITH_AS(ordo::plan_chain(std::vector<std::size_t>{big, big, big}),
                       "ordo::plan_chain: the optimal cost (scalar multiplications) does not fit in 64 bits",
                       ordo::chain_error);
  // A negative dim is printed whole, the most negative of its type included.
  CHECK_THROWS_WITH_AS(ordo::plan_chain({10LL, std::numeric_limits<long long>::min(), 3LL}),
                       "ordo::plan_chain(dims): d1 is -9223372036854775808; a dim is a matrix extent, never negative",
                       ordo::chain_argument_error);
  // A copy keeps the text (it lives in the exception, not behind a pointer to the original), and
  // a message past the capacity is cut there, never overrun.
  std::string text;
  {
    const ordo::chain_overflow_error original(std::string(300, 'x'));
    const ordo::chain_error copy = original;
    text = copy.what();
  }
  CHECK(text == std::string(ordo::chain_error::message_capacity, 'x'));
}

TEST_CASE("brute force over all parenthesizations agrees for n <= 9") {
  std::mt19937_64 rng(20261122);
  // Narrow ranges force many ties; wide ones exercise the arithmetic; huge ones the overflow path.
  const std::vector<std::pair<std::size_t, std::size_t>> ranges{
      {1, 3}, {0, 4}, {1, 50}, {1, 2000}, {std::size_t{1} << 15, std::size_t{1} << 17},
      {std::size_t{1} << 20, std::size_t{1} << 23}};
  int checked = 0;
  for (const auto& [low, high] : ranges) {
    std::uniform_int_distribution<std::size_t> dim(low, high);
    for (std::size_t n = 1; n <= 9; ++n) {
      for (int trial = 0; trial < 12; ++trial) {
        std::vector<std::size_t> dims(n + 1);
        for (auto& x : dims) x = dim(rng);
        const auto oracle = ordo_test::brute_force_optimum(dims);
        CAPTURE(dims);
        if (oracle.cost > std::numeric_limits<std::uint64_t>::max() - 1) {
          CHECK_THROWS_AS(ordo::plan_chain(dims), ordo::chain_overflow_error);
          continue;
        }
        const auto plan = ordo::plan_chain(dims);
        CHECK(plan.cost() == static_cast<std::uint64_t>(oracle.cost));
        CHECK(plan.order() == oracle.order);
        CHECK(recomputed_cost(plan) == oracle.cost);
        CHECK(products_conform(plan));
        ordo_test::wide_cost left_to_right = 0;
        for (std::size_t k = 1; k < n; ++k) left_to_right += ordo_test::wide_cost{dims[0]} * dims[k] * dims[k + 1];
        if (left_to_right < std::numeric_limits<std::uint64_t>::max()) {
          CHECK(plan.left_to_right_cost() == static_cast<std::uint64_t>(left_to_right));
          CHECK(plan.cost() <= plan.left_to_right_cost());
        }
        CHECK(plan.peak_temporary_elements() == ordo_test::simulated_peak_elements(plan));
        CHECK(ordo_test::workspace_layout_is_valid(plan));
        ++checked;
      }
    }
  }
  CHECK(checked > 400);
}

TEST_CASE("the number of parenthesizations is the Catalan number C(n-1)") {
  const std::uint64_t expected[] = {1, 1, 2, 5, 14, 42, 132, 429, 1430};
  for (std::size_t n = 1; n <= 9; ++n) {
    CHECK(ordo_test::tree_count(std::vector<std::size_t>(n + 1, 2)) == expected[n - 1]);
    CHECK(ordo_test::catalan(n - 1) == expected[n - 1]);
  }
}

TEST_CASE("compile-time and run-time plans are identical, products included") {
  constexpr std::array<std::size_t, 13> dims{17, 3, 250, 40, 40, 9, 1000, 2, 77, 5, 5, 300, 8};
  constexpr auto fixed = ordo::plan_chain(dims);
  static_assert(fixed.matrices() == 12);
  const auto dynamic = ordo::plan_chain(std::vector<std::size_t>(dims.begin(), dims.end()));
  CHECK(fixed.cost() == dynamic.cost());
  CHECK(fixed.order() == dynamic.order());
  CHECK(fixed.peak_temporary_elements() == dynamic.peak_temporary_elements());
  REQUIRE(fixed.products().size() == dynamic.products().size());
  for (std::size_t p = 0; p < fixed.products().size(); ++p) CHECK(fixed.products()[p] == dynamic.products()[p]);
  const auto oracle = ordo_test::brute_force_optimum(std::vector<std::size_t>(dims.begin(), dims.end()));
  CHECK(fixed.cost() == static_cast<std::uint64_t>(oracle.cost));
  CHECK(fixed.order() == oracle.order);
}

namespace {
// Textbook CLRS recursion with memoization and 128-bit costs: no shared code with ordo's solver.
struct reference_chain {
  std::vector<std::size_t> dims;
  std::size_t n;
  std::vector<ordo_test::wide_cost> memo;
  std::vector<std::size_t> split;
  std::vector<bool> known;
  explicit reference_chain(std::vector<std::size_t> d)
      : dims(std::move(d)), n(dims.size() - 1), memo(n * n), split(n * n), known(n * n, false) {}
  ordo_test::wide_cost cost(std::size_t i, std::size_t j) {
    if (i == j) return 0;
    if (known[i * n + j]) return memo[i * n + j];
    ordo_test::wide_cost best = 0;
    std::size_t best_k = i;
    for (std::size_t k = i; k < j; ++k) {
      const ordo_test::wide_cost c =
          cost(i, k) + cost(k + 1, j) + ordo_test::wide_cost{dims[i]} * dims[k + 1] * dims[j + 1];
      if (k == i || c < best) best = c, best_k = k;
    }
    known[i * n + j] = true;
    split[i * n + j] = best_k;
    return memo[i * n + j] = best;
  }
};
}  // namespace

TEST_CASE("long chains agree with a textbook DP on every table entry, ties included") {
  std::mt19937_64 rng(7);
  const std::vector<std::pair<std::size_t, std::size_t>> ranges{{1, 3}, {1, 1000}, {0, 9}, {1u << 14, 1u << 16}};
  for (const auto& [low, high] : ranges) {
    for (std::size_t n : {5u, 17u, 64u, 203u}) {
      std::uniform_int_distribution<std::size_t> dim(low, high);
      std::vector<std::size_t> dims(n + 1);
      for (auto& x : dims) x = dim(rng);
      reference_chain ref(dims);
      const ordo::chain_tables tables(dims);
      bool all_equal = true;
      for (std::size_t i = 0; i < n && all_equal; ++i) {
        for (std::size_t j = i + 1; j < n; ++j) {
          const auto c = ref.cost(i, j);
          if (tables.cost(i + 1, j + 1) != static_cast<std::uint64_t>(c) ||
              tables.split(i + 1, j + 1) != ref.split[i * n + j] + 1) {
            all_equal = false;
            break;
          }
        }
      }
      const std::size_t smallest_dim = low;  // clang 14 cannot capture structured bindings
      CAPTURE(n);
      CAPTURE(smallest_dim);
      CHECK(all_equal);
      CHECK(ordo::plan_chain(dims).cost() == static_cast<std::uint64_t>(ref.cost(0, n - 1)));
    }
  }
}
