// libFuzzer target: the run-time planner against exhaustive search on chains of up to 8 matrices.
// Each input byte pair is one dimension; a leading byte chooses the magnitude so that ties,
// zeros and the 64-bit overflow path are all reached.
#include <ordo/core/chain.hpp>

#include "support/brute_force_chain.hpp"

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const unsigned shift = data[0] % 4 == 3 ? 22u : data[0] % 4 * 4u;
  std::vector<std::size_t> dims;
  for (std::size_t i = 1; i + 1 < size && dims.size() < 9; i += 2) {
    const std::size_t value = static_cast<std::size_t>(data[i]) | static_cast<std::size_t>(data[i + 1]) << 8;
    // Six bits of magnitude, shifted, and two more bits below them: dimensions 0..63 when shift is 0
    // (zeros and ties are common), and up to 2^28 when it is 22 (64-bit cost overflow).
    dims.push_back(((value % 64) << shift) | ((value >> 6) % 4));
  }
  if (dims.size() < 2) {
    try {
      (void)ordo::plan_chain(dims);
      std::abort();
    } catch (const std::invalid_argument&) {
    }
    return 0;
  }
  const auto oracle = ordo_test::brute_force_optimum(dims);
  if (oracle.cost >= std::numeric_limits<std::uint64_t>::max()) {
    try {
      (void)ordo::plan_chain(dims);
      std::abort();
    } catch (const std::overflow_error&) {
    }
    return 0;
  }
  const auto plan = ordo::plan_chain(dims);
  if (plan.cost() != static_cast<std::uint64_t>(oracle.cost) || plan.order() != oracle.order) std::abort();
  if (plan.peak_temporary_elements() != ordo_test::simulated_peak_elements(plan)) std::abort();
  if (!ordo_test::workspace_layout_is_valid(plan)) std::abort();
  return 0;
}
