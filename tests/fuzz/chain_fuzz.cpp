// libFuzzer target: the run-time planners against exhaustive search on chains of up to 8 matrices,
// and Hu-Shing and the approximation against the DP on longer ones (up to 80 matrices).
// Each input byte pair is one dimension; a leading byte chooses the magnitude so that ties,
// zeros and the 64-bit overflow path are all reached.
#include <ordo/core/chain.hpp>

#include "support/brute_force_chain.hpp"

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <vector>

namespace {

// The plan's products form one tree over the chain; returns its cost from the dims alone.
template <class Plan>
ordo_test::wide_cost checked_tree_cost(const Plan& plan, const std::vector<std::size_t>& dims) {
  const std::size_t n = dims.size() - 1;
  if (plan.products().size() != n - 1) std::abort();
  std::vector<std::size_t> first(2 * n - 1), last(2 * n - 1);
  std::vector<bool> used(2 * n - 1, false);
  for (std::size_t i = 0; i < n; ++i) first[i] = last[i] = i;
  ordo_test::wide_cost total = 0;
  for (std::size_t p = 0; p + 1 < n; ++p) {
    const auto& step = plan.products()[p];
    if (step.left >= n + p || step.right >= n + p || used[step.left] || used[step.right]) std::abort();
    if (last[step.left] + 1 != first[step.right]) std::abort();
    used[step.left] = used[step.right] = true;
    first[n + p] = first[step.left];
    last[n + p] = last[step.right];
    total += ordo_test::wide_cost{dims[first[n + p]]} * dims[first[step.right]] * dims[last[n + p] + 1];
  }
  if (n > 1 && (first[2 * n - 2] != 0 || last[2 * n - 2] != n - 1)) std::abort();
  return total;
}

}  // namespace

// The plan's peak of live intermediates against a simulation in 128 bits: equal, or the documented
// ordo::chain_overflow_error when the simulated peak does not fit in 64 bits (then no layout to check).
template <class Plan>
bool peak_is_right(const Plan& plan) {
  const ordo_test::wide_cost simulated = ordo_test::simulated_peak_elements(plan);
  if (simulated >= std::numeric_limits<std::uint64_t>::max()) {
    try {
      (void)plan.peak_temporary_elements();
    } catch (const ordo::chain_overflow_error&) {
      return true;
    }
    return false;
  }
  return plan.peak_temporary_elements() == simulated && ordo_test::workspace_layout_is_valid(plan);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const unsigned mode = data[0] % 5;
  const unsigned shift = mode == 4 ? 36u : mode == 3 ? 22u : mode * 4u;
  std::vector<std::size_t> dims;
  for (std::size_t i = 1; i + 1 < size && dims.size() < 81; i += 2) {
    const std::size_t value = static_cast<std::size_t>(data[i]) | static_cast<std::size_t>(data[i + 1]) << 8;
    // Six bits of magnitude, shifted, and two more bits below them: dimensions 0..63 when shift is 0
    // (zeros and ties are common), up to 2^28 when it is 22 (64-bit cost overflow; Hu-Shing's
    // 128-bit sums) and up to 2^42 when it is 36 (its 512-bit sums).
    dims.push_back(((value % 64) << shift) | ((value >> 6) % 4));
  }
  if (dims.size() < 2) {
    try {
      (void)ordo::plan_chain(dims);
      std::abort();
    } catch (const ordo::chain_argument_error&) {
    }
    return 0;
  }
  if (dims.size() > 9) {
    // Mid-length chains: Hu-Shing against the DP, the approximation against its bound.
    ordo::chain_plan<ordo::dynamic> dp;
    try {
      dp = ordo::plan_chain(dims, ordo::planner::dynamic_programming);
    } catch (const ordo::chain_overflow_error&) {
      try {
        (void)ordo::plan_chain(dims, ordo::planner::hu_shing);
        std::abort();
      } catch (const ordo::chain_overflow_error&) {
      }
      return 0;
    }
    const auto hs = ordo::plan_chain(dims, ordo::planner::hu_shing);
    if (hs.cost() != dp.cost() || checked_tree_cost(hs, dims) != dp.cost()) std::abort();
    if (!peak_is_right(hs)) std::abort();
    try {
      const auto approx = ordo::plan_chain(dims, ordo::planner::approximate);
      if (checked_tree_cost(approx, dims) != approx.cost() || approx.cost() < dp.cost()) std::abort();
      if (ordo_test::wide_cost{approx.cost()} * 10'000 > ordo_test::wide_cost{dp.cost()} * 11'547) std::abort();
    } catch (const ordo::chain_overflow_error&) {
      // The approximation may cost more than 64 bits where the optimum fits: then it must pass 2^64 / 1.155.
      if (dp.cost() < std::numeric_limits<std::uint64_t>::max() / 1155 * 1000) std::abort();
    }
    return 0;
  }
  const auto oracle = ordo_test::brute_force_optimum(dims);
  if (oracle.cost >= std::numeric_limits<std::uint64_t>::max()) {
    for (int planner = 0; planner < 2; ++planner) {
      try {
        (void)(planner == 0 ? ordo::plan_chain(dims) : ordo::plan_chain(dims, ordo::planner::hu_shing));
        std::abort();
      } catch (const ordo::chain_overflow_error&) {
      }
    }
    return 0;
  }
  const auto plan = ordo::plan_chain(dims);
  if (plan.cost() != static_cast<std::uint64_t>(oracle.cost) || plan.order() != oracle.order) std::abort();
  if (!peak_is_right(plan)) std::abort();
  const auto hs = ordo::plan_chain(dims, ordo::planner::hu_shing);
  if (hs.cost() != plan.cost() || checked_tree_cost(hs, dims) != oracle.cost) std::abort();
  if (!peak_is_right(hs)) std::abort();
  return 0;
}
