// The mean of 2^20 bfloat16 values accumulated in bfloat16, in float (single-threaded loops) and by
// ordo::mean<float>'s policies (Kokkos::OpenMP): the error in float ulps of the true mean and the median time of 7
// calls after a warm-up (ordo_bench::time_calls), as a Markdown table; exits 1 when ordo's exact mean is not the
// reference: the sum in __float128 (exact here: the sums stay below 2^20 and the values' last bits lie far above
// 2^-90) over n, rounded to float. Data (splitmix64, seed 20261123 + case), each value rounded once to bfloat16:
// uniform [0, 1); 1000 + uniform [-64, 64) (an offset, as after a bias); +-[1, 2) 2^e, e in [-8, 8).

#include "bench_support.hpp"

#include <ordo/kernels/reduce.hpp>
#include <ordo/precision.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <utility>
#include <vector>

namespace {

using bf16_view = Kokkos::View<ordo::bfloat16*, Kokkos::OpenMP::memory_space>;
using ordo_bench::unit_double;

constexpr std::int64_t n = std::int64_t{1} << 20;

bf16_view make_case(int which) {
  bf16_view x("x", n);
  auto h = Kokkos::create_mirror_view(x);
  ordo_bench::splitmix64 rng{20261123ULL + static_cast<std::uint64_t>(which)};
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint64_t z = rng.next();
    const double sign = (z >> 63) != 0 ? -1.0 : 1.0, e = static_cast<double>((z >> 52) & 15) - 8;
    h(i) = ordo::bfloat16(which == 0   ? unit_double(z)
                          : which == 1 ? 1000.0 + 64.0 * (2.0 * unit_double(z) - 1.0)
                                       : std::ldexp(1.0 + unit_double(z << 12), static_cast<int>(e)) * sign);
  }
  Kokkos::deep_copy(x, h);
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  using mean_of = std::function<float(const bf16_view&)>;
  const auto policy = [](auto s) -> mean_of { return [s](const bf16_view& x) { return ordo::mean<float>(x, s); }; };
  const std::vector<std::pair<const char*, mean_of>> contenders = {
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
      {"ordo::mean<float>, naive (parallel)", policy(ordo::summation::naive)},
      {"ordo::mean<float>, pairwise", policy(ordo::summation::pairwise)},
      {"ordo::mean<float>, kahan", policy(ordo::summation::kahan)},
      {"ordo::mean<float>, exact", policy(ordo::summation::exact)},
  };
  const char* case_names[] = {"uniform [0, 1)", "1000 + uniform [-64, 64)", "+-[1, 2) 2^[-8, 8)"};
  std::printf("| data | method | mean | error (float ulps) | time (ms) |\n|:---|:---|---:|---:|---:|\n");
  int status = 0;
  for (int which = 0; which < 3; ++which) {
    const auto x = make_case(which);
    __float128 sum = 0;
    for (std::int64_t i = 0; i < n; ++i) sum += static_cast<float>(x(i));
    const auto reference = static_cast<float>(sum / static_cast<__float128>(n));
    for (const auto& [name, mean] : contenders) {
      float result = 0;
      std::vector<double> seconds;
      ordo_bench::time_calls([&] { result = mean(x); }, {7, 7, 0.0}, seconds);
      const double ulp = std::ldexp(1.0, std::ilogb(reference) - 23);  // of floats at the reference
      std::printf("| %s | %s | %.9g | %.3g | %.3f |\n", case_names[which], name, static_cast<double>(result),
                  std::abs(static_cast<double>(result) - static_cast<double>(reference)) / ulp,
                  1e3 * ordo_bench::median(seconds));
      status |= &mean == &contenders.back().second && result != reference;  // exact
    }
  }
  return status;
}
