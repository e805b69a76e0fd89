#ifndef ORDO_NN_BATCH_NORM_TYPES_HPP
#define ORDO_NN_BATCH_NORM_TYPES_HPP

// Batch norm's options and the results its phases hand each other (the saved statistics, the
// forward's statistics of part of a batch, the backward's sums), apart from the kernels so that
// the checks (nn/detail/batch_norm_checks.hpp) and ordo::mpi name them without the launches.

#include <ordo/nn/memory_format.hpp>

#include <Kokkos_Core.hpp>

namespace ordo::nn {

struct batch_norm_options {
  double eps = 1e-5;       // added to the variance: keeps 1/sqrt(var + eps) finite for a constant channel
  double momentum = 0.1;   // running = (1 - momentum) * running + momentum * batch
  memory_format layout = channels_first;
};

// What the training forward pass keeps for backward: per-channel batch mean and 1/sqrt(var + eps),
// in double whatever the input type.
template <class MemorySpace>
struct batch_norm_saved {
  Kokkos::View<double*, MemorySpace> mean;
  Kokkos::View<double*, MemorySpace> invstd;
};

// Per-channel moments that merge without loss of stability (Chan, Golub and LeVeque 1979):
// n = na + nb, delta = mean_b - mean_a, mean = mean_a + delta nb / n, m2 = m2a + m2b + delta^2 na nb / n.
// Threads, devices and MPI ranks combine their channel statistics this way.
struct channel_moments {
  double count = 0;
  double mean = 0;
  double m2 = 0;  // sum of squared deviations from the mean
  KOKKOS_INLINE_FUNCTION void merge(const channel_moments& other) {
    const double n = count + other.count;
    if (n == 0) return;
    const double delta = other.mean - mean;
    mean += delta * (other.count / n);
    m2 += other.m2 + delta * delta * (count * other.count / n);
    count = n;
  }
};

// The forward's statistics of (part of) a batch: count values per channel, and per channel their
// mean and M2, the sum of squared deviations from the mean.
template <class MemorySpace>
struct batch_norm_statistics {
  double count = 0;
  Kokkos::View<double*, MemorySpace> mean;
  Kokkos::View<double*, MemorySpace> m2;
};

// The backward's sums over (part of) a batch: per channel sum dy and sum (x - mean) dy, with the
// batch mean of the forward pass; count values per channel.
template <class MemorySpace>
struct batch_norm_gradient_sums {
  double count = 0;
  Kokkos::View<double*, MemorySpace> sum_dy;
  Kokkos::View<double*, MemorySpace> dotp;
};

}  // namespace ordo::nn

#endif
