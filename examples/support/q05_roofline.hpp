// Question 5: why did GPUs win for deep learning, and GPU vs TPU?
//
// A roofline (Williams, Waterman and Patterson, CACM 52(4), 2009) for every product of a plan:
// a product m x k times k x n does 2mkn FLOPs and must move at least (mk + kn + mn) elements
// (read both factors, write the result once). Its arithmetic intensity, FLOPs per byte, against
// the machine's ridge point, peak FLOP/s / bandwidth, says which roof limits it: below the ridge
// it waits on memory, above it on arithmetic. Dense matrix products of deep learning sizes sit far
// above the ridge, which is what GPUs and TPUs are built for.
//
// The published machines are constexpr, so the classification of each product is a compile-time
// fact; this CPU's roofs are measured at run time.
// Used by q05_roofline.cpp and the tour.
#pragma once

#include <ordo/ordo.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string_view>

namespace ordo_examples::q05 {

struct machine {
  std::string_view name;
  double peak_flops;           // FLOP/s at this precision, dense
  double bandwidth;            // bytes/s of main memory (HBM for accelerators)
  std::size_t element_bytes;   // bf16: 2, fp64: 8
  constexpr double ridge() const { return peak_flops / bandwidth; }
};

// NVIDIA H100 Tensor Core GPU datasheet, SXM5 column: BF16 Tensor Core 1,979 TFLOPS with
// sparsity, so 989 dense; FP64 Tensor Core 67 TFLOPS; GPU memory bandwidth 3.35 TB/s (HBM3).
inline constexpr machine h100_bf16{"H100 SXM bf16", 989e12, 3.35e12, 2};
inline constexpr machine h100_fp64{"H100 SXM fp64", 67e12, 3.35e12, 8};
// Google Cloud TPU v4 documentation (and Jouppi et al., "TPU v4: an optically reconfigurable
// supercomputer for machine learning ...", ISCA 2023): 275 TFLOPS peak bf16, 1,200 GB/s HBM2.
inline constexpr machine tpu_v4_bf16{"TPU v4 bf16", 275e12, 1.2e12, 2};

static_assert(h100_bf16.ridge() > 295 && h100_bf16.ridge() < 296);  // 989 / 3.35
static_assert(h100_fp64.ridge() == 20);                             // 67 / 3.35
static_assert(tpu_v4_bf16.ridge() > 229 && tpu_v4_bf16.ridge() < 230);  // 275 / 1.2

struct roofline_point {
  std::uint64_t flops;
  std::uint64_t bytes;
  constexpr double intensity() const { return static_cast<double>(flops) / static_cast<double>(bytes); }
};

// The least traffic a product can have: each factor read once, the result written once.
constexpr roofline_point point(const ordo::planned_product& p, std::size_t element_bytes) {
  const std::uint64_t m = p.rows, k = p.inner, n = p.cols;
  return {2 * m * k * n, element_bytes * (m * k + k * n + m * n)};
}

constexpr bool compute_bound(const ordo::planned_product& p, const machine& on) {
  return point(p, on.element_bytes).intensity() >= on.ridge();
}

// The roofline's time: whichever roof is lower sets it.
constexpr double roofline_seconds(const ordo::planned_product& p, const machine& on) {
  const roofline_point x = point(p, on.element_bytes);
  return std::max(static_cast<double>(x.flops) / on.peak_flops, static_cast<double>(x.bytes) / on.bandwidth);
}

template <std::size_t N>
constexpr bool all_memory_bound(const ordo::chain_plan<N>& plan, const machine& on) {
  for (const ordo::planned_product& p : plan.products()) {
    if (compute_bound(p, on)) return false;
  }
  return true;
}

// Plans whose products are classified. Transformer sizes: 8,192 tokens (batch 4 x sequence 2,048),
// model width 4,096, MLP width 16,384, a rank-16 LoRA adapter (X A B, no nonlinearity inside).
inline constexpr auto clrs = ordo::plan_chain(std::array<std::size_t, 7>{30, 35, 15, 5, 10, 20, 25});
inline constexpr auto lora_prefill = ordo::plan_chain(std::array<std::size_t, 4>{8192, 4096, 16, 4096});
inline constexpr auto qkv_prefill = ordo::plan_chain(std::array<std::size_t, 3>{8192, 4096, 3 * 4096});
inline constexpr auto mlp_decode = ordo::plan_chain(std::array<std::size_t, 3>{1, 4096, 16384});
inline constexpr auto square = ordo::plan_chain(std::array<std::size_t, 3>{4096, 4096, 4096});

// Small products are memory-bound even where the FLOPs are cheapest.
static_assert(all_memory_bound(clrs, h100_bf16) && all_memory_bound(clrs, h100_fp64));
// A matrix-vector product does about 1 FLOP per bf16 byte (2 per element read): memory-bound
// on every machine, which is why decoding one token at a time is limited by bandwidth.
static_assert(point(mlp_decode.products()[0], 2).intensity() > 0.99 &&
              point(mlp_decode.products()[0], 2).intensity() < 1.0);
static_assert(all_memory_bound(mlp_decode, h100_bf16) && all_memory_bound(mlp_decode, h100_fp64) &&
              all_memory_bound(mlp_decode, tpu_v4_bf16));
// The planner puts the LoRA adapter in the cheap order (XA)B; both products have intensity
// about 16 in bf16, still under every ridge.
static_assert(lora_prefill.order() == "((A1A2)A3)");
static_assert(all_memory_bound(lora_prefill, h100_bf16) && all_memory_bound(lora_prefill, tpu_v4_bf16));
// A square GEMM has intensity 2n^3 / (3 n^2 b) = n/3 FLOP/byte in bf16: 1,365 at n = 4,096, far
// above the ridge of both accelerators.
static_assert(point(square.products()[0], 2).flops == 2ull * 4096 * 4096 * 4096);
static_assert(point(square.products()[0], 2).bytes == 2ull * 3 * 4096 * 4096);
static_assert(compute_bound(square.products()[0], h100_bf16) && compute_bound(square.products()[0], tpu_v4_bf16));
static_assert(compute_bound(square.products()[0], h100_fp64));
static_assert(compute_bound(qkv_prefill.products()[0], h100_bf16) &&
              compute_bound(qkv_prefill.products()[0], tpu_v4_bf16));
// Predicted time of that GEMM on H100 in bf16: the FLOP roof, 2 * 4096^3 / 989e12 s = 139 us.
static_assert(roofline_seconds(square.products()[0], h100_bf16) > 138e-6 &&
              roofline_seconds(square.products()[0], h100_bf16) < 140e-6);
// And of the decoding product: the bandwidth roof, (4096 + 4096 * 16384 + 16384) * 2 bytes /
// 3.35e12 B/s = 40.1 us.
static_assert(roofline_seconds(mlp_decode.products()[0], h100_bf16) > 40.0e-6 &&
              roofline_seconds(mlp_decode.products()[0], h100_bf16) < 40.2e-6);

using host = Kokkos::DefaultHostExecutionSpace;

// Best of a few runs: peaks are what a roofline needs, and the best run is the least disturbed.
template <class F>
double best_seconds(F&& f, int repetitions) {
  double best = 1e300;
  for (int r = 0; r < repetitions; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

// Peak double FLOP/s of this machine, as a dgemm (BLAS where ordo found one) reaches it.
inline double measure_dgemm_flops() {
  constexpr std::size_t n = 384;
  ordo::matrix<double, n, n, host> a, b, c(ordo::uninitialized);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      a(i, j) = 1.0 / static_cast<double>(1 + i + j);
      b(i, j) = 1.0 / static_cast<double>(1 + (i ^ j));
    }
  }
  const auto product = [&] {
    ordo::gemm(1.0, a, b, 0.0, c);
    Kokkos::fence();
  };
  product();
  return 2.0 * n * n * n / best_seconds(product, 15);
}

// Bandwidth of main memory: a copy of buffers larger than the caches (128 MiB each), split over
// the host threads, each running std::copy, counted as bytes read plus bytes written (as STREAM
// does). ordo::matrix asks for huge pages, which makes the first touch here 1 s faster.
inline double measure_copy_bandwidth() {
  constexpr std::size_t cols = 1024;
  const std::size_t rows = 16 * 1024;
  ordo::matrix<double, ordo::dynamic, cols, host> from(ordo::uninitialized, rows), to(ordo::uninitialized, rows);
  Kokkos::deep_copy(from.view(), 1.0);
  Kokkos::deep_copy(to.view(), 0.0);
  const std::size_t n = rows * cols;
  const double* source = from.view().data();
  double* target = to.view().data();
  const auto threads = static_cast<std::size_t>(host::concurrency());
  const auto copy = [&] {
    Kokkos::parallel_for(
        "q05 copy", Kokkos::RangePolicy<host, Kokkos::IndexType<std::size_t>>(0, threads), [&](std::size_t t) {
          std::copy(source + n * t / threads, source + n * (t + 1) / threads, target + n * t / threads);
        });
    Kokkos::fence();
  };
  copy();
  return 2.0 * static_cast<double>(n * sizeof(double)) / best_seconds(copy, 5);
}

template <std::size_t N>
void print_plan(std::string_view title, const ordo::chain_plan<N>& plan, const std::array<machine, 4>& machines) {
  std::printf("\n%.*s, plan %.*s\n", static_cast<int>(title.size()), title.data(), static_cast<int>(plan.order().size()),
              plan.order().data());
  std::printf("  %-20s %11s", "m x k x n", "FLOPs");
  for (const machine& on : machines) std::printf(" | %-19.*s", static_cast<int>(on.name.size()), on.name.data());
  std::printf("\n  %-20s %11s", "", "");
  for (std::size_t i = 0; i < machines.size(); ++i) std::printf(" | %-19s", "FLOP/byte  bound");
  std::printf("\n");
  for (const ordo::planned_product& p : plan.products()) {
    char shape[64];
    std::snprintf(shape, sizeof shape, "%zux%zux%zu", p.rows, p.inner, p.cols);
    std::printf("  %-20s %11.4g", shape, static_cast<double>(2 * p.multiplications()));
    for (const machine& on : machines) {
      std::printf(" | %7.1f  %-10s", point(p, on.element_bytes).intensity(), compute_bound(p, on) ? "compute" : "memory");
    }
    std::printf("\n");
  }
}

// The whole answer, as q05_roofline prints it. Every classification in it is a static_assert above.
inline void demonstrate() {
  std::printf("Question 5: why GPUs (and TPUs) win for deep learning: a roofline of every planned product\n\n");
  const double cpu_flops = measure_dgemm_flops();
  const double cpu_bandwidth = measure_copy_bandwidth();
  const machine cpu{"this CPU fp64", cpu_flops, cpu_bandwidth, 8};
  std::printf("this CPU (%d threads), measured: dgemm 384^3 %.1f GFLOP/s, copy %.1f GB/s (read + write)\n",
              host::concurrency(), cpu_flops / 1e9, cpu_bandwidth / 1e9);
  const std::array<machine, 4> machines{h100_bf16, h100_fp64, tpu_v4_bf16, cpu};
  std::printf("%-15s %14s %12s %18s\n", "machine", "peak TFLOP/s", "TB/s", "ridge FLOP/byte");
  for (const machine& on : machines) {
    std::printf("%-15.*s %14.3f %12.3f %18.1f\n", static_cast<int>(on.name.size()), on.name.data(),
                on.peak_flops / 1e12, on.bandwidth / 1e12, on.ridge());
  }

  print_plan("CLRS chain 30,35,15,5,10,20,25", clrs, machines);
  print_plan("LoRA adapter X A B, 8192 tokens, width 4096, rank 16", lora_prefill, machines);
  print_plan("QKV projection, 8192 tokens x 4096 x 12288", qkv_prefill, machines);
  print_plan("MLP up-projection while decoding one token: 1 x 4096 x 16384", mlp_decode, machines);
  print_plan("square GEMM 4096^3", square, machines);

  const auto& big = square.products()[0];
  std::printf("\nthe 4096^3 GEMM at the roofline: H100 bf16 %.0f us, TPU v4 bf16 %.0f us, H100 fp64 %.0f us, "
              "this CPU fp64 %.0f ms\n",
              1e6 * roofline_seconds(big, h100_bf16), 1e6 * roofline_seconds(big, tpu_v4_bf16),
              1e6 * roofline_seconds(big, h100_fp64), 1e3 * roofline_seconds(big, cpu));
  std::printf("one H100 against this CPU: %.0fx the fp64 peak, %.0fx in bf16 on tensor cores, %.0fx the bandwidth.\n",
              h100_fp64.peak_flops / cpu.peak_flops, h100_bf16.peak_flops / cpu.peak_flops,
              h100_bf16.bandwidth / cpu.bandwidth);
  std::printf("Deep learning's large products are far right of every ridge, so raw FLOP/s decides, and\n"
              "GPUs (and TPUs, with a similar ridge at lower peak) bring orders of magnitude more of it;\n"
              "small or matrix-vector products stay memory-bound everywhere and gain only bandwidth.\n");
}

}  // namespace ordo_examples::q05
