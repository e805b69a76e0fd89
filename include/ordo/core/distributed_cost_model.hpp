#ifndef ORDO_CORE_DISTRIBUTED_COST_MODEL_HPP
#define ORDO_CORE_DISTRIBUTED_COST_MODEL_HPP

// ordo::cost_model::summa: the predicted time of a product on a pr x pc process grid, as
// ScaLAPACK's p?gemm computes it (SUMMA: van de Geijn and Watts, 1997), for the generalized chain
// planner (core/structured_chain.hpp), so that a distributed chain is planned by the same DP as
// every other chain (docs/distributed.md, "Chains across ranks"):
//
//   time = flops / P x t_flop  +  alpha x messages  +  beta x bytes
//
// For C (m x n) = A (m x k) B (k x n) in blocks of b: ceil(k / b) steps; in each, the owners of a
// block column of A broadcast it along the process rows (an m/pr x b panel, to pc ranks) and the
// owners of a block row of B along the columns (b x n/pc, to pr ranks), each a binomial tree of
// ceil(log2) stages. So messages = ceil(k/b) (ceil log2 pc + ceil log2 pr) and words =
// k ceil(m/pr) ceil log2 pc + k ceil(n/pc) ceil log2 pr; on one rank both are 0 and the model is
// the flop count at t_flop. A structural type: a static grid and shapes give a static plan.
// Pure C++20.

#include <ordo/core/chain_kernel.hpp>

#include <cstdint>

namespace ordo::cost_model {

struct summa {
  std::uint64_t process_rows = 1, process_cols = 1;
  std::uint64_t block = 64;                   // ScaLAPACK's block (square: mb = nb)
  std::uint64_t fs_per_flop = 100'000;        // one rank's time per flop (10 Gflop/s)
  std::uint64_t alpha_fs = 2'000'000'000;     // latency per message (2 us)
  std::uint64_t beta_fs_per_byte = 100'000;   // inverse bandwidth (10 GB/s)
  std::uint64_t element_bytes = 8;

  static constexpr std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) noexcept { return b == 0 ? a : (a + b - 1) / b; }
  static constexpr std::uint64_t ceil_log2(std::uint64_t p) noexcept {
    std::uint64_t stages = 0;
    while ((std::uint64_t{1} << stages) < p) ++stages;
    return stages;
  }

  // The three parts of a call's time, in femtoseconds (saturating).
  constexpr std::uint64_t compute_fs(const kernel_call& call) const noexcept {
    const std::uint64_t ranks = process_rows * process_cols;
    return ordo::detail::clamp_mul(ceil_div(kernel_flops(call), ranks), fs_per_flop);
  }
  constexpr std::uint64_t messages(const kernel_call& call) const noexcept {
    return ordo::detail::clamp_mul(ceil_div(call.inner, block), ceil_log2(process_cols) + ceil_log2(process_rows));
  }
  constexpr std::uint64_t words(const kernel_call& call) const noexcept {
    return ordo::detail::clamp_add(ordo::detail::clamp_mul3(call.inner, ceil_div(call.rows, process_rows), ceil_log2(process_cols)),
                             ordo::detail::clamp_mul3(call.inner, ceil_div(call.cols, process_cols), ceil_log2(process_rows)));
  }

  // General products only (GEMM, GEMV, a dot product): p?gemm and p?gemv. Every other kernel is
  // unavailable on the grid and costs the most, so the planner never picks one where a general
  // product serves (ordo::mpi refuses operands that would need one).
  constexpr std::uint64_t operator()(const kernel_call& call) const noexcept {
    if (call.kernel != chain_kernel::gemm && call.kernel != chain_kernel::gemv && call.kernel != chain_kernel::dot) {
      return ~std::uint64_t{0};
    }
    return ordo::detail::clamp_add(ordo::detail::clamp_add(compute_fs(call), ordo::detail::clamp_mul(alpha_fs, messages(call))),
                             ordo::detail::clamp_mul3(words(call), element_bytes, beta_fs_per_byte));
  }
};

}  // namespace ordo::cost_model

#endif
