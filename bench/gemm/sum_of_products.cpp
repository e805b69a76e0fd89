// r = A B + C D (double, n x n, row-major ordo::matrix on Kokkos::OpenMP): ordo's sum of products
// (two planned chains, the second added by dgemm's beta = 1) against the two dgemm_ calls a person
// writes by hand into the same preallocated r, in interleaved rounds. One JSON line per size.
//   bench_sum_of_products [--sizes 256,1024,2048] [--min-seconds 2] [--min-rounds 10]
#include "bench_support.hpp"

#include <ordo/expression.hpp>

#include <cmath>
#include <cstdio>

extern "C" void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                       const int*, const double*, const int*, const double*, double*, const int*);

namespace {

using matrix = ordo::matrix<double, ordo::dynamic, ordo::dynamic, Kokkos::OpenMP>;

void run(int n, double min_seconds, int min_rounds) {
  matrix a(n, n), b(n, n), c(n, n), d(n, n), r_ordo(n, n), r_blas(n, n);
  std::uint64_t seed = 1;
  for (const matrix& m : {a, b, c, d}) {
    ordo_bench::splitmix64 rng{seed++};
    for (std::size_t i = 0; i < m.view().span(); ++i) m.view().data()[i] = 2 * ordo_bench::unit_double(rng.next()) - 1;
  }
  // Row-major r = x y is column-major r^T = y^T x^T: dgemm with the operands swapped.
  const auto by_hand = [&, one = 1.0, zero = 0.0] {
    dgemm_("N", "N", &n, &n, &n, &one, b.view().data(), &n, a.view().data(), &n, &zero, r_blas.view().data(), &n);
    dgemm_("N", "N", &n, &n, &n, &one, d.view().data(), &n, c.view().data(), &n, &one, r_blas.view().data(), &n);
  };
  std::vector<ordo_bench::timed_item> items{{"ordo", [&] { r_ordo = a * b + c * d; }, {}}, {"blas", by_hand, {}}};
  const auto done = ordo_bench::time_rounds(items, {min_rounds, 100000, min_seconds}, 1, true);
  double max_diff = 0;
  for (std::size_t i = 0; i < r_ordo.view().span(); ++i) {
    max_diff = std::max(max_diff, std::fabs(r_ordo.view().data()[i] - r_blas.view().data()[i]));
  }
  const auto s_ordo = ordo_bench::summarize(items[0].samples), s_blas = ordo_bench::summarize(items[1].samples);
  std::printf("{\"n\": %d, \"rounds\": %d, \"ordo_median_s\": %.6g, \"ordo_q1_s\": %.6g, \"ordo_q3_s\": %.6g, "
              "\"blas_median_s\": %.6g, \"blas_q1_s\": %.6g, \"blas_q3_s\": %.6g, \"max_abs_diff\": %.3g}\n",
              n, done.reps, s_ordo.median, s_ordo.q1, s_ordo.q3, s_blas.median, s_blas.q1, s_blas.q3, max_diff);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) try {
  Kokkos::ScopeGuard guard(argc, argv);
  std::vector<int> sizes{256, 1024, 2048};
  double min_seconds = 2;
  int min_rounds = 10;
  ordo_bench::for_each_option(argc, argv, [&](std::string_view arg, const std::string& value) {
    if (arg == "--sizes") sizes = ordo_bench::split(value, [](const std::string& s) { return std::stoi(s); });
    else if (arg == "--min-seconds") min_seconds = std::stod(value);
    else if (arg == "--min-rounds") min_rounds = std::stoi(value);
    else throw std::invalid_argument("unknown option " + std::string(arg));
  });
  for (const int n : sizes) run(n, min_seconds, min_rounds);
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_sum_of_products: %s\n", e.what());
  return 2;
}
