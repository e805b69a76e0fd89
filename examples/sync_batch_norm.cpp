// needs: mpi
// Run with: mpirun -np 4 build/default/examples/sync_batch_norm
//
// Each rank holds part of a batch of 32 images, and the parts differ: a data loader that hands
// out samples in class order gives each rank its own slice of the distribution. Batch norm on
// each rank alone normalizes with that rank's statistics; ordo::mpi::batch_norm_forward_training
// normalizes with the whole batch's, exactly as one process holding all 32 images would.

#include <ordo/mpi.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>
#include "support/kokkos_session.hpp"

namespace {

using host = Kokkos::DefaultHostExecutionSpace;
using tensor = Kokkos::View<float****, Kokkos::LayoutRight, host::memory_space>;
using channel_values = Kokkos::View<float*, host::memory_space>;

constexpr int batch = 32, channels = 4, height = 8, width = 8;

// Sample i of the whole batch: channel c has mean 2c plus a drift with i (the class order).
float pixel(int i, int c, int y, int x) {
  std::mt19937 random(static_cast<unsigned>(((i * channels + c) * height + y) * width + x));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  return 2.0f * static_cast<float>(c) + 0.2f * static_cast<float>(i) + normal(random);
}

tensor samples(int begin, int end) {
  tensor t("x", static_cast<std::size_t>(end - begin), channels, height, width);
  for (int i = begin; i < end; ++i)
    for (int c = 0; c < channels; ++c)
      for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x)
          t(static_cast<std::size_t>(i - begin), static_cast<std::size_t>(c), static_cast<std::size_t>(y),
            static_cast<std::size_t>(x)) = pixel(i, c, y, x);
  return t;
}

struct layer {
  channel_values gamma{"gamma", channels}, beta{"beta", channels}, running_mean{"running_mean", channels},
      running_var{"running_var", channels};
  layer() {
    Kokkos::deep_copy(gamma, 1.0f);
    Kokkos::deep_copy(running_var, 1.0f);
  }
};

}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int failures = 0;
  {
    const ordo_examples::kokkos_session kokkos(argc, argv);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const int begin = batch * rank / ranks, end = batch * (rank + 1) / ranks;
    const tensor x = samples(begin, end);
    const tensor y_local("y_local", x.extent(0), channels, height, width), y_sync("y_sync", x.extent(0), channels,
                                                                                   height, width);
    layer local, sync, single;

    // Per-rank batch norm: this rank's statistics.
    const auto local_saved = ordo::nn::batch_norm_forward_training(x, local.gamma, local.beta, local.running_mean,
                                                                   local.running_var, y_local);
    // Synchronized: the whole batch's statistics, on every rank.
    const auto sync_saved = ordo::mpi::batch_norm_forward_training(MPI_COMM_WORLD, x, sync.gamma, sync.beta,
                                                                   sync.running_mean, sync.running_var, y_sync);
    // What one process holding all 32 images computes (every rank can, to compare).
    const tensor all = samples(0, batch);
    const tensor y_all("y_all", batch, channels, height, width);
    const auto single_saved = ordo::nn::batch_norm_forward_training(all, single.gamma, single.beta, single.running_mean,
                                                                    single.running_var, y_all);

    double local_drift = 0, sync_error = 0;
    for (int c = 0; c < channels; ++c) {
      const auto cs = static_cast<std::size_t>(c);
      local_drift = std::fmax(local_drift, std::fabs(local_saved.mean(cs) - single_saved.mean(cs)));
      sync_error = std::fmax(sync_error, std::fabs(sync_saved.mean(cs) - single_saved.mean(cs)) /
                                             std::fabs(single_saved.mean(cs)));
      sync_error = std::fmax(sync_error, std::fabs(sync_saved.invstd(cs) - single_saved.invstd(cs)) /
                                             single_saved.invstd(cs));
    }
    double y_error = 0;
    for (std::size_t i = 0; i < x.extent(0); ++i)
      for (std::size_t c = 0; c < channels; ++c)
        for (std::size_t h = 0; h < height; ++h)
          for (std::size_t w = 0; w < width; ++w)
            y_error = std::fmax(y_error, std::fabs(static_cast<double>(y_sync(i, c, h, w)) -
                                                   y_all(i + static_cast<std::size_t>(begin), c, h, w)));
    for (int r = 0; r < ranks; ++r) {
      if (r == rank) {
        std::printf("rank %d: samples %2d..%2d  channel-0 mean: local %7.4f, synchronized %7.4f, one process %7.4f\n",
                    rank, begin, end - 1, local_saved.mean(0), sync_saved.mean(0), single_saved.mean(0));
        std::printf("        largest drift of the local means %.3g; synchronized vs one process: statistics %.2g "
                    "(relative), y %.2g\n",
                    local_drift, sync_error, y_error);
        std::fflush(stdout);
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
    // Synchronized statistics are the whole batch's up to rounding (Chan's merge in double).
    if (sync_error > 1e-12 || y_error > 1e-5) ++failures;
    if (ranks > 1 && local_drift < 0.1) ++failures;  // the parts really differ

    // Exact sums do not depend on how many ranks hold the data; float sums added rank by rank do.
    Kokkos::View<float*, host::memory_space> part("part", x.size());
    for (std::size_t i = 0; i < x.size(); ++i) part(i) = x.data()[i] * 1e3f;
    const float exact = ordo::mpi::sum(MPI_COMM_WORLD, part);
    Kokkos::View<float*, host::memory_space> whole("whole", all.size());
    for (std::size_t i = 0; i < all.size(); ++i) whole(i) = all.data()[i] * 1e3f;
    const float exact_single = ordo::sum(whole);
    float naive_local = 0, naive = 0;
    for (std::size_t i = 0; i < part.size(); ++i) naive_local += part(i);
    MPI_Allreduce(&naive_local, &naive, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
      std::printf("sum of the batch x 1000: ordo::mpi::sum %.9g, one process %.9g (%s); float loops + MPI_SUM %.9g\n",
                  static_cast<double>(exact), static_cast<double>(exact_single),
                  exact == exact_single ? "same bits" : "DIFFERENT", static_cast<double>(naive));
    }
    if (exact != exact_single) ++failures;
  }
  int worst = 0;
  MPI_Allreduce(&failures, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst == 0 ? 0 : 1;
}
