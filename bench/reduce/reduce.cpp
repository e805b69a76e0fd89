// Reduction benchmark: ordo::sum under each summation policy against a plain
// Kokkos::parallel_reduce sum, on Kokkos::OpenMP (run with OMP_NUM_THREADS=2).
//
// Data (regenerated identically by bench/reduce/run for numpy.sum and math.fsum): element i of a
// case with seed s is built from z_i = splitmix64 output number i, i.e. mix(s + (i+1)*gamma), so
// any element can be computed on its own (and numpy can vectorize it):
//   uniform: float (z >> 40) * 2^-24, double (z >> 11) * 2^-53, both uniform in [0, 1);
//   wide:    sign = bit 63 of z, binary exponent e = ((z >> 57) & 63) - 32 in [-32, 31], mantissa
//            bits = the low 23 (float) or 52 (double) bits of z: +-[1, 2) * 2^e, mixed signs
//            over a dynamic range of 2^64.
// The seed of a case is --seed + 2 * distribution + type (uniform 0, wide 1; float 0, double 1),
// the same for every size: the 1M-element data are the first 2^20 elements of the 64M ones.
//
// Timing: ordo_bench::time_rounds, two untimed warm-up rounds, then rounds in which every
// contender runs once, in turn, until both --min-rounds and --min-seconds are reached (or
// --max-rounds). Every contender returns its result to the host (ordo::sum fences;
// parallel_reduce into a scalar is blocking).
//
// Output: one JSON object per line and per case on stdout:
//   {"n":..,"type":"float","dist":"uniform","seed":..,"checksum":"0x..","threads":2,"rounds":..,
//    "exact_kernels":"AVX2","contenders":[{"name":"plain","result":"<hex float>","result_type":"float","median_s":..,
//                   "min_s":..,"repeatable":true}, ...]}
// checksum = sum over i of bits_i * (2 i + 1) mod 2^64 (bits_i the element's bit pattern), so
// the Python side can check that it regenerated the same data.
//
// Usage: bench_reduce [--sizes 1048576,67108864] [--types float,double] [--dists uniform,wide]
//                     [--seed S] [--min-rounds R] [--max-rounds R] [--min-seconds T]

#include "bench_support.hpp"

#include <ordo/kernels/reduce.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace {

using ordo_bench::median;
using ordo_bench::split;
using ordo_bench::splitmix64;

using space = Kokkos::OpenMP;
template <class T>
using vector_view = Kokkos::View<T*, space::memory_space>;

template <class T>
KOKKOS_INLINE_FUNCTION T element(std::uint64_t z, bool wide) {
  if constexpr (std::is_same_v<T, float>) {
    if (!wide) return static_cast<float>(z >> 40) * 0x1p-24f;
    const std::uint32_t sign = static_cast<std::uint32_t>(z >> 63);
    const std::uint32_t exponent = 127 - 32 + static_cast<std::uint32_t>((z >> 57) & 63);
    const std::uint32_t bits = (sign << 31) | (exponent << 23) | static_cast<std::uint32_t>(z & 0x7fffffu);
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
  } else {
    if (!wide) return ordo_bench::unit_double(z);
    const std::uint64_t sign = z >> 63;
    const std::uint64_t exponent = 1023 - 32 + ((z >> 57) & 63);
    const std::uint64_t bits = (sign << 63) | (exponent << 52) | (z & ((std::uint64_t{1} << 52) - 1));
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
  }
}

template <class T>
vector_view<T> make_data(std::int64_t n, std::uint64_t seed, bool wide) {
  vector_view<T> x(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("x")), n);
  // Filled by the threads that will read it (first touch).
  Kokkos::parallel_for(
      "fill", Kokkos::RangePolicy<space, Kokkos::IndexType<std::int64_t>>(0, n),
      KOKKOS_LAMBDA(std::int64_t i) { x(i) = element<T>(splitmix64::at(seed, static_cast<std::uint64_t>(i)), wide); });
  space().fence();
  return x;
}

template <class T>
std::uint64_t checksum(const vector_view<T>& x) {
  using bits_type = std::conditional_t<std::is_same_v<T, float>, std::uint32_t, std::uint64_t>;
  std::uint64_t sum = 0;
  const std::int64_t n = static_cast<std::int64_t>(x.extent(0));
  for (std::int64_t i = 0; i < n; ++i) {
    bits_type bits;
    const T v = x(i);
    memcpy(&bits, &v, sizeof bits);
    sum += static_cast<std::uint64_t>(bits) * (2 * static_cast<std::uint64_t>(i) + 1);
  }
  return sum;
}

// The "plain Kokkos sum": what a user writes without ordo.
template <class T>
T plain_sum(const vector_view<T>& x) {
  T s = 0;
  Kokkos::parallel_reduce(
      "plain", Kokkos::RangePolicy<space, Kokkos::IndexType<std::int64_t>>(0, static_cast<std::int64_t>(x.extent(0))),
      KOKKOS_LAMBDA(std::int64_t i, T& partial) { partial += x(i); }, s);
  return s;
}

struct contender {
  std::string name;
  std::string result_type;
  std::function<double()> run;  // float results are widened exactly
  double first = 0;
  int calls = 0;
  bool repeatable = true;
};

template <class T>
std::vector<contender> contenders(const vector_view<T>& x) {
  const std::string t = std::is_same_v<T, float> ? "float" : "double";
  namespace s = ordo::summation;
  std::vector<contender> list;
  list.push_back({"plain", t, [x] { return static_cast<double>(plain_sum(x)); }});
  list.push_back({"naive", t, [x] { return static_cast<double>(ordo::sum(space{}, x, s::naive)); }});
  list.push_back({"pairwise", t, [x] { return static_cast<double>(ordo::sum(space{}, x, s::pairwise)); }});
  list.push_back({"kahan", t, [x] { return static_cast<double>(ordo::sum(space{}, x, s::kahan)); }});
  list.push_back({"neumaier", t, [x] { return static_cast<double>(ordo::sum(space{}, x, s::neumaier)); }});
  list.push_back({"exact", t, [x] { return static_cast<double>(ordo::sum(space{}, x, s::exact)); }});
  if constexpr (std::is_same_v<T, float>) {
    list.push_back({"exact_double", "double", [x] { return ordo::sum<double>(space{}, x, s::exact); }});
  }
  return list;
}

struct options {
  std::vector<std::int64_t> sizes{std::int64_t{1} << 20, std::int64_t{1} << 26};
  std::vector<std::string> types{"float", "double"};
  std::vector<std::string> dists{"uniform", "wide"};
  std::uint64_t seed = 20240611;
  int min_rounds = 11;
  int max_rounds = 2000;
  double min_seconds = 2.0;
};

std::uint64_t case_seed(const options& o, int dist_index, int type_index) {
  return o.seed + 2 * static_cast<std::uint64_t>(dist_index) + static_cast<std::uint64_t>(type_index);
}

std::string hex(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%a", v);
  return buffer;
}

// Which block kernels ordo's exact sum uses on this host (chosen at run time).
std::string exact_kernels() {
#if defined(ORDO_IMPL_EXACT_AVX2)
  return ordo::detail::exact_blocks_use_avx2() ? "AVX2" : "SSE2";
#elif defined(ORDO_IMPL_EXACT_SSE2)
  return "SSE2";
#else
  return "portable";
#endif
}

template <class T>
void run_case(const options& o, std::int64_t n, int type_index, int dist_index) {
  const std::string dist = dist_index == 0 ? "uniform" : "wide";
  const std::uint64_t seed = case_seed(o, dist_index, type_index);
  const auto x = make_data<T>(n, seed, dist == "wide");
  const std::uint64_t sum_of_bits = checksum(x);
  auto list = contenders(x);
  std::vector<ordo_bench::timed_item> items;
  for (auto& c : list) {
    items.push_back({c.name, [&c] {
                       const double r = c.run();
                       // Bitwise: a fixed thread count and static schedule should repeat every result.
                       if (c.calls++ == 0) c.first = r;
                       else if (std::memcmp(&r, &c.first, sizeof r) != 0) c.repeatable = false;
                     }, {}});
  }
  const auto start = std::chrono::steady_clock::now();
  const int rounds = ordo_bench::time_rounds(items, {o.min_rounds, o.max_rounds, o.min_seconds}, 2).reps;
  std::ostringstream out;
  out << "{\"n\":" << n << ",\"type\":\"" << (type_index == 0 ? "float" : "double") << "\",\"dist\":\"" << dist
      << "\",\"seed\":" << seed << ",\"checksum\":\"" << sum_of_bits << "\",\"threads\":" << space().concurrency()
      << ",\"rounds\":" << rounds << ",\"exact_kernels\":\"" << exact_kernels() << "\",\"contenders\":[";
  for (std::size_t k = 0; k < list.size(); ++k) {
    const auto& c = list[k];
    const auto& t = items[k].samples;
    out << (k ? "," : "") << "{\"name\":\"" << c.name << "\",\"result\":\"" << hex(c.first)
        << "\",\"result_type\":\"" << c.result_type << "\",\"median_s\":" << median(t)
        << ",\"min_s\":" << *std::min_element(t.begin(), t.end())
        << ",\"repeatable\":" << (c.repeatable ? "true" : "false") << "}";
  }
  out << "]}";
  std::cout << out.str() << std::endl;
  std::cerr << "bench_reduce: n=" << n << " " << (type_index == 0 ? "float" : "double") << " " << dist << ": " << rounds << " rounds, "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s\n";
}

options parse(int argc, char** argv) {
  options o;
  ordo_bench::for_each_option(argc, argv, [&](std::string_view arg, const std::string& value) {
    if (arg == "--sizes") {
      o.sizes = split(value, [](const std::string& s) { return static_cast<std::int64_t>(std::stoll(s)); });
    } else if (arg == "--types") {
      o.types = split(value);
    } else if (arg == "--dists") {
      o.dists = split(value);
    } else if (arg == "--seed") {
      o.seed = std::stoull(value);
    } else if (arg == "--min-rounds") {
      o.min_rounds = std::stoi(value);
    } else if (arg == "--max-rounds") {
      o.max_rounds = std::stoi(value);
    } else if (arg == "--min-seconds") {
      o.min_seconds = std::stod(value);
    } else {
      throw std::invalid_argument("unknown option " + std::string(arg));
    }
  });
  for (const auto& t : o.types) {
    if (t != "float" && t != "double") throw std::invalid_argument("--types: float or double, not " + t);
  }
  for (const auto& d : o.dists) {
    if (d != "uniform" && d != "wide") throw std::invalid_argument("--dists: uniform or wide, not " + d);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  try {
    const options o = parse(argc, argv);
    for (std::size_t si = 0; si < o.sizes.size(); ++si) {
      for (std::size_t ti = 0; ti < o.types.size(); ++ti) {
        for (std::size_t di = 0; di < o.dists.size(); ++di) {
          const int type_index = o.types[ti] == "float" ? 0 : 1;
          const int dist_index = o.dists[di] == "uniform" ? 0 : 1;
          if (type_index == 0) {
            run_case<float>(o, o.sizes[si], type_index, dist_index);
          } else {
            run_case<double>(o, o.sizes[si], type_index, dist_index);
          }
        }
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_reduce: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
