#ifndef ORDO_TESTS_SUPPORT_BRUTE_FORCE_CHAIN_HPP
#define ORDO_TESTS_SUPPORT_BRUTE_FORCE_CHAIN_HPP

// Independent oracles for the chain planner: exhaustive search over all parenthesizations
// (Catalan many) with 128-bit costs, and a direct simulation of intermediate memory.

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ordo_test {

__extension__ typedef unsigned __int128 wide_cost;

struct brute_force_tree {
  wide_cost cost;
  std::string order;
};

// Every tree of operands first..last (0-based), enumerated by root split ascending, then left
// trees, then right trees. The first tree of least cost in this order is the one the smallest-
// split tie rule picks, because optimal trees have optimal subtrees.
inline const std::vector<brute_force_tree>& all_trees(const std::vector<std::size_t>& dims,
                                                      std::size_t first, std::size_t last,
                                                      std::map<std::pair<std::size_t, std::size_t>,
                                                               std::vector<brute_force_tree>>& memo) {
  auto found = memo.find({first, last});
  if (found != memo.end()) return found->second;
  std::vector<brute_force_tree> trees;
  if (first == last) {
    std::string name = "A";
    name += std::to_string(first + 1);
    trees.push_back({0, std::move(name)});
  } else {
    for (std::size_t k = first; k < last; ++k) {
      const auto& lefts = all_trees(dims, first, k, memo);
      const auto& rights = all_trees(dims, k + 1, last, memo);
      const wide_cost here = wide_cost{dims[first]} * dims[k + 1] * dims[last + 1];
      for (const auto& l : lefts) {
        for (const auto& r : rights) {
          std::string order;
          order.reserve(l.order.size() + r.order.size() + 2);
          order += '(';
          order += l.order;
          order += r.order;
          order += ')';
          trees.push_back({l.cost + r.cost + here, std::move(order)});
        }
      }
    }
  }
  return memo.emplace(std::pair{first, last}, std::move(trees)).first->second;
}

inline brute_force_tree brute_force_optimum(const std::vector<std::size_t>& dims) {
  std::map<std::pair<std::size_t, std::size_t>, std::vector<brute_force_tree>> memo;
  const auto& trees = all_trees(dims, 0, dims.size() - 2, memo);
  brute_force_tree best = trees.front();
  for (const auto& t : trees) {
    if (t.cost < best.cost) best = t;
  }
  return best;
}

// The same search when operand i is diagonal where diagonal[i] is set: a factor is diagonal when
// both its factors are (a product of diagonals is diagonal), and a product's cost is what the
// arithmetic needs: d(i) for two diagonals, one multiplication per result element when one factor
// is diagonal, rows x inner x cols otherwise. Exhaustive over every tree, so it checks the
// structured DP's recurrence and its tie rule, not only its cost.
struct structured_tree {
  wide_cost cost;
  std::string order;
  bool diagonal;
};
inline std::vector<structured_tree> all_structured_trees(const std::vector<std::size_t>& dims,
                                                         const std::vector<bool>& diagonal, std::size_t first,
                                                         std::size_t last) {
  std::vector<structured_tree> trees;
  if (first == last) {
    std::string name = "A";
    name += std::to_string(first + 1);
    trees.push_back({0, std::move(name), diagonal[first]});
    return trees;
  }
  for (std::size_t k = first; k < last; ++k) {
    const auto lefts = all_structured_trees(dims, diagonal, first, k);
    const auto rights = all_structured_trees(dims, diagonal, k + 1, last);
    for (const auto& l : lefts) {
      for (const auto& r : rights) {
        const wide_cost rows = dims[first], inner = dims[k + 1], cols = dims[last + 1];
        const wide_cost here = l.diagonal && r.diagonal ? rows : (l.diagonal || r.diagonal) ? rows * cols : rows * inner * cols;
        std::string order;  // appended, not "(" + a + b + ")": g++ 12 -O3 warns falsely (-Wrestrict) there
        order.reserve(l.order.size() + r.order.size() + 2);
        order += '(';
        order += l.order;
        order += r.order;
        order += ')';
        trees.push_back({l.cost + r.cost + here, std::move(order), l.diagonal && r.diagonal});
      }
    }
  }
  return trees;
}
inline structured_tree brute_force_structured_optimum(const std::vector<std::size_t>& dims,
                                                      const std::vector<bool>& diagonal) {
  const auto trees = all_structured_trees(dims, diagonal, 0, dims.size() - 2);
  structured_tree best = trees.front();
  for (const auto& t : trees) {
    if (t.cost < best.cost) best = t;
  }
  return best;
}

// Elements of a product's result: rows x cols, or rows when every operand it covers is diagonal.
template <class Step>
wide_cost result_elements(const Step& step, const std::vector<bool>& diagonal) {
  bool all_diagonal = !diagonal.empty();
  for (std::size_t i = step.first; all_diagonal && i <= step.last; ++i) all_diagonal = diagonal[i];
  return all_diagonal ? wide_cost{step.rows} : wide_cost{step.rows} * step.cols;
}

inline std::uint64_t catalan(std::size_t n) {
  std::uint64_t c = 1;
  for (std::size_t i = 0; i < n; ++i) c = c * 2 * (2 * i + 1) / (i + 2);
  return c;
}

inline std::size_t tree_count(const std::vector<std::size_t>& dims) {
  std::map<std::pair<std::size_t, std::size_t>, std::vector<brute_force_tree>> memo;
  return all_trees(dims, 0, dims.size() - 2, memo).size();
}

// Runs the plan's products in order with an explicit set of live intermediates and returns the
// most elements ever alive at once (in 128 bits: with dims near 2^42, or zero inner dims, an
// intermediate can hold more than 2^64 elements while the cost fits).
template <class Plan>
wide_cost simulated_peak_elements(const Plan& plan, const std::vector<bool>& diagonal = {}) {
  const std::size_t n = plan.matrices();
  std::map<std::size_t, wide_cost> live;
  wide_cost now = 0, peak = 0;
  const auto products = plan.products();
  for (std::size_t p = 0; p < products.size(); ++p) {
    const auto& step = products[p];
    const bool is_root = p + 1 == products.size();
    if (!is_root) {
      live[n + p] = result_elements(step, diagonal);
      now += live[n + p];
      peak = now > peak ? now : peak;
    }
    // A std::array, not a braced list: nvcc's front end cannot parse a range-for over one.
    const std::array<std::size_t, 2> children{step.left, step.right};
    for (const std::size_t child : children) {
      if (auto it = live.find(child); it != live.end()) {
        now -= it->second;
        live.erase(it);
      }
    }
  }
  return peak;
}

// Replays the plan with each intermediate at its workspace_offset: every intermediate must lie
// inside [0, peak) and must not overlap another intermediate while both are alive.
template <class Plan>
bool workspace_layout_is_valid(const Plan& plan, const std::vector<bool>& diagonal = {}) {
  const std::size_t n = plan.matrices();
  const std::uint64_t capacity = plan.peak_temporary_elements();
  std::map<std::size_t, std::pair<std::uint64_t, std::uint64_t>> live;  // node -> [begin, end)
  const auto products = plan.products();
  for (std::size_t p = 0; p < products.size(); ++p) {
    const auto& step = products[p];
    if (p + 1 < products.size()) {
      const std::uint64_t begin = step.workspace_offset;
      const auto end = static_cast<std::uint64_t>(begin + result_elements(step, diagonal));
      if (end > capacity) return false;
      for (const auto& [node, interval] : live) {
        if (begin < interval.second && interval.first < end && begin != end && interval.first != interval.second) {
          return false;
        }
      }
      live[n + p] = {begin, end};
    }
    live.erase(step.left);
    live.erase(step.right);
  }
  return true;
}

}  // namespace ordo_test

#endif
