// One run under mpirun -np P (bench/run mpi): MPI_Allreduce of 8 bytes to 2 MiB, then one training
// step (forward + backward) of batch norm on a (32, 64, 56, 56) float batch cut among the ranks:
// ordo::nn on each rank's part alone and ordo::mpi (the whole batch's statistics). Each time is
// the rank's median, then the slowest rank's; rank 0 prints one JSON line.
//   mpirun -np 2 bench_mpi [--seconds 2]
#include "bench_support.hpp"
#include "mpi_timing.hpp"

#include <ordo/mpi.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

// The slowest rank's median seconds of f (mpi_timing.hpp), as JSON's number.
template <class F>
std::string timed(F&& f, double seconds, int rounds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", ordo_bench::slowest_median_seconds(f, seconds, rounds));
  return text;
}

}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    double seconds = 2;
    ordo_bench::for_each_option(argc, argv, [&](std::string_view name, const std::string& value) {
      if (name != "--seconds") throw std::invalid_argument("unknown option " + std::string(name));
      seconds = std::stod(value);
    });
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    std::string json = "{\"ranks\": " + std::to_string(ranks) + ", \"allreduce\": [";
    for (std::size_t n = 1; n <= (std::size_t{1} << 18); n *= 8) {  // MPI_Allreduce(MPI_SUM) of n doubles
      std::vector<double> buffer(n, 1.0);
      json += (n == 1 ? "[" : ", [") + std::to_string(n * sizeof(double)) + ", " + timed([&] {
                MPI_Allreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
              }, seconds / 4, 20) + "]";
    }
    // This rank's part of a (32, 64, 56, 56) batch, and a (2, 64, 1, 1) part: the messages alone
    // (the agreement and payload allreduces of both steps).
    using tensor = Kokkos::View<float****, Kokkos::LayoutRight>;
    std::vector<tensor> part, tiny;
    for (const std::string name : {"x", "y", "dy", "dx"}) {
      part.emplace_back(name, static_cast<std::size_t>(32 * (rank + 1) / ranks - 32 * rank / ranks), 64, 56, 56);
      tiny.emplace_back(name, 2, 64, 1, 1);
    }
    Kokkos::deep_copy(tiny[0], 1.0f);
    auto hx = Kokkos::create_mirror_view(part[0]), hdy = Kokkos::create_mirror_view(part[2]);
    ordo_bench::splitmix64 random{static_cast<std::uint64_t>(rank) + 1};
    for (std::size_t i = 0; i < hx.size(); ++i) {
      for (auto* h : {&hx, &hdy}) h->data()[i] = static_cast<float>(ordo_bench::unit_double(random.next()) * 2 - 1);
    }
    Kokkos::deep_copy(part[0], hx);
    Kokkos::deep_copy(part[2], hdy);
    Kokkos::View<float*> gamma("gamma", 64), beta("beta", 64), mean("rm", 64), var("rv", 64), dgamma("dg", 64),
        dbeta("db", 64);
    Kokkos::deep_copy(gamma, 1.0f);
    Kokkos::deep_copy(var, 1.0f);
    const auto local = [&](const std::vector<tensor>& t) {
      ordo::nn::batch_norm_backward(t[2], t[0], gamma, ordo::nn::batch_norm_forward_training(t[0], gamma, beta, mean, var, t[1]),
                                    t[3], dgamma, dbeta);
    };
    const auto sync = [&](const std::vector<tensor>& t) {
      const auto saved = ordo::mpi::batch_norm_forward_training(MPI_COMM_WORLD, t[0], gamma, beta, mean, var, t[1]);
      ordo::mpi::batch_norm_backward(MPI_COMM_WORLD, t[2], t[0], gamma, saved, t[3], dgamma, dbeta);
    };
    json += "], \"channels\": 64, \"local_step\": " + timed([&] { local(part); }, seconds, 10);
    json += ", \"sync_step\": " + timed([&] { sync(part); }, seconds, 10);
    json += ", \"sync_tiny_step\": " + timed([&] { sync(tiny); }, seconds / 2, 50) + "}";
    if (rank == 0) std::printf("%s\n", json.c_str());
  }
  MPI_Finalize();
  return 0;
}
