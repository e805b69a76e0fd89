#ifndef ORDO_CORE_CHAIN_HPP
#define ORDO_CORE_CHAIN_HPP

// The matrix-chain planner: the optimal parenthesization of A1 A2 ... An as a value, a string and
// a type. Pure C++20 (+ Boost.MP11): no Kokkos.
//
//   constexpr auto p = ordo::plan_chain(std::array<std::size_t, 4>{100, 5, 200, 20});
//   static_assert(p.cost() == 30'000 && p.order() == "(A1(A2A3))");
//
// Cost model: scalar multiplications, sum over the tree's products of rows * inner * cols
// (CLRS 15.2, numpy.linalg.multi_dot); flops() = 2 * cost().
//
// Planners (docs/chain.md): ordo::planner::dynamic_programming (CLRS 15.2, O(n^3), ties to the
// smallest split as numpy), hu_shing (Hu and Shing 1982/1984, exact, O(n log n)), approximate
// (O(n), within 15.5% of the optimum) and automatic, the default: the DP up to
// planner::automatic_dp_limit matrices, Hu–Shing beyond. Exact planners agree on cost(); their
// trees may differ only between orders of equal cost.

#include <ordo/core/detail/chain_approximation.hpp>
#include <ordo/core/detail/chain_solver.hpp>
#include <ordo/core/detail/chain_triangulation.hpp>
#include <ordo/core/detail/fixed_string.hpp>
#include <ordo/core/detail/hu_shing.hpp>
#include <ordo/core/shape.hpp>

#include <boost/mp11/list.hpp>

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace ordo {

// Which algorithm orders a chain: pass one of these to ordo::plan_chain(dims, planner).
namespace planner {

// CLRS 15.2 in O(n^3) time and O(n^2) memory; ties take the smallest split, as numpy's multi_dot
// (for 4 or more operands) and ordo::chain_tables do.
struct dynamic_programming_t {};
// Hu and Shing's exact O(n log n) polygon triangulation: the same optimal cost as the DP, but
// among equal-cost orders it may pick another one.
struct hu_shing_t {};
// Hu and Shing's O(n) heuristic: cost() at most 1.155 times the optimum (an upper bound, not
// necessarily the optimum).
struct approximate_t {};
// The DP for chains of up to automatic_dp_limit matrices (their trees follow numpy's tie rule),
// Hu–Shing for longer ones. The default.
struct automatic_t {};

inline constexpr dynamic_programming_t dynamic_programming{};
inline constexpr hu_shing_t hu_shing{};
inline constexpr approximate_t approximate{};
inline constexpr automatic_t automatic{};

// The longest chain that planner::automatic gives to the DP, whose trees follow numpy's tie rule.
// Up to here the DP costs little: at n = 32, 6 us at run time against Hu-Shing's 2 us
// (bench_plan_chain, g++ -O3), and about 1/8 of the constexpr budget a 64-matrix DP needs.
inline constexpr std::size_t automatic_dp_limit = 32;

}  // namespace planner

// One of the ordo::planner tags.
template <class T>
concept chain_planner =
    std::same_as<T, planner::dynamic_programming_t> || std::same_as<T, planner::hu_shing_t> ||
    std::same_as<T, planner::approximate_t> || std::same_as<T, planner::automatic_t>;

// One product of a plan. Nodes are numbered: 0 .. n-1 are the operands A1 .. An, and n + p is
// the p-th product in evaluation order (post-order, left subtree first); the root is last.
struct planned_product {
  std::size_t left = 0;   // node id of the left factor
  std::size_t right = 0;  // node id of the right factor
  std::size_t first = 0;  // first operand covered, 0-based
  std::size_t last = 0;   // last operand covered, 0-based, inclusive
  std::size_t rows = 0;
  std::size_t inner = 0;
  std::size_t cols = 0;
  // Where this product's result lives in a workspace of peak_temporary_elements() elements,
  // counted in elements; the root's result goes to the caller's matrix and has offset 0.
  std::uint64_t workspace_offset = 0;

  // Scalar multiplications of this product; it never overflows in a plan, whose total fits.
  constexpr std::uint64_t multiplications() const noexcept {
    return std::uint64_t{rows} * inner * cols;
  }
  friend constexpr bool operator==(const planned_product&, const planned_product&) = default;
};

namespace detail {

constexpr std::size_t decimal_digits(std::size_t value) noexcept {
  std::size_t digits = 1;
  while (value >= 10) value /= 10, ++digits;
  return digits;
}

// Length of an order string: "A1".."An" plus a pair of parentheses per product.
constexpr std::size_t order_length_bound(std::size_t matrices) noexcept {
  std::size_t length = 2 * (matrices - 1);
  for (std::size_t i = 1; i <= matrices; ++i) length += 1 + decimal_digits(i);
  return length;
}

template <class T, std::size_t Count>
using plan_storage = std::conditional_t<Count == dynamic, std::vector<T>, std::array<T, Count>>;

template <class Container>
constexpr void resize_storage(Container& c, std::size_t size) {
  if constexpr (requires { c.resize(size); }) c.resize(size);
}

template <class Plan>
constexpr void build_plan(Plan& plan, std::span<const std::size_t> dims, const preorder_splits& splits);

}  // namespace detail

// The plan of an n-matrix chain, optimal unless planner::approximate made it. Matrices is n when
// known at compile time (the plan then lives in fixed-size storage and can be a constexpr
// variable) or ordo::dynamic.
template <std::size_t Matrices>
class chain_plan {
  static constexpr std::size_t product_count = Matrices == dynamic ? dynamic : Matrices - 1;
  static constexpr std::size_t node_count = Matrices == dynamic ? dynamic : 2 * Matrices - 1;
  static constexpr std::size_t dim_count = Matrices == dynamic ? dynamic : Matrices + 1;
  static constexpr std::size_t order_capacity =
      Matrices == dynamic ? dynamic : detail::order_length_bound(Matrices);

 public:
  static_assert(Matrices >= 1, "ordo::chain_plan: a chain has at least one matrix");

  constexpr chain_plan() = default;

  // Number of matrices n.
  constexpr std::size_t matrices() const noexcept { return dims_.size() - 1; }
  // d0 .. dn: Ai is d[i-1] x d[i].
  constexpr std::span<const std::size_t> dims() const noexcept { return dims_; }
  constexpr std::size_t rows() const noexcept { return dims_.front(); }
  constexpr std::size_t cols() const noexcept { return dims_.back(); }

  // Scalar multiplications of the planned order (the optimum for the exact planners).
  constexpr std::uint64_t cost() const noexcept { return cost_; }

  // Floating-point operations of the planned order, 2 * cost() (one multiply and one add each).
  constexpr std::uint64_t flops() const {
    if (cost_ > detail::saturated_cost / 2) {
      throw std::overflow_error("ordo::chain_plan::flops: 2 * cost() does not fit in 64 bits");
    }
    return 2 * cost_;
  }

  // Scalar multiplications of ((A1 A2) A3) ... An, the order a naive evaluation uses.
  constexpr std::uint64_t left_to_right_cost() const {
    if (left_to_right_cost_ == detail::saturated_cost) {
      throw std::overflow_error("ordo::chain_plan::left_to_right_cost: the left-to-right cost does not fit in 64 bits");
    }
    return left_to_right_cost_;
  }

  // The parenthesization, operands A1..An, every product in parentheses, no spaces.
  constexpr std::string_view order() const noexcept {
    return std::string_view{order_.data(), order_length_};
  }

  // The products in evaluation order: post-order, left subtree first; the root is last.
  constexpr std::span<const planned_product> products() const noexcept { return products_; }

  // Node id of the whole product: the last product, or operand 0 for a single matrix.
  constexpr std::size_t root() const noexcept { return matrices() == 1 ? 0 : 2 * matrices() - 2; }

  constexpr bool is_operand(std::size_t node) const noexcept { return node < matrices(); }
  constexpr const planned_product& product_at(std::size_t node) const {
    return products_[node - matrices()];
  }

  // Peak number of intermediate elements alive at once when the products run in products()
  // order and each factor is freed once its parent is computed. Operands and the final result
  // are not intermediates. A workspace of exactly this many elements holds every intermediate at
  // its planned_product::workspace_offset, without overlap while it is alive.
  constexpr std::uint64_t peak_temporary_elements() const {
    if (peak_temporary_elements_ == detail::saturated_cost) {
      throw std::overflow_error("ordo::chain_plan::peak_temporary_elements: the element count does not fit in 64 bits");
    }
    return peak_temporary_elements_;
  }

 private:
  template <class Plan>
  friend constexpr void detail::build_plan(Plan&, std::span<const std::size_t>, const detail::preorder_splits&);

  detail::plan_storage<std::size_t, dim_count> dims_{};
  detail::plan_storage<planned_product, product_count> products_{};
  std::conditional_t<Matrices == dynamic, std::string, std::array<char, order_capacity>> order_{};
  std::size_t order_length_ = 0;
  std::uint64_t cost_ = 0;
  std::uint64_t left_to_right_cost_ = 0;
  std::uint64_t peak_temporary_elements_ = 0;
};

namespace detail {

// The DP's tree as pre-order splits.
constexpr preorder_splits dynamic_programming_splits(std::span<const std::size_t> dims) {
  const std::size_t n = dims.size() - 1;
  preorder_splits splits(n - 1, for_overwrite);
  if (n == 1) return splits;
  const chain_solution solution = solve_chain(dims);
  struct range {
    std::size_t first, last;
  };
  scratch_array<range> pending(n, for_overwrite);
  std::size_t depth = 0, written = 0;
  pending[depth++] = {0, n - 1};
  while (depth > 0) {
    const range r = pending[--depth];
    const std::size_t k = solution.split_at(r.first, r.last);
    splits[written++] = static_cast<std::uint32_t>(k);
    if (k + 1 != r.last) pending[depth++] = {k + 1, r.last};
    if (r.first != k) pending[depth++] = {r.first, k};
  }
  return splits;
}

constexpr preorder_splits planned_splits(std::span<const std::size_t> dims, planner::dynamic_programming_t) {
  return dynamic_programming_splits(dims);
}
constexpr preorder_splits planned_splits(std::span<const std::size_t> dims, planner::hu_shing_t) {
  hu_shing_result found = hu_shing_order(dims);
  return std::move(found.splits);
}
constexpr preorder_splits planned_splits(std::span<const std::size_t> dims, planner::approximate_t) {
  return approximate_order(dims);
}
constexpr preorder_splits planned_splits(std::span<const std::size_t> dims, planner::automatic_t) {
  if (dims.size() - 1 <= planner::automatic_dp_limit) return dynamic_programming_splits(dims);
  hu_shing_result found = hu_shing_order(dims);
  return std::move(found.splits);
}

// Fills a plan from the tree a planner chose: splits in pre-order (chain_triangulation.hpp).
// Written for constant evaluation, whose step limits (clang's -fconstexpr-steps) count every
// statement and call: loops index raw arrays, and stacks are arrays with a count.
template <class Plan>
constexpr void build_plan(Plan& plan, std::span<const std::size_t> dims, const preorder_splits& splits) {
  const std::size_t n = dims.size() - 1;
  const std::size_t* d = dims.data();
  resize_storage(plan.dims_, n + 1);
  std::size_t* plan_dims = plan.dims_.data();
  for (std::size_t i = 0; i <= n; ++i) plan_dims[i] = d[i];

  const bool fits = chain_costs_fit(dims);  // then no sum below can overflow
  cost_type left_to_right = 0;
  for (std::size_t k = 1; k < n; ++k) {
    left_to_right = fits ? left_to_right + cost_type{d[0]} * d[k] * d[k + 1]
                         : saturating_add(left_to_right, saturating_mul(saturating_mul(d[0], d[k]), d[k + 1]));
  }
  plan.left_to_right_cost_ = left_to_right;

  // One pre-order pass. Product [first, last] is number last - 1 - r in post-order (left subtree
  // first), where r counts the ancestors whose right subtree holds it: the products before it are
  // its own descendants (last - first - 1 of them) and the left pieces that those ancestors cut
  // off, which tile operands 0 .. first-1 in r pieces (first - r products).
  resize_storage(plan.products_, n - 1);
  planned_product* products = plan.products_.data();
  struct range {
    std::size_t first, last, rights;
  };
  scratch_array<range> pending(n, for_overwrite);
  range* stack = pending.data();
  std::size_t depth = 0;
  if (n > 1) stack[depth++] = {0, n - 1, 0};
  const std::uint32_t* split = splits.data();
  cost_type total = 0;
  while (depth > 0) {
    const range r = stack[--depth];
    const std::size_t k = *split++;
    const std::size_t left = r.first == k ? k : n + k - 1 - r.rights;
    const std::size_t right = k + 1 == r.last ? r.last : n + r.last - 2 - r.rights;
    products[r.last - 1 - r.rights] = {left, right, r.first, r.last, d[r.first], d[k + 1], d[r.last + 1], 0};
    total = fits ? total + cost_type{d[r.first]} * d[k + 1] * d[r.last + 1]
                 : saturating_add(total, saturating_mul(saturating_mul(d[r.first], d[k + 1]), d[r.last + 1]));
    if (k + 1 != r.last) stack[depth++] = {k + 1, r.last, r.rights + 1};
    if (r.first != k) stack[depth++] = {r.first, k, r.rights};
  }
  if (total == saturated_cost) {
    throw std::overflow_error("ordo::plan_chain: the optimal cost (scalar multiplications) does not fit in 64 bits");
  }
  plan.cost_ = total;

  // Each product opens a parenthesis before its first operand and closes one after its last.
  scratch_array<std::size_t> marks(2 * n);
  std::size_t* opens = marks.data();
  std::size_t* closes = opens + n;
  for (std::size_t p = 0; p + 1 < n; ++p) {
    ++opens[products[p].first];
    ++closes[products[p].last];
  }
  resize_storage(plan.order_, order_length_bound(n));
  char* out = plan.order_.data();
  std::size_t length = 0;
  std::size_t digits = 1, next_power = 10;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t o = opens[i]; o > 0; --o) out[length++] = '(';
    out[length++] = 'A';
    if (i + 1 == next_power) ++digits, next_power *= 10;
    length += digits;
    for (std::size_t v = i + 1, at = length; v != 0; v /= 10) out[--at] = static_cast<char>('0' + v % 10);
    for (std::size_t c = closes[i]; c > 0; --c) out[length++] = ')';
  }
  plan.order_length_ = length;

  // peak(v) = max(peak(L), size(L) + peak(R), size(L) + size(R) + size(v)); operands and the root
  // have size 0 because they are not intermediates.
  scratch_array<cost_type> sizes_and_peaks(4 * n - 2);
  cost_type* size = sizes_and_peaks.data();
  cost_type* peak = size + (2 * n - 1);
  for (std::size_t p = 0; p + 1 < n; ++p) {
    const planned_product& pr = products[p];
    const std::size_t node = n + p;
    size[node] = p + 2 == n ? 0 : saturating_mul(pr.rows, pr.cols);
    const cost_type while_right = saturating_add(size[pr.left], peak[pr.right]);
    const cost_type at_parent = saturating_add(saturating_add(size[pr.left], size[pr.right]), size[node]);
    cost_type highest = peak[pr.left];
    highest = while_right > highest ? while_right : highest;
    peak[node] = at_parent > highest ? at_parent : highest;
  }
  plan.peak_temporary_elements_ = peak[n == 1 ? 0 : 2 * n - 2];
  if (n == 1 || plan.peak_temporary_elements_ == saturated_cost) return;

  // Workspace layout reaching exactly the peak. A node placed at one end of its free region puts
  // both children at the other end, the left child outermost: the children never overlap the
  // parent's slot because size(L) + size(R) + size(v) <= peak(v) <= the region, and the right
  // child's region, shrunk by the left child, still holds peak(R). The root behaves like a node
  // at the right end with no slot of its own.
  struct region {
    std::size_t node;
    cost_type begin, end;
    bool at_left_end;
  };
  scratch_array<region> todo(n, for_overwrite);
  region* regions = todo.data();
  depth = 0;
  regions[depth++] = {2 * n - 2, 0, plan.peak_temporary_elements_, false};
  while (depth > 0) {
    const region r = regions[--depth];
    planned_product& pr = products[r.node - n];
    pr.workspace_offset = r.at_left_end ? r.begin : r.end - size[r.node];
    const cost_type left_size = size[pr.left];
    if (pr.right >= n) {
      regions[depth++] = r.at_left_end ? region{pr.right, r.begin, r.end - left_size, false}
                                       : region{pr.right, r.begin + left_size, r.end, true};
    }
    if (pr.left >= n) regions[depth++] = region{pr.left, r.begin, r.end, !r.at_left_end};
  }
}

}  // namespace detail

// Plans the chain whose dims d0..dn are known at compile time: n matrices, Ai is d[i-1] x d[i].
// Usable in constant expressions; a cost beyond 64 bits fails to compile there.
template <std::size_t DimCount, chain_planner Planner = planner::automatic_t>
constexpr chain_plan<(DimCount >= 2 ? DimCount - 1 : 1)> plan_chain(
    const std::array<std::size_t, DimCount>& dims, Planner how = {}) {
  static_assert(DimCount >= 2,
                "ordo::plan_chain(dims) requires at least 2 dims: d0..dn describe n >= 1 matrices");
  chain_plan<(DimCount >= 2 ? DimCount - 1 : 1)> plan;
  if constexpr (DimCount >= 2) {
    // A named vector: g++ 12 ends a temporary's lifetime too early in constant evaluation.
    const detail::preorder_splits splits = detail::planned_splits(dims, how);
    detail::build_plan(plan, dims, splits);
  }
  return plan;
}

// Plans a chain whose length is known at run time. Throws std::invalid_argument for fewer than
// 2 dims and std::overflow_error when the planned cost does not fit in 64 bits.
template <chain_planner Planner = planner::automatic_t>
constexpr chain_plan<dynamic> plan_chain(std::span<const std::size_t> dims, Planner how = {}) {
  if (dims.size() < 2) {
    throw std::invalid_argument("ordo::plan_chain(dims) requires at least 2 dims: d0..dn describe n >= 1 matrices");
  }
  chain_plan<dynamic> plan;
  const detail::preorder_splits splits = detail::planned_splits(dims, how);
  detail::build_plan(plan, dims, splits);
  return plan;
}

// The DP tables themselves, 1-based as in CLRS: cost(i, j) = m[i][j], split(i, j) = s[i][j] for
// 1 <= i < j <= n. For teaching and testing; plan_chain keeps only the chosen tree.
class chain_tables {
 public:
  constexpr explicit chain_tables(std::span<const std::size_t> dims) {
    if (dims.size() < 2) {
      throw std::invalid_argument("ordo::chain_tables(dims) requires at least 2 dims: d0..dn describe n >= 1 matrices");
    }
    solution_ = detail::solve_chain(dims);
  }
  constexpr std::size_t matrices() const noexcept { return solution_.matrices; }
  constexpr std::uint64_t cost(std::size_t i, std::size_t j) const {
    check(i, j, "cost");
    return solution_.cost_at(i - 1, j - 1);
  }
  constexpr std::size_t split(std::size_t i, std::size_t j) const {
    check(i, j, "split");
    if (i == j) throw std::out_of_range("ordo::chain_tables::split(i, j) requires i < j");
    return solution_.split_at(i - 1, j - 1) + 1;
  }

 private:
  constexpr void check(std::size_t i, std::size_t j, const char*) const {
    if (i < 1 || i > j || j > matrices()) {
      throw std::out_of_range("ordo::chain_tables: indices must satisfy 1 <= i <= j <= n");
    }
  }
  detail::chain_solution solution_;
};

// ---------------------------------------------------------------------------------------------
// Type level: operands are types with static shapes (ordo::shape<R, C>, ordo::matrix, ...).

// Leaf of a planned tree: the operand at 0-based position Index.
template <std::size_t Index>
struct operand {
  static constexpr std::size_t index = Index;
};

// Inner node of a planned tree: Left times Right.
template <class Left, class Right>
struct product {
  using left = Left;
  using right = Right;
};

// Types that appear in ordo's compile errors. Their template arguments carry the details:
// A<2>::is<5, 200> reads "operand A2 is 5 x 200"; g++ also prints the full message text.
namespace diagnostic {

template <std::size_t Position>
struct A {
  template <std::size_t Rows, std::size_t Cols>
  struct is {};
};

template <class... T>
inline constexpr bool always_false = false;

template <class Left, class Right, auto Message>
struct inner_dimensions_mismatch {
  static_assert(always_false<Left, Right>,
                "ordo: chain operands do not conform: the columns of each operand must equal the "
                "rows of the next (positions and shapes are in the template arguments above)");
};

template <class Operand, auto Message>
struct dynamic_extent_in_compile_time_chain {
  static_assert(always_false<Operand>,
                "ordo: a compile-time chain plan needs static extents, but an operand has an "
                "ordo::dynamic extent; plan such chains at run time with ordo::plan_chain(dims)");
};

template <class... T>
struct empty_chain {
  static_assert(always_false<T...>, "ordo: a chain needs at least one operand");
};

}  // namespace diagnostic

namespace detail {

// Checks that adjacent static extents agree; ordo::dynamic is a wildcard, checked at run time.
// On a mismatch it instantiates the diagnostic that names both operands and returns false.
template <class... Shapes>
consteval bool conforms_statically() {
  constexpr std::size_t n = sizeof...(Shapes);
  constexpr std::array<std::size_t, n> rows{Shapes::static_rows...};
  constexpr std::array<std::size_t, n> cols{Shapes::static_cols...};
  constexpr std::size_t first_mismatch = [&] {
    for (std::size_t i = 0; i + 1 < n; ++i) {
      if (cols[i] != dynamic && rows[i + 1] != dynamic && cols[i] != rows[i + 1]) return i;
    }
    return n;
  }();
  if constexpr (first_mismatch < n) {
    constexpr std::size_t i = first_mismatch;
    constexpr auto message = fixed_string<160>{}
                                 .append("ordo: A")
                                 .append(i + 1)
                                 .append(" is ")
                                 .append_extent(rows[i], dynamic)
                                 .append("x")
                                 .append(cols[i])
                                 .append(" but A")
                                 .append(i + 2)
                                 .append(" is ")
                                 .append(rows[i + 1])
                                 .append("x")
                                 .append_extent(cols[i + 1], dynamic)
                                 .append(" (inner dimensions ")
                                 .append(cols[i])
                                 .append(" != ")
                                 .append(rows[i + 1])
                                 .append(")");
    (void)diagnostic::inner_dimensions_mismatch<
        typename diagnostic::A<i + 1>::template is<rows[i], cols[i]>,
        typename diagnostic::A<i + 2>::template is<rows[i + 1], cols[i + 1]>, message>{};
    return false;
  } else {
    return true;
  }
}

// constexpr, not consteval: clang 14 evaluates a consteval initializer of a variable template
// twice, doubling the compile time of every type-level plan (bench/compile_time).
template <class... Shapes>
constexpr auto static_chain_plan() {
  constexpr std::size_t n = sizeof...(Shapes);
  if constexpr (n == 0) {
    (void)diagnostic::empty_chain<Shapes...>{};
    return chain_plan<1>{};
  } else {
    constexpr std::array<std::size_t, n> rows{Shapes::static_rows...};
    constexpr std::array<std::size_t, n> cols{Shapes::static_cols...};
    constexpr std::size_t first_dynamic = [&] {
      for (std::size_t i = 0; i < n; ++i) {
        if (rows[i] == dynamic || cols[i] == dynamic) return i;
      }
      return n;
    }();
    if constexpr (first_dynamic < n) {
      constexpr std::size_t i = first_dynamic;
      constexpr auto message = fixed_string<160>{}
                                   .append("ordo: A")
                                   .append(i + 1)
                                   .append(" is ")
                                   .append_extent(rows[i], dynamic)
                                   .append("x")
                                   .append_extent(cols[i], dynamic)
                                   .append(": a compile-time chain plan needs static extents; "
                                           "use ordo::plan_chain(dims) at run time");
      (void)diagnostic::dynamic_extent_in_compile_time_chain<
          typename diagnostic::A<i + 1>::template is<rows[i], cols[i]>, message>{};
      return chain_plan<n>{};
    } else if constexpr (!conforms_statically<Shapes...>()) {
      return chain_plan<n>{};
    } else {
      // Through pointers: std::array's operator[] costs clang's step budget a call per element.
      std::array<std::size_t, n + 1> dims{};
      std::size_t* out = dims.data();
      for (const std::size_t r : rows) *out++ = r;
      *out = cols[n - 1];
      return plan_chain(dims);
    }
  }
}

}  // namespace detail

// The plan of a chain of statically shaped types, computed once per chain.
// An error "no type named 'type' in ordo::shape_of<T>" means T is not a matrix shape: use
// ordo::shape<R, C> or a type with a member type shape_type.
template <class... Ts>
inline constexpr auto chain_plan_v = detail::static_chain_plan<shape_of_t<Ts>...>();

template <class... Ts>
inline constexpr std::uint64_t chain_cost_v = chain_plan_v<Ts...>.cost();

template <class... Ts>
inline constexpr std::uint64_t chain_flops_v = chain_plan_v<Ts...>.flops();

template <class... Ts>
inline constexpr std::string_view chain_order_v = chain_plan_v<Ts...>.order();

template <class... Ts>
inline constexpr std::uint64_t chain_peak_temporary_elements_v =
    chain_plan_v<Ts...>.peak_temporary_elements();

namespace detail {

// Every node id of a plan in post-order: operand i, then the products that end at operand i,
// inner first (the order products() lists them in).
template <std::size_t Matrices>
constexpr std::array<std::size_t, 2 * Matrices - 1> nodes_in_post_order(const chain_plan<Matrices>& plan) {
  std::array<std::size_t, 2 * Matrices - 1> order{};
  std::array<std::size_t, Matrices + 1> before{};  // before[i]: products that end before operand i
  for (const planned_product& p : plan.products()) ++before[p.last + 1];
  for (std::size_t i = 1; i <= Matrices; ++i) before[i] += before[i - 1];
  std::array<std::size_t, Matrices> placed{};
  for (std::size_t i = 0; i < Matrices; ++i) order[i + before[i]] = i;
  for (std::size_t p = 0; p + 1 < Matrices; ++p) {
    const std::size_t last = plan.products()[p].last;
    order[last + before[last] + 1 + placed[last]++] = Matrices + p;
  }
  return order;
}

template <class... Ts>
struct plan_of {
  static constexpr const auto& value = chain_plan_v<Ts...>;
  static constexpr std::size_t matrices = sizeof...(Ts) == 0 ? 1 : sizeof...(Ts);  // 0: diagnosed
  static constexpr auto post_order = nodes_in_post_order(value);
};

// The tree type is built by a stack machine over the post-order, a type-level stack of finished
// subtrees: an operand pushes itself, a product pops its two factors. The sequence is split in
// halves, so the instantiation depth is O(log n) whatever the tree's depth (g++ stops at 900).
template <class Top, class Rest>
struct subtree_stack {
  using top = Top;
};
struct empty_subtree_stack {};

template <class Stack, std::size_t Node, bool IsOperand>
struct push_node {
  using type = subtree_stack<operand<Node>, Stack>;
};
template <class Right, class Left, class Rest, std::size_t Node>
struct push_node<subtree_stack<Right, subtree_stack<Left, Rest>>, Node, false> {
  using type = subtree_stack<product<Left, Right>, Rest>;
};

template <class Plan, class Stack, std::size_t Begin, std::size_t Count>
struct push_nodes {
  using type = typename push_nodes<Plan, typename push_nodes<Plan, Stack, Begin, Count / 2>::type,
                                   Begin + Count / 2, Count - Count / 2>::type;
};
template <class Plan, class Stack, std::size_t Begin>
struct push_nodes<Plan, Stack, Begin, 1> {
  using type = typename push_node<Stack, Plan::post_order[Begin], (Plan::post_order[Begin] < Plan::matrices)>::type;
};
template <class Plan, class Stack, std::size_t Begin>
struct push_nodes<Plan, Stack, Begin, 0> {
  using type = Stack;
};

template <class... Ts>
struct chain_tree {
  using type = typename push_nodes<plan_of<Ts...>, empty_subtree_stack, 0, 2 * plan_of<Ts...>::matrices - 1>::type::top;
};

}  // namespace detail

// The optimal parenthesization as a type built from ordo::product and ordo::operand.
template <class... Ts>
using chain_tree_t = typename detail::chain_tree<Ts...>::type;

}  // namespace ordo

#endif
