#ifndef ORDO_CORE_COST_MODEL_HPP
#define ORDO_CORE_COST_MODEL_HPP

// How a generalized chain's plans are ranked (docs/structured_chains.md, "Cost models"). A cost
// model is a value whose call operator gives a kernel call's cost as an unsigned 64-bit number;
// the planner adds them up (saturating) and keeps the cheapest plan. Each model is a structural
// type, so it can be a template argument and its plans can be checked with static_assert:
//   ordo::cost_model::multiplications   scalar multiplications (CLRS 15.2, the dense planner's)
//   ordo::cost_model::flops             floating-point operations (LAWN 41)
//   ordo::cost_model::flops_and_traffic flops + a weight per byte moved (opt_einsum's request)
//   ordo::cost_model::predicted_time    femtoseconds from a per-kernel roofline table, measured
//                                       by bench_calibrate (the default table: docs/performance.md)
// Pure C++20.

#include <ordo/core/chain_kernel.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>

namespace ordo {

namespace cost_model {

// Scalar multiplications: rows x inner x cols for a general product, rows x cols for a scaling,
// rows for a product of diagonals; half the flops for the other kernels.
struct multiplications {
  constexpr std::uint64_t operator()(const kernel_call& call) const noexcept {
    switch (call.kernel) {
      case chain_kernel::gemm:
      case chain_kernel::gemv:
      case chain_kernel::dot: return detail::clamp_mul3(call.rows, call.inner, call.cols);
      case chain_kernel::scale_rows:
      case chain_kernel::scale_cols:
      case chain_kernel::diagonal_product:
      case chain_kernel::reciprocal: return kernel_flops(call);
      default: {
        const std::uint64_t f = kernel_flops(call);
        return f == ~std::uint64_t{0} ? f : f / 2 + f % 2;
      }
    }
  }
};

struct flops {
  constexpr std::uint64_t operator()(const kernel_call& call) const noexcept { return kernel_flops(call); }
};

// flops + flops_per_byte x bytes moved, bytes = elements moved x element_bytes.
struct flops_and_traffic {
  std::uint64_t element_bytes = 8;
  std::uint64_t flops_per_byte = 8;
  constexpr std::uint64_t operator()(const kernel_call& call) const noexcept {
    return detail::clamp_add(kernel_flops(call),
                             detail::clamp_mul3(kernel_elements_moved(call), element_bytes, flops_per_byte));
  }
};

// One kernel's speed: a fixed cost per call and the time per flop at three problem sizes (the
// smallest extent above 1 below 64, below 512, and beyond), in femtoseconds.
struct kernel_rate {
  std::uint64_t overhead_fs = 0;
  std::uint64_t fs_per_flop[3] = {0, 0, 0};
};

// A machine: every kernel's rate and the streaming bandwidth, as femtoseconds per byte.
struct machine_rates {
  kernel_rate kernels[chain_kernel_count] = {};
  std::uint64_t fs_per_byte = 0;
};

// The built-in table: OpenBLAS 0.3.21 on this project's 2-core AMD EPYC VM, double, one thread,
// measured by bench_calibrate (docs/performance.md, "Kernel rates"). Pass your own table,
// printed by the same tool on your machine, to predicted_time.
inline constexpr machine_rates default_machine_rates = {
    {
        /* gemm */ {2'000'000, {120'000, 45'000, 36'000}},
        /* gemv */ {1'000'000, {300'000, 250'000, 250'000}},
        /* dot */ {500'000, {300'000, 250'000, 250'000}},
        /* trmm */ {3'000'000, {250'000, 90'000, 60'000}},
        /* trmv */ {1'000'000, {600'000, 500'000, 500'000}},
        /* syrk */ {2'000'000, {200'000, 60'000, 40'000}},
        /* trsm */ {3'000'000, {250'000, 90'000, 60'000}},
        /* trsv */ {1'000'000, {600'000, 500'000, 500'000}},
        /* posv */ {5'000'000, {300'000, 100'000, 60'000}},
        /* sysv */ {8'000'000, {500'000, 200'000, 120'000}},
        /* gesv */ {8'000'000, {400'000, 120'000, 70'000}},
        /* scale_rows */ {1'000'000, {500'000, 500'000, 500'000}},
        /* scale_cols */ {1'000'000, {500'000, 500'000, 500'000}},
        /* diagonal_product */ {500'000, {500'000, 500'000, 500'000}},
        /* trtri */ {3'000'000, {400'000, 150'000, 90'000}},
        /* potri */ {5'000'000, {400'000, 120'000, 70'000}},
        /* sytri */ {8'000'000, {800'000, 300'000, 200'000}},
        /* getri */ {8'000'000, {400'000, 120'000, 70'000}},
        /* reciprocal */ {500'000, {1'000'000, 1'000'000, 1'000'000}},
    },
    60'000,
};

namespace detail {
constexpr std::size_t size_class(const kernel_call& call) noexcept {
  std::uint64_t smallest = ~std::uint64_t{0};
  for (const std::uint64_t extent : {call.rows, call.inner, call.cols}) {
    if (extent > 1 && extent < smallest) smallest = extent;
  }
  return smallest < 64 ? 0 : smallest < 512 ? 1 : 2;
}
}  // namespace detail

// Predicted time in femtoseconds: a roofline per kernel, overhead + max(flops x time per flop,
// bytes x time per byte).
struct predicted_time {
  machine_rates rates = default_machine_rates;
  std::uint64_t element_bytes = 8;
  constexpr std::uint64_t operator()(const kernel_call& call) const noexcept {
    const kernel_rate& rate = rates.kernels[static_cast<std::size_t>(call.kernel)];
    const std::uint64_t compute = ordo::detail::clamp_mul(kernel_flops(call), rate.fs_per_flop[detail::size_class(call)]);
    const std::uint64_t memory =
        ordo::detail::clamp_mul3(kernel_elements_moved(call), element_bytes, rates.fs_per_byte);
    return ordo::detail::clamp_add(rate.overhead_fs, compute > memory ? compute : memory);
  }
};

}  // namespace cost_model

// A cost model: a copyable value that gives each kernel call a cost.
template <class Model>
concept chain_cost_model = std::copyable<Model> && requires(const Model& model, const kernel_call& call) {
  { model(call) } -> std::convertible_to<std::uint64_t>;
};

}  // namespace ordo

#endif
