#ifndef ORDO_CORE_CHAIN_PLAN_HPP
#define ORDO_CORE_CHAIN_PLAN_HPP

// The matrix-chain planner as values: ordo::plan_chain(dims) and ordo::chain_plan (cost, order
// string, products in evaluation order, peak of live intermediates), at compile time for an
// std::array of dims and at run time for a span; ordo::chain_tables, the DP's tables. Pure C++20.
// The type level (plans of operand types, the tree as a type) is core/chain_type.hpp; both come
// with <ordo/core/chain.hpp>, which says more about the cost model and the planners.

#include <ordo/core/chain_error.hpp>
#include <ordo/core/cost_model.hpp>
#include <ordo/core/detail/chain_approximation.hpp>
#include <ordo/core/detail/chain_solver.hpp>
#include <ordo/core/detail/chain_triangulation.hpp>
#include <ordo/core/detail/hu_shing.hpp>
#include <ordo/core/detail/plan_building.hpp>
#include <ordo/core/detail/structured_chain_solver.hpp>
#include <ordo/core/fixed_string.hpp>
#include <ordo/core/order_view.hpp>
#include <ordo/core/planned_product.hpp>
#include <ordo/core/shape.hpp>

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <type_traits>

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

namespace detail {

template <class T, std::size_t Count>
using plan_storage = std::conditional_t<Count == dynamic, scratch_array<T>, std::array<T, Count>>;

// A dynamic plan's storage gets its size; a fixed one has it.
template <class Container>
constexpr void resize_storage(Container& c, std::size_t size) {
  if constexpr (std::is_same_v<Container, scratch_array<typename Container::value_type>>) {
    c = Container(size, for_overwrite);
  }
}

template <class Plan>
constexpr void build_plan(Plan& plan, std::span<const std::size_t> dims, const preorder_splits& splits,
                          const diagonal_ranges& diagonals);

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
  constexpr std::span<const std::size_t> dims() const noexcept { return {dims_.data(), dims_.size()}; }
  constexpr std::size_t rows() const noexcept { return dims_.data()[0]; }
  constexpr std::size_t cols() const noexcept { return dims_.data()[dims_.size() - 1]; }

  // Scalar multiplications of the planned order (the optimum for the exact planners).
  constexpr std::uint64_t cost() const noexcept { return cost_; }

  // Floating-point operations of the planned order, 2 * cost() (one multiply and one add each).
  constexpr std::uint64_t flops() const {
    if (cost_ > detail::saturated_cost / 2) {
      throw chain_overflow_error("ordo::chain_plan::flops: 2 * cost() does not fit in 64 bits");
    }
    return 2 * cost_;
  }

  // Scalar multiplications of ((A1 A2) A3) ... An, the order a naive evaluation uses.
  constexpr std::uint64_t left_to_right_cost() const {
    if (left_to_right_cost_ == detail::saturated_cost) {
      throw chain_overflow_error("ordo::chain_plan::left_to_right_cost: the left-to-right cost does not fit in 64 bits");
    }
    return left_to_right_cost_;
  }

  // The parenthesization, operands A1..An, every product in parentheses, no spaces.
  constexpr order_view order() const noexcept {
    return std::string_view{order_.data(), order_length_};
  }

  // The products in evaluation order: post-order, left subtree first; the root is last.
  constexpr std::span<const planned_product> products() const noexcept {
    return {products_.data(), products_.size()};
  }

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
      throw chain_overflow_error("ordo::chain_plan::peak_temporary_elements: the element count does not fit in 64 bits");
    }
    return peak_temporary_elements_;
  }

 private:
  template <class Plan>
  friend constexpr void detail::build_plan(Plan&, std::span<const std::size_t>, const detail::preorder_splits&,
                                           const detail::diagonal_ranges&);

  detail::plan_storage<std::size_t, dim_count> dims_{};
  detail::plan_storage<planned_product, product_count> products_{};
  detail::plan_storage<char, order_capacity> order_{};
  std::size_t order_length_ = 0;
  std::uint64_t cost_ = 0;
  std::uint64_t left_to_right_cost_ = 0;
  std::uint64_t peak_temporary_elements_ = 0;
};

namespace detail {

// The DP's tree as pre-order splits.
constexpr preorder_splits dynamic_programming_splits(std::span<const std::size_t> dims) {
  const std::size_t n = dims.size() - 1;
  if (n == 1) return preorder_splits(0, for_overwrite);
  const chain_solution solution = solve_chain(dims);
  return splits_of_table(n, [&](std::size_t first, std::size_t last) { return solution.split_at(first, last); });
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
constexpr void build_plan(Plan& plan, std::span<const std::size_t> dims, const preorder_splits& splits,
                          const diagonal_ranges& diagonals) {
  const std::size_t n = dims.size() - 1;
  resize_storage(plan.dims_, n + 1);
  for (std::size_t i = 0; i <= n; ++i) plan.dims_.data()[i] = dims[i];
  plan.left_to_right_cost_ = left_to_right_cost(dims, diagonals);
  resize_storage(plan.products_, n - 1);
  plan.cost_ = place_products(dims, splits, plan.products_.data(), diagonals);
  resize_storage(plan.order_, order_length_bound(n));
  plan.order_length_ = write_order(plan.products_.data(), n, plan.order_.data());
  plan.peak_temporary_elements_ = lay_out_workspace(plan.products_.data(), n);
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
    detail::build_plan(plan, dims, splits, detail::diagonal_ranges({}));
  }
  return plan;
}

// Plans a chain whose length is known at run time. Throws ordo::chain_argument_error for fewer
// than 2 dims and ordo::chain_overflow_error when the planned cost does not fit in 64 bits
// (core/chain_error.hpp).
template <chain_planner Planner = planner::automatic_t>
constexpr chain_plan<dynamic> plan_chain(std::span<const std::size_t> dims, Planner how = {}) {
  if (dims.size() < 2) {
    throw chain_argument_error("ordo::plan_chain(dims) requires at least 2 dims: d0..dn describe n >= 1 matrices");
  }
  chain_plan<dynamic> plan;
  const detail::preorder_splits splits = detail::planned_splits(dims, how);
  detail::build_plan(plan, dims, splits, detail::diagonal_ranges({}));
  return plan;
}

namespace detail {

// Throws ordo::chain_argument_error unless there is one structure per matrix and each diagonal one is
// square.
constexpr void check_structures(std::span<const std::size_t> dims, std::span<const operand_structure> structures) {
  if (dims.size() < 2) {
    throw chain_argument_error("ordo::plan_chain(dims, structures) requires at least 2 dims: d0..dn describe n >= 1 matrices");
  }
  if (structures.size() != dims.size() - 1) {
    detail::fixed_string<chain_error::message_capacity> message;
    message.append("ordo::plan_chain(dims, structures): ").append(dims.size() - 1).append(" matrices but ");
    throw chain_argument_error(message.append(structures.size()).append(" structures").view());
  }
  for (std::size_t i = 0; i < structures.size(); ++i) {
    if (structures[i] == operand_structure::diagonal && dims[i] != dims[i + 1]) {
      detail::fixed_string<chain_error::message_capacity> message;
      message.append("ordo::plan_chain(dims, structures): A").append(i + 1).append(" is diagonal but ");
      message.append(dims[i]).append("x").append(dims[i + 1]).append(" (a diagonal matrix is square)");
      throw chain_argument_error(message.view());
    }
  }
}

template <class Plan>
constexpr void build_structured_plan(Plan& plan, std::span<const std::size_t> dims,
                                     std::span<const operand_structure> structures) {
  check_structures(dims, structures);
  const diagonal_ranges diagonals(structures);
  if (!diagonals.any()) {
    const preorder_splits splits = planned_splits(dims, planner::automatic);
    build_plan(plan, dims, splits, diagonals);
    return;
  }
  // The structured DP with diagonal and general kinds, costed in multiplications.
  scratch_array<chain_operand> operands(structures.size());
  for (std::size_t i = 0; i < structures.size(); ++i) {
    if (structures[i] == operand_structure::diagonal) operands[i].kind = matrix_kind::diagonal;
  }
  const structured_solution solution =
      solve_structured_chain(dims, std::span<const chain_operand>(operands.data(), operands.size()),
                             cost_model::multiplications{}, false);
  const preorder_splits splits = structured_splits(solution);
  build_plan(plan, dims, splits, diagonals);
}

}  // namespace detail

// Plans a chain whose operand i is structures[i] (general or diagonal, core/shape.hpp): a
// product with a diagonal factor is costed as the scaling it is, and products()' kind says which
// scaling to run. With a diagonal operand the planner is the O(n^3) DP (Hu–Shing's
// triangulation assumes general products); without one this is plan_chain(dims). Throws
// ordo::chain_argument_error for a count that differs from the matrices' or a diagonal operand
// that is not square.
template <std::size_t DimCount>
constexpr chain_plan<(DimCount >= 2 ? DimCount - 1 : 1)> plan_chain(
    const std::array<std::size_t, DimCount>& dims,
    const std::array<operand_structure, (DimCount >= 2 ? DimCount - 1 : 1)>& structures) {
  static_assert(DimCount >= 2,
                "ordo::plan_chain(dims, structures) requires at least 2 dims: d0..dn describe n >= 1 matrices");
  chain_plan<(DimCount >= 2 ? DimCount - 1 : 1)> plan;
  detail::build_structured_plan(plan, dims, structures);
  return plan;
}
inline chain_plan<dynamic> plan_chain(std::span<const std::size_t> dims, std::span<const operand_structure> structures) {
  chain_plan<dynamic> plan;
  detail::build_structured_plan(plan, dims, structures);
  return plan;
}

namespace detail {

// A dim given as any integral type but bool (plan_chain({100, 5, 200, 20}), a std::vector<int>).
template <class T>
concept dim_value = std::integral<T> && !std::same_as<T, bool>;

// Contiguous containers of such dims (std::vector, std::array, std::span of int, long, ...).
template <class Dims>
concept contiguous_dims = requires(const Dims& d) {
  { d.size() } -> std::convertible_to<std::size_t>;
  d.data();
} && dim_value<std::remove_cvref_t<decltype(*std::declval<const Dims&>().data())>>;

// The dims as std::size_t; a negative one throws ordo::chain_argument_error naming it.
template <dim_value T>
constexpr scratch_array<std::size_t> checked_dims(const T* values, std::size_t count) {
  scratch_array<std::size_t> dims(count, for_overwrite);
  for (std::size_t i = 0; i < count; ++i) {
    if constexpr (std::is_signed_v<T>) {
      if (values[i] < 0) {
        detail::fixed_string<chain_error::message_capacity> message;
        message.append("ordo::plan_chain(dims): d").append(i).append(" is -");
        message.append(std::size_t{0} - static_cast<std::size_t>(values[i]));  // the magnitude, even of the minimum
        throw chain_argument_error(message.append("; a dim is a matrix extent, never negative").view());
      }
    }
    dims[i] = static_cast<std::size_t>(values[i]);
  }
  return dims;
}

}  // namespace detail

// The same for dims of any integral type, in a braced list or a contiguous container:
// ordo::plan_chain({100, 5, 200, 20}), ordo::plan_chain(std::vector<int>{...}). A negative dim
// throws ordo::chain_argument_error naming it.
template <detail::dim_value T, chain_planner Planner = planner::automatic_t>
constexpr chain_plan<dynamic> plan_chain(std::initializer_list<T> dims, Planner how = {}) {
  const detail::scratch_array<std::size_t> checked = detail::checked_dims(dims.begin(), dims.size());
  return plan_chain(std::span<const std::size_t>(checked.data(), checked.size()), how);
}
template <detail::contiguous_dims Dims, chain_planner Planner = planner::automatic_t>
  requires(!std::convertible_to<const Dims&, std::span<const std::size_t>>)
constexpr chain_plan<dynamic> plan_chain(const Dims& dims, Planner how = {}) {
  const detail::scratch_array<std::size_t> checked =
      detail::checked_dims(dims.data(), static_cast<std::size_t>(dims.size()));
  return plan_chain(std::span<const std::size_t>(checked.data(), checked.size()), how);
}

// The DP tables themselves, 1-based as in CLRS: cost(i, j) = m[i][j], split(i, j) = s[i][j] for
// 1 <= i < j <= n. For teaching and testing; plan_chain keeps only the chosen tree.
class chain_tables {
 public:
  constexpr explicit chain_tables(std::span<const std::size_t> dims) {
    if (dims.size() < 2) {
      throw chain_argument_error("ordo::chain_tables(dims) requires at least 2 dims: d0..dn describe n >= 1 matrices");
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
    if (i == j) throw chain_argument_error("ordo::chain_tables::split(i, j) requires i < j");
    return solution_.split_at(i - 1, j - 1) + 1;
  }

 private:
  constexpr void check(std::size_t i, std::size_t j, const char*) const {
    if (i < 1 || i > j || j > matrices()) {
      throw chain_argument_error("ordo::chain_tables: indices must satisfy 1 <= i <= j <= n");
    }
  }
  detail::chain_solution solution_;
};

}  // namespace ordo

#endif
