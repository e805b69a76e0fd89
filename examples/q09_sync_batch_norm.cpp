// needs: mpi
// Question 9: a model that works on 1 GPU gives poor results on 8. Why?
// Run with: mpirun -np 4 build/default/examples/q09_sync_batch_norm (the test suite does).
//
// Two of the classic causes, measured on the first 1, 2 and 4 ranks of the run:
//  1. Batch-norm statistics computed per device cover 1/p of the batch. With i.i.d. samples the
//     per-device mean is a noisier estimate (its error grows like sqrt(p)); with a data loader
//     that hands out samples in order, each device sees a different distribution altogether.
//     Synchronized batch norm (ordo::mpi) gives every device the whole batch's statistics.
//  2. Reductions whose bits depend on how many devices took part: float sums added device by
//     device change with p; ordo::mpi::sum (exact) does not.
// The third classic cause, the learning rate not scaled with the global batch size, is a
// training-recipe matter that no kernel can fix.

#include <ordo/mpi.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>
#include "support/kokkos_session.hpp"

namespace {

using host = Kokkos::DefaultHostExecutionSpace;
using memory = host::memory_space;
using tensor = Kokkos::View<float**, Kokkos::LayoutRight, memory>;  // (N, C)
using channel_values = Kokkos::View<float*, memory>;

constexpr int batch = 64, channels = 16;

// The whole batch, the same on every rank: channel c is N(c, 1); "ordered" adds a trend along the
// batch, as when samples arrive sorted by class.
std::vector<float> make_batch(bool ordered) {
  std::mt19937 random(2024);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(batch * channels));
  for (int i = 0; i < batch; ++i)
    for (int c = 0; c < channels; ++c)
      x[static_cast<std::size_t>(i * channels + c)] =
          static_cast<float>(c) + normal(random) + (ordered ? 4.0f * static_cast<float>(i) / batch : 0.0f);
  return x;
}

tensor rows(const std::vector<float>& all, int begin, int end) {
  tensor t("x", static_cast<std::size_t>(end - begin), channels);
  for (int i = begin; i < end; ++i)
    for (int c = 0; c < channels; ++c)
      t(static_cast<std::size_t>(i - begin), static_cast<std::size_t>(c)) = all[static_cast<std::size_t>(i * channels + c)];
  return t;
}

struct statistics {
  std::vector<double> mean;
};

// Batch-norm statistics of rows [begin, end), locally or synchronized over comm.
statistics batch_norm_means(MPI_Comm comm, const tensor& x, bool synchronized) {
  channel_values gamma("gamma", channels), beta("beta", channels), rm("rm", channels), rv("rv", channels);
  Kokkos::deep_copy(gamma, 1.0f);
  Kokkos::deep_copy(rv, 1.0f);
  tensor y("y", x.extent(0), channels);
  const auto saved = synchronized ? ordo::mpi::batch_norm_forward_training(comm, x, gamma, beta, rm, rv, y)
                                  : ordo::nn::batch_norm_forward_training(x, gamma, beta, rm, rv, y);
  statistics s;
  for (int c = 0; c < channels; ++c) s.mean.push_back(saved.mean(static_cast<std::size_t>(c)));
  return s;
}

// The largest error of any rank's channel means against the whole batch's, the same on every rank.
double worst_error(MPI_Comm comm, const statistics& s, const std::vector<double>& truth) {
  double mine = 0, worst = 0;
  for (std::size_t c = 0; c < truth.size(); ++c) mine = std::fmax(mine, std::fabs(s.mean[c] - truth[c]));
  MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, comm);
  return worst;
}

}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int failures = 0;
  {
    const ordo_examples::kokkos_session kokkos(argc, argv);
    int world_rank = 0, world = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    const bool speaker = world_rank == 0;
    if (speaker) {
      std::printf("Question 9: works on 1 GPU, poor results on %d. Why?\n\n", world);
      std::printf("1. Batch-norm statistics per device: a global batch of %d samples, %d channels, cut among p ranks.\n",
                  batch, channels);
      std::printf("   worst error of a rank's channel mean vs the whole batch's\n");
      std::printf("   %-24s %4s %14s %14s\n", "data", "p", "per-rank BN", "synchronized");
    }
    for (const bool ordered : {false, true}) {
      const auto all = make_batch(ordered);
      // The whole batch's means, in long double: the oracle.
      std::vector<double> truth(channels);
      for (int c = 0; c < channels; ++c) {
        long double sum = 0;
        for (int i = 0; i < batch; ++i) sum += all[static_cast<std::size_t>(i * channels + c)];
        truth[static_cast<std::size_t>(c)] = static_cast<double>(sum / batch);
      }
      double previous_local = 0;
      for (int p = 1; p <= world; p *= 2) {
        MPI_Comm comm;
        MPI_Comm_split(MPI_COMM_WORLD, world_rank < p ? 0 : MPI_UNDEFINED, world_rank, &comm);
        if (comm == MPI_COMM_NULL) continue;
        int rank = 0;
        MPI_Comm_rank(comm, &rank);
        const tensor x = rows(all, batch * rank / p, batch * (rank + 1) / p);
        const double local = worst_error(comm, batch_norm_means(comm, x, false), truth);
        const double sync = worst_error(comm, batch_norm_means(comm, x, true), truth);
        if (speaker) {
          std::printf("   %-24s %4d %14.3g %14.3g\n", ordered ? "ordered (class by class)" : "i.i.d.", p, local, sync);
        }
        // Synchronized statistics are the whole batch's (one merge in double, then float data).
        if (sync > 1e-12 * (1 + channels)) ++failures;
        // One rank is the whole batch; with more, per-rank statistics drift from it.
        if (p == 1 && local > 1e-12 * (1 + channels)) ++failures;
        if (p > 1 && local <= previous_local) ++failures;
        previous_local = local;
        MPI_Comm_free(&comm);
      }
    }

    // 2. Reductions: the same 10^5 floats summed on p ranks.
    // Integers below 2^23 times 2^-10 .. 2^9: exact floats, and multiples of 2^-10, so that an
    // int64 sum of value * 2^10 is the exact sum (the oracle).
    std::mt19937 random(7);
    std::uniform_int_distribution<int> mantissa(-(1 << 23) + 1, (1 << 23) - 1);
    std::vector<float> values(100000);
    std::int64_t scaled_sum = 0;
    for (auto& v : values) {
      const int shift = static_cast<int>(random() % 20);
      v = std::ldexp(static_cast<float>(mantissa(random)), shift - 10);
      scaled_sum += static_cast<std::int64_t>(std::ldexp(v, 10));
    }
    // int64 to float rounds once, to nearest; the scaling by 2^-10 is exact.
    const float reference = std::ldexp(static_cast<float>(scaled_sum), -10);
    if (speaker) std::printf("\n2. The sum of 10^5 floats of mixed magnitude on p ranks:\n   %4s %16s %16s\n", "p",
                             "float + MPI_SUM", "ordo::mpi::sum");
    float naive_first = 0;
    bool naive_changed = false;
    for (int p = 1; p <= world; p *= 2) {
      MPI_Comm comm;
      MPI_Comm_split(MPI_COMM_WORLD, world_rank < p ? 0 : MPI_UNDEFINED, world_rank, &comm);
      if (comm == MPI_COMM_NULL) continue;
      int rank = 0;
      MPI_Comm_rank(comm, &rank);
      const std::size_t begin = values.size() * static_cast<std::size_t>(rank) / static_cast<std::size_t>(p),
                        end = values.size() * static_cast<std::size_t>(rank + 1) / static_cast<std::size_t>(p);
      Kokkos::View<float*, memory> part("part", end - begin);
      float local = 0;
      for (std::size_t i = begin; i < end; ++i) {
        part(i - begin) = values[i];
        local += values[i];
      }
      float naive = 0;
      MPI_Allreduce(&local, &naive, 1, MPI_FLOAT, MPI_SUM, comm);
      const float exact = ordo::mpi::sum(comm, part);
      if (speaker) std::printf("   %4d %16.9g %16.9g\n", p, static_cast<double>(naive), static_cast<double>(exact));
      if (p == 1) naive_first = naive;
      // The correctly rounded sum, whatever p: the same bits for every rank count.
      if (std::memcmp(&exact, &reference, sizeof exact) != 0) ++failures;
      naive_changed = naive_changed || naive != naive_first;
      MPI_Comm_free(&comm);
    }
    if (speaker) {
      std::printf("   ordo's exact sum has the same bits for every p%s.\n",
                  naive_changed ? "; the float sums added rank by rank do not" : "");
      std::printf("\nMore: docs/distributed.md, examples/sync_batch_norm.cpp.\n");
    }
  }
  int worst = 0;
  MPI_Allreduce(&failures, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst == 0 ? 0 : 1;
}
