// The mean of 1M bfloat16 values, accumulated in bfloat16, in float and exactly: error in float
// ulps of the true mean, and time. On Kokkos::OpenMP (run with OMP_NUM_THREADS=2).
//
// Data (splitmix64, seed 20261123 + case): "uniform" in [0, 1), "offset" 1000 + uniform [-64, 64)
// (a large common value, as activations after a bias), "signed" +-[1, 2) * 2^e, e in [-8, 8),
// random signs. Each value is rounded once to bfloat16.
//
// Reference: the sum in __float128 (a 113-bit significand, exact here: the sums stay below 2^20 and
// the values' last bits lie far above 2^-90), divided by n and rounded to float; the program checks
// that ordo's exact mean gives the same float.
//
// Output: a Markdown table on stdout.

#include "bench_support.hpp"

#include <ordo/kernels/reduce.hpp>
#include <ordo/precision.hpp>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

using space = Kokkos::OpenMP;
using bf16_view = Kokkos::View<ordo::bfloat16*, space::memory_space>;

constexpr std::int64_t n = std::int64_t{1} << 20;

double unit_of(std::uint64_t z) { return static_cast<double>(z >> 11) * 0x1p-53; }

bf16_view make_case(int which) {
  bf16_view x("x", n);
  auto h = Kokkos::create_mirror_view(x);
  ordo_bench::splitmix64 rng{20261123ULL + static_cast<std::uint64_t>(which)};
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint64_t z = rng.next();
    double v = 0;
    if (which == 0) v = unit_of(z);
    if (which == 1) v = 1000.0 + 64.0 * (2.0 * unit_of(z) - 1.0);
    if (which == 2) {
      const int e = static_cast<int>((z >> 52) & 15) - 8;
      v = std::ldexp(1.0 + unit_of(z << 12), e) * ((z >> 63) != 0 ? -1.0 : 1.0);
    }
    h(i) = ordo::bfloat16(v);
  }
  Kokkos::deep_copy(x, h);
  return x;
}

float reference_mean(const bf16_view& x) {
  __float128 sum = 0;
  for (std::int64_t i = 0; i < n; ++i) sum += static_cast<float>(x(i));
  return static_cast<float>(sum / static_cast<__float128>(n));
}

// Distance in float ulps at the reference (the spacing of floats in its binade).
double ulps(float value, float reference) {
  const int exponent = std::ilogb(reference);
  const double ulp = std::ldexp(1.0, exponent - 23);
  return std::abs(static_cast<double>(value) - static_cast<double>(reference)) / ulp;
}

struct contender {
  const char* name;
  std::function<float(const bf16_view&)> mean;
};

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  const std::vector<contender> contenders = {
      {"bfloat16 accumulator, left to right",
       [](const bf16_view& x) {
         ordo::bfloat16 sum(0.0f);
         for (std::int64_t i = 0; i < n; ++i) sum = ordo::bfloat16(static_cast<float>(sum) + static_cast<float>(x(i)));
         return static_cast<float>(ordo::bfloat16(static_cast<float>(sum) / static_cast<float>(n)));
       }},
      {"float accumulator, left to right",
       [](const bf16_view& x) {
         float sum = 0;
         for (std::int64_t i = 0; i < n; ++i) sum += static_cast<float>(x(i));
         return sum / static_cast<float>(n);
       }},
      {"ordo::mean<float>, naive (parallel)", [](const bf16_view& x) { return ordo::mean<float>(x, ordo::summation::naive); }},
      {"ordo::mean<float>, pairwise", [](const bf16_view& x) { return ordo::mean<float>(x, ordo::summation::pairwise); }},
      {"ordo::mean<float>, kahan", [](const bf16_view& x) { return ordo::mean<float>(x, ordo::summation::kahan); }},
      {"ordo::mean<float>, exact", [](const bf16_view& x) { return ordo::mean<float>(x, ordo::summation::exact); }},
  };
  const char* case_names[] = {"uniform [0, 1)", "1000 + uniform [-64, 64)", "+-[1, 2) 2^[-8, 8)"};
  std::printf("threads: %d\n\n", space().concurrency());
  std::printf("| data | method | mean | error (float ulps) | time (ms) |\n|---|---|---|---|---|\n");
  for (int which = 0; which < 3; ++which) {
    const auto x = make_case(which);
    const float reference = reference_mean(x);
    if (ordo::mean<float>(x, ordo::summation::exact) != reference) {
      std::fprintf(stderr, "ordo's exact mean differs from the __float128 reference\n");
      return 1;
    }
    for (const auto& c : contenders) {
      float result = 0;
      std::vector<double> seconds;
      for (int round = 0; round < 7; ++round) {
        const auto start = std::chrono::steady_clock::now();
        result = c.mean(x);
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
      std::printf("| %s | %s | %.9g | %.3g | %.3f |\n", case_names[which], c.name, static_cast<double>(result),
                  ulps(result, reference), 1e3 * ordo_bench::median(seconds));
    }
  }
}
