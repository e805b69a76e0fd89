#ifndef ORDO_BENCH_MPI_TIMING_HPP
#define ORDO_BENCH_MPI_TIMING_HPP

// The timing loop the MPI benchmarks share (bench_mpi, bench_mpi_chain): the slowest rank's median
// seconds of f over at least `rounds` rounds and `seconds` seconds; rank 0 decides when every rank
// stops, and a barrier starts each round.

#include "bench_support.hpp"

#include <mpi.h>

#include <chrono>
#include <vector>

namespace ordo_bench {

template <class F>
double slowest_median_seconds(F&& f, double seconds, int rounds, MPI_Comm comm = MPI_COMM_WORLD) {
  std::vector<double> samples;
  const auto start = std::chrono::steady_clock::now();
  for (int stop = 0; !stop;) {
    MPI_Barrier(comm);
    samples.push_back(seconds_of(f));
    stop = static_cast<int>(samples.size()) >= rounds &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= seconds;
    MPI_Bcast(&stop, 1, MPI_INT, 0, comm);
  }
  double mine = median(samples), slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
  return slowest;
}

}  // namespace ordo_bench

#endif
