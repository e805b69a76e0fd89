#ifndef ORDO_CORE_DETAIL_PLAN_BUILDING_HPP
#define ORDO_CORE_DETAIL_PLAN_BUILDING_HPP

// What a chain plan holds besides its tree, one concern each, from the planner's pre-order splits
// (core/chain_plan.hpp's build_plan calls them in this order): the left-to-right cost, the
// products in evaluation order with the optimal cost, the order string, and the peak of live
// intermediates with a workspace layout that reaches it. Constexpr, for compile-time plans.

#include <ordo/core/chain_error.hpp>
#include <ordo/core/detail/chain_solver.hpp>
#include <ordo/core/detail/chain_triangulation.hpp>
#include <ordo/core/planned_product.hpp>
#include <ordo/core/structured_product.hpp>

#include <ordo/core/shape.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

namespace ordo::detail {

// Which operands are diagonal, as prefix counts: range [first, last] is one diagonal factor when
// every operand in it is. An empty structure list (a general chain) allocates nothing.
class diagonal_ranges {
 public:
  constexpr explicit diagonal_ranges(std::span<const operand_structure> structures)
      : count_before_(structures.empty() ? 0 : structures.size() + 1) {
    std::size_t* before = count_before_.data();
    for (std::size_t i = 0; i < structures.size(); ++i) {
      before[i + 1] = before[i] + (structures[i] == operand_structure::diagonal ? 1 : 0);
    }
  }
  constexpr bool any() const noexcept { return count_before_.size() > 0 && count_before_.data()[count_before_.size() - 1] > 0; }
  constexpr bool all_diagonal(std::size_t first, std::size_t last) const noexcept {
    if (count_before_.size() == 0) return false;
    const std::size_t* before = count_before_.data();
    return before[last + 1] - before[first] == last - first + 1;
  }

 private:
  scratch_array<std::size_t> count_before_;
};

// The kind of the product (A_first..A_k)(A_k+1..A_last) and its scalar multiplications, saturated.
struct product_estimate {
  product_kind kind;
  cost_type multiplications;
};
constexpr product_estimate estimate_product(const std::size_t* d, std::size_t first, std::size_t k, std::size_t last,
                                            const diagonal_ranges& diagonals) noexcept {
  const bool left_diagonal = diagonals.all_diagonal(first, k), right_diagonal = diagonals.all_diagonal(k + 1, last);
  if (left_diagonal && right_diagonal) return {product_kind::diagonal, d[first]};
  if (left_diagonal) return {product_kind::scale_rows, saturating_mul(d[k + 1], d[last + 1])};
  if (right_diagonal) return {product_kind::scale_cols, saturating_mul(d[first], d[k + 1])};
  return {product_kind::general, saturating_mul(saturating_mul(d[first], d[k + 1]), d[last + 1])};
}

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

// Scalar multiplications of ((A1 A2) A3) ... An; saturated when it does not fit in 64 bits.
constexpr cost_type left_to_right_cost(std::span<const std::size_t> dims, const diagonal_ranges& diagonals) {
  const std::size_t n = dims.size() - 1;
  const std::size_t* d = dims.data();
  cost_type left_to_right = 0;
  if (diagonals.any()) {
    for (std::size_t k = 1; k < n; ++k) {
      left_to_right = saturating_add(left_to_right, estimate_product(d, 0, k - 1, k, diagonals).multiplications);
    }
    return left_to_right;
  }
  const bool fits = chain_costs_fit(dims);  // then no sum below can overflow
  for (std::size_t k = 1; k < n; ++k) {
    left_to_right = fits ? left_to_right + cost_type{d[0]} * d[k] * d[k + 1]
                         : saturating_add(left_to_right, saturating_mul(saturating_mul(d[0], d[k]), d[k + 1]));
  }
  return left_to_right;
}

// Calls visit(index, left, right, first, k, last) for each product of the tree that splits
// describes (pre-order), where index is its place in post-order (left subtree first) and left,
// right are its factors' node ids (operands 0..n-1, product p is node n + p).
template <class Visit>
constexpr void visit_products(std::size_t n, const preorder_splits& splits, const Visit& visit) {
  // One pre-order pass. Product [first, last] is number last - 1 - r in post-order (left subtree
  // first), where r counts the ancestors whose right subtree holds it: the products before it are
  // its own descendants (last - first - 1 of them) and the left pieces that those ancestors cut
  // off, which tile operands 0 .. first-1 in r pieces (first - r products).
  struct range {
    std::size_t first, last, rights;
  };
  scratch_array<range> pending(n, for_overwrite);
  range* stack = pending.data();
  std::size_t depth = 0;
  if (n > 1) stack[depth++] = {0, n - 1, 0};
  const std::uint32_t* split = splits.data();
  while (depth > 0) {
    const range r = stack[--depth];
    const std::size_t k = *split++;
    const std::size_t left = r.first == k ? k : n + k - 1 - r.rights;
    const std::size_t right = k + 1 == r.last ? r.last : n + r.last - 2 - r.rights;
    visit(r.last - 1 - r.rights, left, right, r.first, k, r.last);
    if (k + 1 != r.last) stack[depth++] = {k + 1, r.last, r.rights + 1};
    if (r.first != k) stack[depth++] = {r.first, k, r.rights};
  }
}

// The n - 1 products of the tree that splits describes, in post-order, into products; returns
// the tree's cost. Throws chain_overflow_error when the cost does not fit in 64 bits.
constexpr cost_type place_products(std::span<const std::size_t> dims, const preorder_splits& splits,
                                   planned_product* products, const diagonal_ranges& diagonals) {
  const bool structured = diagonals.any();
  const std::size_t* d = dims.data();
  const bool fits = chain_costs_fit(dims);
  cost_type total = 0;
  visit_products(dims.size() - 1, splits,
                 [&](std::size_t index, std::size_t left, std::size_t right, std::size_t first, std::size_t k,
                     std::size_t last) {
                   planned_product& placed = products[index];
                   placed = {left, right, first, last, d[first], d[k + 1], d[last + 1], 0, product_kind::general};
                   if (structured) {
                     const product_estimate estimate = estimate_product(d, first, k, last, diagonals);
                     placed.kind = estimate.kind;
                     total = saturating_add(total, estimate.multiplications);
                   } else {
                     total = fits ? total + cost_type{d[first]} * d[k + 1] * d[last + 1]
                                  : saturating_add(total, saturating_mul(saturating_mul(d[first], d[k + 1]), d[last + 1]));
                   }
                 });
  if (total == saturated_cost) {
    throw chain_overflow_error("ordo::plan_chain: the optimal cost (scalar multiplications) does not fit in 64 bits");
  }
  return total;
}

// Writes the parenthesization of products (n operands) to out, which holds
// order_length_bound(n) characters; returns its length.
template <class Product>
constexpr std::size_t write_order(const Product* products, std::size_t n, char* out) {
  // Each product opens a parenthesis before its first operand and closes one after its last.
  scratch_array<std::size_t> marks(2 * n);
  std::size_t* opens = marks.data();
  std::size_t* closes = opens + n;
  for (std::size_t p = 0; p + 1 < n; ++p) {
    ++opens[products[p].first];
    ++closes[products[p].last];
  }
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
  return length;
}

// Elements a product's result occupies: a diagonal one is stored as its diagonal.
constexpr cost_type result_elements(const planned_product& p) noexcept {
  return p.kind == product_kind::diagonal ? p.rows : saturating_mul(p.rows, p.cols);
}
constexpr cost_type result_elements(const structured_product& p) noexcept {
  return p.kind == matrix_kind::diagonal ? p.rows : saturating_mul(p.rows, p.cols);
}

// peak(v) = max(peak(L), size(L) + peak(R), size(L) + size(R) + size(v)): the most elements alive
// while v's subtree runs, left subtree first, each factor freed once v is computed. Saturating.
constexpr cost_type subtree_peak(cost_type left_size, cost_type left_peak, cost_type right_size, cost_type right_peak,
                                 cost_type size) noexcept {
  const cost_type while_right = saturating_add(left_size, right_peak);
  const cost_type at_parent = saturating_add(saturating_add(left_size, right_size), size);
  const cost_type highest = while_right > left_peak ? while_right : left_peak;
  return at_parent > highest ? at_parent : highest;
}

// The peak number of intermediate elements alive at once when products run in order, each
// factor freed once its parent is computed; sets each product's workspace_offset so that a
// workspace of exactly the peak holds every intermediate without overlap while it lives.
// Saturated (and no offsets set) when the peak does not fit in 64 bits.
template <class Product>
constexpr cost_type lay_out_workspace(Product* products, std::size_t n) {
  // subtree_peak's recurrence; operands and the root have size 0 because they are not
  // intermediates.
  scratch_array<cost_type> sizes_and_peaks(4 * n - 2);
  cost_type* size = sizes_and_peaks.data();
  cost_type* peak = size + (2 * n - 1);
  for (std::size_t p = 0; p + 1 < n; ++p) {
    const Product& pr = products[p];
    const std::size_t node = n + p;
    size[node] = p + 2 == n ? 0 : result_elements(pr);
    peak[node] = subtree_peak(size[pr.left], peak[pr.left], size[pr.right], peak[pr.right], size[node]);
  }
  const cost_type peak_elements = peak[n == 1 ? 0 : 2 * n - 2];
  if (n == 1 || peak_elements == saturated_cost) return peak_elements;

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
  std::size_t depth = 0;
  regions[depth++] = {2 * n - 2, 0, peak_elements, false};
  while (depth > 0) {
    const region r = regions[--depth];
    Product& pr = products[r.node - n];
    pr.workspace_offset = r.at_left_end ? r.begin : r.end - size[r.node];
    const cost_type left_size = size[pr.left];
    if (pr.right >= n) {
      regions[depth++] = r.at_left_end ? region{pr.right, r.begin, r.end - left_size, false}
                                       : region{pr.right, r.begin + left_size, r.end, true};
    }
    if (pr.left >= n) regions[depth++] = region{pr.left, r.begin, r.end, !r.at_left_end};
  }
  return peak_elements;
}

// What a plan's numbers are without the plan: the tree's cost, its peak of live intermediates
// (subtree_peak, as lay_out_workspace) and its height, from the pre-order splits alone, for chains too
// long to hold their products (ordo-plan --cost-only: 10^7 products take 720 MB). Memory is one
// frame per level of the tree. Saturated values do not fit in 64 bits.
struct tree_summary {
  cost_type cost = 0;
  cost_type peak_elements = 0;
  std::size_t height = 0;
};

inline tree_summary summarize_tree(std::span<const std::size_t> dims, const preorder_splits& splits) {
  const std::size_t n = dims.size() - 1;
  const std::size_t* d = dims.data();
  tree_summary summary;
  if (n == 1) return summary;
  struct subtree {
    cost_type size, peak;
    std::size_t height;
  };
  struct frame {
    std::size_t first, last, k;
    int stage;  // 0: the left factor next, 1: the right factor next, 2: both done
    subtree left;
  };
  // As deep as the tree: grown by doubling, since 10^7 frames for a tree of height 40 would be
  // most of ordo-plan --cost-only's memory.
  scratch_array<frame> stack(64, for_overwrite);
  std::size_t depth = 0;
  const std::uint32_t* split = splits.data();
  const auto open = [&](std::size_t first, std::size_t last) {
    if (depth == stack.size()) {
      scratch_array<frame> deeper(2 * depth, for_overwrite);
      for (std::size_t i = 0; i < depth; ++i) deeper[i] = stack[i];
      stack = std::move(deeper);
    }
    stack[depth++] = {first, last, *split++, 0, {}};
  };
  open(0, n - 1);
  subtree done{};
  while (depth > 0) {
    frame& f = stack[depth - 1];
    if (f.stage == 0) {
      f.stage = 1;
      if (f.first != f.k) {
        open(f.first, f.k);
        continue;
      }
      done = {};
    }
    if (f.stage == 1) {
      f.left = done;
      f.stage = 2;
      if (f.k + 1 != f.last) {
        open(f.k + 1, f.last);
        continue;
      }
      done = {};
    }
    const subtree right = done;
    const bool is_root = depth == 1;
    summary.cost = saturating_add(summary.cost, saturating_mul(saturating_mul(d[f.first], d[f.k + 1]), d[f.last + 1]));
    const cost_type size = is_root ? 0 : saturating_mul(d[f.first], d[f.last + 1]);
    const cost_type peak = subtree_peak(f.left.size, f.left.peak, right.size, right.peak, size);
    done = {size, peak, 1 + (f.left.height > right.height ? f.left.height : right.height)};
    --depth;
  }
  summary.peak_elements = done.peak;
  summary.height = done.height;
  return summary;
}

}  // namespace ordo::detail

#endif
