// One run under mpirun -np P: (1) MPI_Allreduce of 8 bytes to 4 MiB, for the alpha + beta n model
// of docs/distributed.md; (2) one training step (forward + backward) of batch norm on a global
// (32, 64, 56, 56) float batch cut among the ranks: ordo::nn on each rank's part alone (local
// statistics) and ordo::mpi (the whole batch's). Rank 0 prints one JSON object. Each rank's time
// is its median; a step is as slow as its slowest rank, so the maximum over ranks is reported.
//   mpirun -np 2 bench_mpi [--seconds 2]

#include "bench_support.hpp"

#include <ordo/mpi.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace {

// Seconds with 9 significant digits (std::to_string keeps only microseconds).
std::string seconds_text(double t) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", t);
  return text;
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Median seconds of f over at least `rounds` rounds and `seconds` seconds, every rank doing the
// same number of rounds (rank 0 decides when to stop), then the maximum over ranks.
template <class F>
double timed(F&& f, double seconds, int rounds) {
  std::vector<double> samples;
  const double start = now();
  for (int stop = 0; !stop;) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = now();
    f();
    samples.push_back(now() - t0);
    stop = static_cast<int>(samples.size()) >= rounds && now() - start >= seconds;
    MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
  double mine = ordo_bench::median(samples), slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    double seconds = 2;
    for (int i = 1; i + 1 < argc; ++i)
      if (std::string(argv[i]) == "--seconds") seconds = std::stod(argv[i + 1]);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    std::string json = "{\"ranks\": " + std::to_string(ranks) + ", \"threads\": " +
                       std::to_string(Kokkos::DefaultExecutionSpace().concurrency()) + ", \"allreduce\": [";

    // (1) MPI_Allreduce(MPI_SUM) of n doubles.
    for (std::size_t n = 1; n <= (std::size_t{1} << 19); n *= 8) {
      std::vector<double> buffer(n, 1.0);
      const double t = timed([&] { MPI_Allreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM,
                                                 MPI_COMM_WORLD); },
                             seconds / 4, 20);
      json += (n == 1 ? "" : ", ") + std::string("[") + std::to_string(n * sizeof(double)) + ", " +
              seconds_text(t) + "]";
    }
    json += "]";

    // (2) One training step on a (32, 64, 56, 56) batch cut among the ranks.
    constexpr int batch = 32, channels = 64, side = 56;
    const int begin = batch * rank / ranks, end = batch * (rank + 1) / ranks;
    using tensor = Kokkos::View<float****, Kokkos::LayoutRight>;
    tensor x("x", static_cast<std::size_t>(end - begin), channels, side, side);
    tensor y("y", x.extent(0), channels, side, side), dy("dy", x.extent(0), channels, side, side),
        dx("dx", x.extent(0), channels, side, side);
    {
      auto hx = Kokkos::create_mirror_view(x);
      auto hdy = Kokkos::create_mirror_view(dy);
      ordo_bench::splitmix64 random{static_cast<std::uint64_t>(rank) + 1};
      for (std::size_t i = 0; i < hx.size(); ++i) {
        hx.data()[i] = static_cast<float>(ordo_bench::unit_double(random.next()) * 2 - 1);
        hdy.data()[i] = static_cast<float>(ordo_bench::unit_double(random.next()) * 2 - 1);
      }
      Kokkos::deep_copy(x, hx);
      Kokkos::deep_copy(dy, hdy);
    }
    Kokkos::View<float*> gamma("gamma", channels), beta("beta", channels), running_mean("rm", channels),
        running_var("rv", channels), dgamma("dgamma", channels), dbeta("dbeta", channels);
    Kokkos::deep_copy(gamma, 1.0f);
    Kokkos::deep_copy(running_var, 1.0f);
    const double local = timed(
        [&] {
          const auto saved = ordo::nn::batch_norm_forward_training(x, gamma, beta, running_mean, running_var, y);
          ordo::nn::batch_norm_backward(dy, x, gamma, saved, dx, dgamma, dbeta);
        },
        seconds, 10);
    const double sync = timed(
        [&] {
          const auto saved =
              ordo::mpi::batch_norm_forward_training(MPI_COMM_WORLD, x, gamma, beta, running_mean, running_var, y);
          ordo::mpi::batch_norm_backward(MPI_COMM_WORLD, dy, x, gamma, saved, dx, dgamma, dbeta);
        },
        seconds, 10);
    // The messages alone: the agreement and payload allreduces of both steps, on tiny inputs.
    tensor tiny("tiny", 2, channels, 1, 1), tiny_y("tiny_y", 2, channels, 1, 1), tiny_dy("tiny_dy", 2, channels, 1, 1),
        tiny_dx("tiny_dx", 2, channels, 1, 1);
    Kokkos::deep_copy(tiny, 1.0f);
    const double messages = timed(
        [&] {
          const auto saved = ordo::mpi::batch_norm_forward_training(MPI_COMM_WORLD, tiny, gamma, beta, running_mean,
                                                                    running_var, tiny_y);
          ordo::mpi::batch_norm_backward(MPI_COMM_WORLD, tiny_dy, tiny, gamma, saved, tiny_dx, dgamma, dbeta);
        },
        seconds / 2, 50);
    json += ", \"channels\": " + std::to_string(channels) + ", \"local_step\": " + seconds_text(local) +
            ", \"sync_step\": " + seconds_text(sync) + ", \"sync_tiny_step\": " + seconds_text(messages) + "}";
    if (rank == 0) std::printf("%s\n", json.c_str());
  }
  MPI_Finalize();
  return 0;
}
