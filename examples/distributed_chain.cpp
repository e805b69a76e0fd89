// needs: mpi
// needs: scalapack
// Run with: mpirun -np 4 build/default/examples/distributed_chain
//
// A chain too big for one node, here small enough to check: A1 (100 x 50), A2^T (50 x 100 stored
// 100 x 50), A3 (100 x 400) spread over the ranks in ScaLAPACK's block-cyclic layout, planned with
// communication in the cost and multiplied with p?gemm in the planned order. On one rank the
// flop count decides; on a 2 x 2 grid SUMMA's broadcasts of the 400-wide panels change the order
// (with a network's alpha and beta; docs/distributed.md has this machine's). Rank 0 checks the
// result against the integer product computed alone.

#include <ordo/mpi/distributed_chain.hpp>

#include <mpi.h>

#include <cstdio>
#include <vector>

namespace {

// A cluster-like machine: 20 us a message, 1 ns a byte, 0.1 ns a flop on each rank.
constexpr ordo::cost_model::summa network{1, 1, 64, 100'000, 20'000'000'000, 1'000'000, 8};

// The same plans at compile time, from static shapes and grids.
constexpr std::array<std::size_t, 4> dims{100, 50, 100, 400};
constexpr std::array<ordo::chain_operand, 3> ops{ordo::operands::general, ordo::operands::general.transpose(),
                                                 ordo::operands::general};
constexpr auto on_one_rank = ordo::plan_structured_chain(dims, ops, network);
constexpr auto on_two_by_two = ordo::plan_structured_chain(
    dims, ops, ordo::cost_model::summa{2, 2, 64, network.fs_per_flop, network.alpha_fs, network.beta_fs_per_byte, 8});
static_assert(on_one_rank.order() == "(A1(A2A3))");
static_assert(on_two_by_two.order() == "((A1A2)A3)");

std::vector<double> values(std::size_t rows, std::size_t cols, int seed) {
  std::vector<double> v(rows * cols);
  for (std::size_t e = 0; e < v.size(); ++e) v[e] = static_cast<double>((static_cast<int>(e) * 7 + seed) % 5 - 2);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, failed = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  {
    const ordo::mpi::process_grid grid(MPI_COMM_WORLD);  // 4 ranks: 2 x 2
    using dmatrix = ordo::mpi::distributed_matrix<double>;
    const std::vector<double> a1 = values(100, 50, 1), a2 = values(100, 50, 2), a3 = values(100, 400, 3);
    const dmatrix d1 = dmatrix::scatter(grid, a1, 100, 50, 16), d2 = dmatrix::scatter(grid, a2, 100, 50, 16),
                  d3 = dmatrix::scatter(grid, a3, 100, 400, 16);
    const auto plan = ordo::mpi::plan_chain(network, d1, ordo::mpi::transpose(d2), d3);
    dmatrix result(grid, 100, 400, 16);
    ordo::mpi::evaluate(plan, result, d1, ordo::mpi::transpose(d2), d3);
    const std::vector<double> gathered = result.gather();
    if (rank == 0) {
      // The single-node product of the same integers (exact in double).
      for (std::size_t i = 0; i < 100; ++i)
        for (std::size_t j = 0; j < 400; ++j) {
          double s = 0;
          for (std::size_t k = 0; k < 100; ++k) {
            double t = 0;
            for (std::size_t l = 0; l < 50; ++l) t += a1[i * 50 + l] * a2[k * 50 + l];  // (A1 A2^T)(i, k)
            s += t * a3[k * 400 + j];
          }
          if (s != gathered[i * 400 + j]) failed = 1;
        }
      std::printf("%d ranks on a %dx%d grid: %s with %s (%.3g ms predicted on the model's network); %s\n",
                  grid.ranks(), grid.rows(), grid.cols(), std::string(plan.order()).c_str(),
                  std::string(plan.kernels()).c_str(), static_cast<double>(plan.cost()) * 1e-12,
                  failed ? "WRONG" : "equal to the single-node product");
    }
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed;
}
