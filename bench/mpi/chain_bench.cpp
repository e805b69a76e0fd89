// Distributed chains under mpirun -np P (bench/run mpi): calibrates ordo::cost_model::summa on this
// machine (alpha and beta from MPI_Bcast on the grid's rows and columns, the time per flop from a
// p?gemm on one rank's share), then, for each chain, plans it under that model (ordo's order) and
// under the flop count alone (the one-rank order), predicts both and times both with
// ordo::mpi::evaluate. Each time is the slowest rank's median; rank 0 prints JSON lines.
//   mpirun -np 4 bench_mpi_chain [--seconds 1]
#include "bench_support.hpp"
#include "mpi_timing.hpp"

#include <ordo/mpi/distributed_chain.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace {

// alpha and beta of one broadcast stage: MPI_Bcast of 8 bytes and of 4 MiB on the world, divided
// by its ceil(log2 P) stages (SUMMA's broadcasts run along rows and columns, binomial trees).
std::pair<double, double> broadcast_alpha_beta(double seconds) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size == 1) return {0.0, 0.0};
  const double stages = static_cast<double>(ordo::cost_model::summa::ceil_log2(static_cast<std::uint64_t>(size)));
  std::vector<char> small(8), large(4 << 20);
  const double t_small = ordo_bench::slowest_median_seconds([&] { MPI_Bcast(small.data(), 8, MPI_CHAR, 0, MPI_COMM_WORLD); }, seconds, 50, MPI_COMM_WORLD);
  const double t_large = ordo_bench::slowest_median_seconds([&] { MPI_Bcast(large.data(), static_cast<int>(large.size()), MPI_CHAR, 0, MPI_COMM_WORLD); },
                               seconds, 10, MPI_COMM_WORLD);
  return {t_small / stages, (t_large - t_small) / stages / static_cast<double>(large.size())};
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  double seconds = 1.0;
  ordo_bench::for_each_option(argc, argv, [&](std::string_view a, const std::string& v) {
    if (a == "--seconds") seconds = std::stod(v);
  });
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  {
    const ordo::mpi::process_grid grid(MPI_COMM_WORLD);
    constexpr std::size_t block = 64;
    // The time per flop of one rank's share of a p?gemm (each rank computes concurrently, as in a chain).
    const std::size_t n = 512;
    const ordo::mpi::distributed_matrix<double> a(grid, n, n, block), b(grid, n, n, block);
    ordo::mpi::distributed_matrix<double> c(grid, n, n, block);
    const auto square = ordo::mpi::plan_chain(ordo::cost_model::summa{1, 1, block, 1, 0, 0, 8}, a, b);
    const double t_gemm = ordo_bench::slowest_median_seconds([&] { ordo::mpi::evaluate(square, c, a, b); }, seconds, 5, MPI_COMM_WORLD);
    const auto [alpha, beta] = broadcast_alpha_beta(seconds);
    // Only the compute share: what the model's own broadcasts of this product would take is removed.
    ordo::cost_model::summa machine{};
    machine.alpha_fs = static_cast<std::uint64_t>(alpha * 1e15);
    machine.beta_fs_per_byte = static_cast<std::uint64_t>(beta * 1e15);
    machine.fs_per_flop = 1;
    const auto shaped = ordo::mpi::grid_cost_model(grid, block, machine);
    const ordo::kernel_call call{ordo::chain_kernel::gemm, n, n, n};
    const double comm_fs = static_cast<double>(shaped(call) - shaped.compute_fs(call));
    const double flops_per_rank = 2.0 * n * n * n / size;
    machine.fs_per_flop = static_cast<std::uint64_t>(std::max(1.0, (t_gemm * 1e15 - comm_fs) / flops_per_rank));
    if (rank == 0) {
      std::printf("{\"ranks\":%d,\"grid\":[%d,%d],\"alpha_s\":%.6g,\"beta_s_per_byte\":%.6g,\"s_per_flop\":%.6g}\n", size,
                  grid.rows(), grid.cols(), alpha, beta, machine.fs_per_flop * 1e-15);
    }
    const ordo::cost_model::summa model = ordo::mpi::grid_cost_model(grid, block, machine);
    ordo::cost_model::summa flops_only = model;
    flops_only.alpha_fs = 0, flops_only.beta_fs_per_byte = 0;
    const std::vector<std::vector<std::size_t>> chains = {
        {1000, 500, 1000, 4000}, {8, 2048, 16, 2048, 16}, {16, 4096, 64, 4096}, {2000, 100, 2000, 100, 2000},
        {128, 64, 1024, 128, 2048}, {2048, 128, 64, 2048, 128}};
    for (const auto& dims : chains) {
      std::vector<ordo::mpi::distributed_matrix<double>> m;
      for (std::size_t k = 0; k + 1 < dims.size(); ++k) m.emplace_back(grid, dims[k], dims[k + 1], block);
      ordo::mpi::distributed_matrix<double> out(grid, dims.front(), dims.back(), block);
      const auto run = [&](const ordo::cost_model::summa& planning, const char* label) {
        const auto plan = dims.size() == 4 ? ordo::plan_structured_chain(std::span<const std::size_t>(dims),
                                                                         std::vector<ordo::chain_operand>(3, ordo::operands::general), planning)
                                           : ordo::plan_structured_chain(std::span<const std::size_t>(dims),
                                                                         std::vector<ordo::chain_operand>(4, ordo::operands::general), planning);
        std::uint64_t predicted = 0;
        for (const auto& p : plan.products()) predicted += model(ordo::kernel_call{p.kernel, p.rows, p.inner, p.cols});
        const double t = dims.size() == 4 ? ordo_bench::slowest_median_seconds([&] { ordo::mpi::evaluate(plan, out, m[0], m[1], m[2]); }, seconds, 3, MPI_COMM_WORLD)
                                          : ordo_bench::slowest_median_seconds([&] { ordo::mpi::evaluate(plan, out, m[0], m[1], m[2], m[3]); }, seconds, 3,
                                                  MPI_COMM_WORLD);
        if (rank == 0) {
          std::string d;
          for (const auto x : dims) d += (d.empty() ? "" : "x") + std::to_string(x);
          std::printf("{\"ranks\":%d,\"chain\":\"%s\",\"plan\":\"%s\",\"order\":\"%s\",\"predicted_s\":%.6g,\"measured_s\":%.6g}\n",
                      size, d.c_str(), label, std::string(plan.order()).c_str(), predicted * 1e-15, t);
        }
      };
      run(model, "ordo");
      run(flops_only, "flops");
    }
  }
  MPI_Finalize();
  return 0;
}
