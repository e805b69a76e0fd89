// ordo::detail::portable_gemm on Kokkos::OpenMP against OpenBLAS dgemm_/sgemm_ on the same
// column-major matrices. Prints one JSON object per (type, m, n, k) on stdout.
//
//   bench_gemm [--sizes 256,512,1024,2048] [--types double,float] [--min-reps 3]
//              [--min-seconds 1] [--rounds 3]
//
// Sizes are square (m = n = k = s) or "MxNxK". Thread counts come from the environment
// (OMP_NUM_THREADS for Kokkos::OpenMP, OPENBLAS_NUM_THREADS for OpenBLAS); bench/gemm/run sets
// both to 2.

#include "bench_support.hpp"

#include <ordo/kernels/detail/portable_gemm.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#ifndef ORDO_BENCH_VARIANT
#define ORDO_BENCH_VARIANT "unknown"
#endif

extern "C" {
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
            const double* beta, double* c, const int* ldc);
// OpenBLAS extensions: the build configuration and the kernel family chosen at run time.
char* openblas_get_config();
char* openblas_get_corename();
void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
            const float* beta, float* c, const int* ldc);
}

namespace {

using ordo_bench::split;

struct shape {
  int m, n, k;
};

struct options {
  std::vector<shape> shapes{
      {256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024}, {2048, 2048, 2048}};
  std::vector<std::string> types{"double", "float"};
  int min_reps = 3;
  double min_seconds = 1.0;
  int rounds = 3;
};

[[noreturn]] void usage(const char* what) {
  std::fprintf(stderr, "bench_gemm: %s\n", what);
  std::exit(2);
}

options parse(int argc, char** argv) try {
  options opt;
  ordo_bench::for_each_option(argc, argv, [&](std::string_view arg, const std::string& value) {
    if (arg == "--sizes") {
      opt.shapes.clear();
      for (const std::string& item : split(value, ',')) {
        const std::vector<std::string> dims = split(item, 'x');
        if (dims.size() == 1) {
          const int s = std::atoi(dims[0].c_str());
          opt.shapes.push_back({s, s, s});
        } else if (dims.size() == 3) {
          opt.shapes.push_back(
              {std::atoi(dims[0].c_str()), std::atoi(dims[1].c_str()), std::atoi(dims[2].c_str())});
        } else {
          usage("--sizes takes S or MxNxK items separated by commas");
        }
      }
    } else if (arg == "--types") {
      opt.types = split(value);
    } else if (arg == "--min-reps") {
      opt.min_reps = std::stoi(value);
    } else if (arg == "--rounds") {
      opt.rounds = std::max(1, std::stoi(value));
    } else if (arg == "--min-seconds") {
      opt.min_seconds = std::stod(value);
    } else {
      usage("unknown option");
    }
  });
  return opt;
} catch (const std::invalid_argument& e) {
  usage(e.what());
}

// Uniform in [-1, 1) from splitmix64.
template <class T>
void fill(T* data, std::size_t count, std::uint64_t seed) {
  ordo_bench::splitmix64 rng{seed};
  for (std::size_t i = 0; i < count; ++i) data[i] = static_cast<T>(2.0 * ordo_bench::unit_double(rng.next()) - 1.0);
}

void blas_gemm(int m, int n, int k, double alpha, const double* a, const double* b, double beta,
               double* c) {
  dgemm_("N", "N", &m, &n, &k, &alpha, a, &m, b, &k, &beta, c, &m);
}
void blas_gemm(int m, int n, int k, float alpha, const float* a, const float* b, float beta,
               float* c) {
  sgemm_("N", "N", &m, &n, &k, &alpha, a, &m, b, &k, &beta, c, &m);
}

// The machine is shared and OpenMP's and OpenBLAS's thread pools each spin for a while after a
// call, so the two are timed in alternating rounds (ordo, OpenBLAS, ordo, ...), each round
// ordo_bench::time_calls: an untimed warm-up call, then at least min_reps calls and
// min_seconds / rounds seconds. Minimum and median are over all timed calls.
template <class F, class G>
std::pair<ordo_bench::summary, ordo_bench::summary> measure_alternating(F&& f, G&& g, const options& opt) {
  std::vector<double> times[2];
  const ordo_bench::limits round{opt.min_reps, INT_MAX, opt.min_seconds / opt.rounds};
  for (int r = 0; r < opt.rounds; ++r) {
    ordo_bench::time_calls(f, round, times[0]);
    ordo_bench::time_calls(g, round, times[1]);
  }
  return {ordo_bench::summarize(times[0]), ordo_bench::summarize(times[1])};
}

template <class T>
void run(const char* type_name, const shape& s, const options& opt) {
  using matrix = Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
  const auto m = static_cast<std::size_t>(s.m);
  const auto n = static_cast<std::size_t>(s.n);
  const auto k = static_cast<std::size_t>(s.k);
  matrix a(Kokkos::view_alloc(Kokkos::WithoutInitializing, "a"), m, k);
  matrix b(Kokkos::view_alloc(Kokkos::WithoutInitializing, "b"), k, n);
  matrix c_ordo("c_ordo", m, n);
  matrix c_blas("c_blas", m, n);
  fill(a.data(), a.span(), 1);
  fill(b.data(), b.span(), 2);

  const Kokkos::OpenMP space;
  const auto [ordo, blas] = measure_alternating(
      [&] {
        ordo::detail::portable_gemm(space, T(1), a, b, T(0), c_ordo);
        space.fence();
      },
      [&] { blas_gemm(s.m, s.n, s.k, T(1), a.data(), b.data(), T(0), c_blas.data()); }, opt);

  // Both computed the same product: the largest difference relative to k * u * max|A||B|
  // (|a|, |b| <= 1) must be O(1).
  double max_diff = 0;
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t i = 0; i < m; ++i) {
      max_diff = std::max(max_diff, std::fabs(static_cast<double>(c_ordo(i, j)) -
                                              static_cast<double>(c_blas(i, j))));
    }
  }
  const double bound =
      static_cast<double>(k) * static_cast<double>(std::numeric_limits<T>::epsilon());
  const double flops =
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  using tiling = ordo::detail::gemm_tiling<Kokkos::OpenMP, T>;
  std::printf(
      "{\"variant\": \"%s\", \"type\": \"%s\", \"m\": %d, \"n\": %d, \"k\": %d, "
      "\"mr\": %d, \"nr\": %d, \"mc\": %d, \"nc\": %d, \"kc\": %d, \"a_copies\": %d, "
      "\"ordo_min_s\": %.6g, \"ordo_median_s\": %.6g, \"ordo_reps\": %d, \"ordo_gflops\": %.4g, "
      "\"blas_min_s\": %.6g, \"blas_median_s\": %.6g, \"blas_reps\": %d, \"blas_gflops\": %.4g, "
      "\"max_abs_diff\": %.3g, \"diff_over_k_eps\": %.3g, \"threads\": %d}\n",
      ORDO_BENCH_VARIANT, type_name, s.m, s.n, s.k, tiling::mr, tiling::nr, tiling::mc, tiling::nc,
      tiling::kc, tiling::a_copies, ordo.min, ordo.median, static_cast<int>(ordo.reps), flops / ordo.min * 1e-9,
      blas.min, blas.median, static_cast<int>(blas.reps), flops / blas.min * 1e-9, max_diff, max_diff / bound,
      space.concurrency());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    const options opt = parse(argc, argv);
    std::printf(
        "{\"variant\": \"%s\", \"openblas_config\": \"%s\", \"openblas_core\": \"%s\", "
        "\"kokkos_version\": \"%d.%d.%d\", \"kokkos_threads\": %d}\n",
        ORDO_BENCH_VARIANT, openblas_get_config(), openblas_get_corename(), KOKKOS_VERSION / 10000,
        KOKKOS_VERSION / 100 % 100, KOKKOS_VERSION % 100, Kokkos::OpenMP().concurrency());
    for (const shape& s : opt.shapes) {
      for (const std::string& type : opt.types) {
        if (type == "double") {
          run<double>("double", s, opt);
        } else if (type == "float") {
          run<float>("float", s, opt);
        } else {
          usage("--types takes double and/or float");
        }
      }
    }
  }
  Kokkos::finalize();
}
