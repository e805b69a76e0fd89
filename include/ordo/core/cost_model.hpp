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

// The built-in table: OpenBLAS 0.3.21 (pthreads, 2 threads) on this project's 2-core AMD EPYC
// VM (AVX-512), double, measured by bench_calibrate at 8da1592 (docs/performance.md, "Kernel
// rates"); the scalings are plain loops. Pass the table bench_calibrate prints on your machine to
// predicted_time for plans ranked by your machine's speeds.
inline constexpr machine_rates default_machine_rates = {
    {
        /* gemm */ {80'000'000, {31'173, 9'241, 8'330}},
        /* gemv */ {40'000'000, {29'296, 26'206, 61'241}},
        /* dot */ {30'000'000, {234'374, 97'656, 395'996}},
        /* trmm */ {71'000'000, {32'684, 10'469, 8'654}},
        /* trmv */ {80'000'000, {586'914, 42'938, 94'325}},
        /* syrk */ {90'000'000, {34'682, 14'915, 9'698}},
        /* trsm */ {80'000'000, {55'908, 11'717, 9'207}},
        /* trsv */ {70'000'000, {273'437, 75'195, 174'716}},
        /* posv */ {190'000'000, {59'979, 13'099, 9'760}},
        /* sysv */ {200'000'000, {101'486, 40'255, 21'154}},
        /* gesv */ {80'000'000, {77'362, 15'838, 10'023}},
        /* scale_rows */ {20'000'000, {195'312, 187'042, 332'880}},
        /* scale_cols */ {20'000'000, {146'484, 157'394, 276'157}},
        /* diagonal_product */ {20'000'000, {468'749, 312'500, 752'929}},
        /* trtri */ {70'000'000, {226'080, 27'960, 12'413}},
        /* potri */ {160'000'000, {185'821, 20'956, 11'286}},
        /* sytri */ {50'000'000, {747'589, 38'118, 18'074}},
        /* getri */ {140'000'000, {119'354, 19'822, 12'317}},
        /* reciprocal */ {20'000'000, {625'000, 585'937, 596'679}},
    },
    26'725,
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
// bytes x time per byte). A solve (POSV, SYSV, GESV) is its factorization, at its own rate for the
// factor's order, plus its two triangular solves at TRSM's rate for the right-hand side's size:
// a factorization of order 3000 runs at the large-matrix rate even for one right-hand side.
struct predicted_time {
  machine_rates rates = default_machine_rates;
  std::uint64_t element_bytes = 8;
  constexpr std::uint64_t operator()(const kernel_call& call) const noexcept {
    using ordo::detail::clamp_add, ordo::detail::clamp_mul, ordo::detail::clamp_mul3;
    const kernel_rate& rate = rates.kernels[static_cast<std::size_t>(call.kernel)];
    std::uint64_t compute = 0;
    if (call.kernel == chain_kernel::posv || call.kernel == chain_kernel::sysv || call.kernel == chain_kernel::gesv) {
      const std::uint64_t k = call.inner;
      const std::uint64_t factorization = call.kernel == chain_kernel::gesv ? ordo::detail::lu_flops(k)
                                                                            : ordo::detail::cholesky_flops(k);
      const kernel_rate& solve = rates.kernels[static_cast<std::size_t>(chain_kernel::trsm)];
      compute = clamp_add(clamp_mul(factorization, rate.fs_per_flop[detail::size_class({call.kernel, k, k, k})]),
                          clamp_mul(clamp_mul(2, clamp_mul3(call.rows, k, call.cols)),
                                    solve.fs_per_flop[detail::size_class(call)]));
    } else {
      compute = clamp_mul(kernel_flops(call), rate.fs_per_flop[detail::size_class(call)]);
    }
    const std::uint64_t memory = clamp_mul3(kernel_elements_moved(call), element_bytes, rates.fs_per_byte);
    return clamp_add(rate.overhead_fs, compute > memory ? compute : memory);
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
