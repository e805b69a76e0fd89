// ordo::detail::portable_gemm on Kokkos::OpenMP against OpenBLAS dgemm_/sgemm_ on the same
// column-major matrices, in alternating rounds (each ordo_bench::time_calls under --min-reps and
// --min-seconds / --rounds), since both thread pools spin for a while after a call. Threads come from
// OMP_NUM_THREADS and OPENBLAS_NUM_THREADS. One JSON line per (size, type) on stdout.
// Types half and bfloat16: ordo multiplies 16-bit A and B into a float C (its 16-bit GEMM, which
// runs the host kernel of the instruction set chosen at run time; ORDO_CPU_CAPABILITY caps it),
// OpenBLAS sgemm_ the same values widened to float beforehand (not timed).
//   bench_gemm [--sizes 256,512,1024,2048 (S or MxNxK)] [--types double,float,half,bfloat16]
//              [--min-reps 3] [--min-seconds 1] [--rounds 3]
#include "bench_support.hpp"

#include <ordo/core/float16.hpp>
#include <ordo/kernels/detail/portable_gemm.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <limits>
#include <tuple>

#ifndef ORDO_BENCH_VARIANT
#define ORDO_BENCH_VARIANT "unknown"
#endif

extern "C" {
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*);
void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*, const float*, const int*,
            const float*, const int*, const float*, float*, const int*);
char* openblas_get_config();    // OpenBLAS's build configuration
char* openblas_get_corename();  // and the kernel family it chose at run time
}

namespace {

template <class T>
void run(const char* type, int m, int n, int k, const ordo_bench::limits& round, int rounds) {
  using matrix = Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
  matrix a(Kokkos::view_alloc(Kokkos::WithoutInitializing, "a"), m, k),
      b(Kokkos::view_alloc(Kokkos::WithoutInitializing, "b"), k, n), c_ordo("c_ordo", m, n), c_blas("c_blas", m, n);
  for (auto [v, rng] : {std::pair{a, ordo_bench::splitmix64{1}}, std::pair{b, ordo_bench::splitmix64{2}}}) {
    for (std::size_t i = 0; i < v.span(); ++i) v.data()[i] = T(2.0 * ordo_bench::unit_double(rng.next()) - 1.0);
  }
  const Kokkos::OpenMP space;
  const auto blas_gemm = [] {
    if constexpr (std::is_same_v<T, double>) return dgemm_; else return sgemm_;
  }();
  std::vector<double> ordo, blas;
  for (int r = 0; r < rounds; ++r) {
    ordo_bench::time_calls([&] {
      ordo::detail::portable_gemm(space, T(1), a, b, T(0), c_ordo);
      space.fence();
    }, round, ordo);
    ordo_bench::time_calls([&, one = T(1), zero = T(0)] {
      blas_gemm("N", "N", &m, &n, &k, &one, a.data(), &m, b.data(), &k, &zero, c_blas.data(), &m);
    }, round, blas);
  }
  // Both computed the same product: the largest difference over k eps (|a|, |b| <= 1) must be O(1).
  double max_diff = 0;
  for (std::size_t i = 0; i < c_ordo.span(); ++i) {
    max_diff = std::max(max_diff, std::fabs(double(c_ordo.data()[i]) - double(c_blas.data()[i])));
  }
  const double gflop = 2e-9 * m * n * k, k_eps = k * double(std::numeric_limits<T>::epsilon());
  using tiling = ordo::detail::gemm_tiling<Kokkos::OpenMP, T>;
  std::printf("{\"variant\": \"%s\", \"type\": \"%s\", \"m\": %d, \"n\": %d, \"k\": %d, \"mr\": %d, \"nr\": %d, "
              "\"a_copies\": %d, \"ordo_reps\": %zu, \"ordo_gflops\": %.4g, \"blas_reps\": %zu, \"blas_gflops\": %.4g, "
              "\"diff_over_k_eps\": %.3g}\n",
              ORDO_BENCH_VARIANT, type, m, n, k, tiling::mr, tiling::nr, tiling::a_copies, ordo.size(),
              gflop / *std::min_element(ordo.begin(), ordo.end()), blas.size(),
              gflop / *std::min_element(blas.begin(), blas.end()), max_diff / k_eps);
  std::fflush(stdout);
}

// 16-bit A and B (storage S) into a float C, against sgemm_ on their float values.
template <class S>
void run_16bit(const char* type, int m, int n, int k, const ordo_bench::limits& round, int rounds) {
  using narrow = Kokkos::View<S**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
  using wide = Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
  narrow a(Kokkos::view_alloc(Kokkos::WithoutInitializing, "a"), m, k),
      b(Kokkos::view_alloc(Kokkos::WithoutInitializing, "b"), k, n);
  wide wa("wa", m, k), wb("wb", k, n), c_ordo("c_ordo", m, n), c_blas("c_blas", m, n);
  for (auto [v, w, rng] : {std::tuple{a, wa, ordo_bench::splitmix64{1}}, std::tuple{b, wb, ordo_bench::splitmix64{2}}}) {
    for (std::size_t i = 0; i < v.span(); ++i) {
      v.data()[i] = S(2.0 * ordo_bench::unit_double(rng.next()) - 1.0);
      w.data()[i] = static_cast<float>(v.data()[i]);
    }
  }
  const Kokkos::OpenMP space;
  std::vector<double> ordo, blas;
  for (int r = 0; r < rounds; ++r) {
    ordo_bench::time_calls([&] {
      ordo::detail::portable_gemm(space, 1.0f, a, b, 0.0f, c_ordo);
      space.fence();
    }, round, ordo);
    ordo_bench::time_calls([&, one = 1.0f, zero = 0.0f] {
      sgemm_("N", "N", &m, &n, &k, &one, wa.data(), &m, wb.data(), &k, &zero, c_blas.data(), &m);
    }, round, blas);
  }
  double max_diff = 0;
  for (std::size_t i = 0; i < c_ordo.span(); ++i) {
    max_diff = std::max(max_diff, std::fabs(double(c_ordo.data()[i]) - double(c_blas.data()[i])));
  }
  const double gflop = 2e-9 * m * n * k, k_eps = k * double(std::numeric_limits<float>::epsilon());
  int mr = 0, nr = 0, a_copies = 0;
  ordo::detail::with_host_isa([&](auto isa) {
    using tiling = ordo::detail::gemm_tiling<Kokkos::OpenMP, float, ordo::detail::launch_shape::host, decltype(isa)>;
    mr = tiling::mr;
    nr = tiling::nr;
    a_copies = tiling::a_copies;
  });
  std::printf("{\"variant\": \"%s\", \"type\": \"%s\", \"level\": \"%s\", \"m\": %d, \"n\": %d, \"k\": %d, "
              "\"mr\": %d, \"nr\": %d, \"a_copies\": %d, \"ordo_reps\": %zu, \"ordo_gflops\": %.4g, \"blas_reps\": %zu, "
              "\"blas_gflops\": %.4g, \"diff_over_k_eps\": %.3g}\n",
              ORDO_BENCH_VARIANT, type, ordo::detail::to_string(ordo::detail::host_capability()), m, n, k, mr, nr,
              a_copies, ordo.size(), gflop / *std::min_element(ordo.begin(), ordo.end()), blas.size(),
              gflop / *std::min_element(blas.begin(), blas.end()), max_diff / k_eps);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) try {
  Kokkos::ScopeGuard guard(argc, argv);
  std::vector<std::vector<int>> shapes{{256}, {512}, {1024}, {2048}};
  std::vector<std::string> types{"double", "float"};
  int min_reps = 3, rounds = 3;
  double min_seconds = 1.0;
  ordo_bench::for_each_option(argc, argv, [&](std::string_view arg, const std::string& value) {
    const auto to_int = [](const std::string& s) { return std::stoi(s); };
    if (arg == "--sizes") {
      shapes.clear();
      for (const std::string& s : ordo_bench::split(value)) shapes.push_back(ordo_bench::split(s, to_int, 'x'));
    } else if (arg == "--types") types = ordo_bench::split(value);
    else if (arg == "--min-reps") min_reps = std::stoi(value);
    else if (arg == "--rounds") rounds = std::max(1, std::stoi(value));
    else if (arg == "--min-seconds") min_seconds = std::stod(value);
    else throw std::invalid_argument("unknown option " + std::string(arg));
  });
  std::printf("{\"variant\": \"%s\", \"openblas_config\": \"%s\", \"openblas_core\": \"%s\", "
              "\"kokkos_version\": \"%d.%d.%d\", \"kokkos_threads\": %d}\n",
              ORDO_BENCH_VARIANT, openblas_get_config(), openblas_get_corename(), KOKKOS_VERSION / 10000,
              KOKKOS_VERSION / 100 % 100, KOKKOS_VERSION % 100, Kokkos::OpenMP().concurrency());
  const ordo_bench::limits round{min_reps, INT_MAX, min_seconds / rounds};
  for (const auto& s : shapes) {
    if (s.size() != 1 && s.size() != 3) throw std::invalid_argument("--sizes takes S or MxNxK items");
    const int m = s[0], n = s[s.size() / 2], k = s.back();
    for (const std::string& type : types) {
      if (type == "double") run<double>("double", m, n, k, round, rounds);
      else if (type == "float") run<float>("float", m, n, k, round, rounds);
      else if (type == "half") run_16bit<ordo::half>("half", m, n, k, round, rounds);
      else if (type == "bfloat16") run_16bit<ordo::bfloat16>("bfloat16", m, n, k, round, rounds);
      else throw std::invalid_argument("--types takes double, float, half and bfloat16");
    }
  }
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_gemm: %s\n", e.what());
  return 2;
}
