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

#include <ordo/core/detail/chain_solver.hpp>
#include <ordo/core/detail/fixed_string.hpp>
#include <ordo/core/shape.hpp>

#include <boost/mp11/list.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ordo {

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
constexpr void build_plan(Plan& plan, std::span<const std::size_t> dims);

}  // namespace detail

// The optimal plan of an n-matrix chain. Matrices is n when known at compile time (the plan then
// lives in fixed-size storage and can be a constexpr variable) or ordo::dynamic.
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

  // Scalar multiplications of the optimal order.
  constexpr std::uint64_t cost() const noexcept { return cost_; }

  // Floating-point operations of the optimal order, 2 * cost() (one multiply and one add each).
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
  friend constexpr void detail::build_plan(Plan&, std::span<const std::size_t>);

  detail::plan_storage<std::size_t, dim_count> dims_{};
  detail::plan_storage<planned_product, product_count> products_{};
  std::conditional_t<Matrices == dynamic, std::string, std::array<char, order_capacity>> order_{};
  std::size_t order_length_ = 0;
  std::uint64_t cost_ = 0;
  std::uint64_t left_to_right_cost_ = 0;
  std::uint64_t peak_temporary_elements_ = 0;
};

namespace detail {

template <class Plan>
constexpr void build_plan(Plan& plan, std::span<const std::size_t> dims) {
  const std::size_t n = dims.size() - 1;
  resize_storage(plan.dims_, n + 1);
  for (std::size_t i = 0; i <= n; ++i) plan.dims_[i] = dims[i];

  const chain_solution solution = solve_chain(dims);
  const cost_type optimal = n == 1 ? 0 : solution.cost_at(0, n - 1);
  if (optimal == saturated_cost) {
    throw std::overflow_error("ordo::plan_chain: the optimal cost (scalar multiplications) does not fit in 64 bits");
  }
  plan.cost_ = optimal;

  cost_type left_to_right = 0;
  for (std::size_t k = 1; k < n; ++k) {
    left_to_right = saturating_add(
        left_to_right, saturating_mul(saturating_mul(dims[0], dims[k]), dims[k + 1]));
  }
  plan.left_to_right_cost_ = left_to_right;

  // Post-order walk of the split table with an explicit stack: left-deep chains of thousands of
  // matrices would otherwise exhaust the recursion depth of constant evaluation.
  resize_storage(plan.products_, n - 1);
  struct frame {
    std::size_t first, last;
    bool expanded;
  };
  std::vector<frame> pending{{0, n - 1, false}};
  std::vector<std::size_t> done;
  std::size_t count = 0;
  while (!pending.empty()) {
    const frame f = pending.back();
    pending.pop_back();
    if (f.first == f.last) {
      done.push_back(f.first);
      continue;
    }
    const std::size_t k = solution.split_at(f.first, f.last);
    if (!f.expanded) {
      pending.push_back({f.first, f.last, true});
      pending.push_back({k + 1, f.last, false});
      pending.push_back({f.first, k, false});
      continue;
    }
    const std::size_t right = done.back();
    done.pop_back();
    const std::size_t left = done.back();
    done.pop_back();
    plan.products_[count] = {left, right, f.first, f.last, dims[f.first], dims[k + 1], dims[f.last + 1], 0};
    done.push_back(n + count);
    ++count;
  }

  // Each product opens a parenthesis before its first operand and closes one after its last.
  std::vector<std::size_t> opens(n, 0), closes(n, 0);
  for (std::size_t p = 0; p + 1 < n; ++p) {
    ++opens[plan.products_[p].first];
    ++closes[plan.products_[p].last];
  }
  resize_storage(plan.order_, order_length_bound(n));
  std::size_t length = 0;
  const auto put = [&](char c) { plan.order_[length++] = c; };
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t o = 0; o < opens[i]; ++o) put('(');
    put('A');
    char digits[20] = {};
    std::size_t digit_count = 0;
    for (std::size_t v = i + 1; v != 0; v /= 10) digits[digit_count++] = static_cast<char>('0' + v % 10);
    while (digit_count > 0) put(digits[--digit_count]);
    for (std::size_t c = 0; c < closes[i]; ++c) put(')');
  }
  plan.order_length_ = length;

  // peak(v) = max(peak(L), size(L) + peak(R), size(L) + size(R) + size(v)); operands and the root
  // have size 0 because they are not intermediates.
  std::vector<cost_type> size(2 * n - 1, 0), peak(2 * n - 1, 0);
  for (std::size_t p = 0; p + 1 < n; ++p) {
    const planned_product& pr = plan.products_[p];
    const std::size_t node = n + p;
    const bool is_root = p + 2 == n;
    size[node] = is_root ? 0 : saturating_mul(pr.rows, pr.cols);
    const cost_type while_right = saturating_add(size[pr.left], peak[pr.right]);
    const cost_type at_parent = saturating_add(saturating_add(size[pr.left], size[pr.right]), size[node]);
    cost_type highest = peak[pr.left];
    highest = while_right > highest ? while_right : highest;
    highest = at_parent > highest ? at_parent : highest;
    peak[node] = highest;
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
  std::vector<region> todo{{2 * n - 2, 0, plan.peak_temporary_elements_, false}};
  while (!todo.empty()) {
    const region r = todo.back();
    todo.pop_back();
    if (r.node < n) continue;
    planned_product& pr = plan.products_[r.node - n];
    pr.workspace_offset = r.at_left_end ? r.begin : r.end - size[r.node];
    const cost_type left_size = size[pr.left];
    if (r.at_left_end) {
      todo.push_back({pr.right, r.begin, r.end - left_size, false});
      todo.push_back({pr.left, r.begin, r.end, false});
    } else {
      todo.push_back({pr.right, r.begin + left_size, r.end, true});
      todo.push_back({pr.left, r.begin, r.end, true});
    }
  }
}

}  // namespace detail

// Plans the chain whose dims d0..dn are known at compile time: n matrices, Ai is d[i-1] x d[i].
// Usable in constant expressions; a cost beyond 64 bits fails to compile there.
template <std::size_t DimCount>
constexpr chain_plan<(DimCount >= 2 ? DimCount - 1 : 1)> plan_chain(
    const std::array<std::size_t, DimCount>& dims) {
  static_assert(DimCount >= 2,
                "ordo::plan_chain(dims) requires at least 2 dims: d0..dn describe n >= 1 matrices");
  chain_plan<(DimCount >= 2 ? DimCount - 1 : 1)> plan;
  if constexpr (DimCount >= 2) detail::build_plan(plan, dims);
  return plan;
}

// Plans a chain whose length is known at run time. Throws std::invalid_argument for fewer than
// 2 dims and std::overflow_error when the optimal cost does not fit in 64 bits.
constexpr chain_plan<dynamic> plan_chain(std::span<const std::size_t> dims) {
  if (dims.size() < 2) {
    throw std::invalid_argument("ordo::plan_chain(dims) requires at least 2 dims: d0..dn describe n >= 1 matrices");
  }
  chain_plan<dynamic> plan;
  detail::build_plan(plan, dims);
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
      std::array<std::size_t, n + 1> dims{};
      for (std::size_t i = 0; i < n; ++i) dims[i] = rows[i];
      dims[n] = cols[n - 1];
      return plan_chain(dims);
    }
  }
}

template <class Plan, std::size_t Node, bool IsOperand>
struct tree_node;

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

template <class... Ts>
struct plan_of {
  static constexpr const auto& value = chain_plan_v<Ts...>;
};

template <class... Ts, std::size_t Node>
struct tree_node<plan_of<Ts...>, Node, true> {
  using type = operand<Node>;
};

template <class... Ts, std::size_t Node>
struct tree_node<plan_of<Ts...>, Node, false> {
 private:
  static constexpr const auto& plan = plan_of<Ts...>::value;
  static constexpr planned_product step = plan.product_at(Node);

 public:
  using type = product<
      typename tree_node<plan_of<Ts...>, step.left, plan.is_operand(step.left)>::type,
      typename tree_node<plan_of<Ts...>, step.right, plan.is_operand(step.right)>::type>;
};

template <class... Ts>
struct chain_tree {
  static constexpr const auto& plan = chain_plan_v<Ts...>;
  using type = typename tree_node<plan_of<Ts...>, plan.root(), plan.is_operand(plan.root())>::type;
};

}  // namespace detail

// The optimal parenthesization as a type built from ordo::product and ordo::operand.
template <class... Ts>
using chain_tree_t = typename detail::chain_tree<Ts...>::type;

}  // namespace ordo

#endif
