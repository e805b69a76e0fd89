#ifndef ORDO_BENCH_SUPPORT_HPP
#define ORDO_BENCH_SUPPORT_HPP

// What every benchmark driver shares: statistics of timing samples, the splitmix64 generator, the
// timing loop and option parsing. Plain C++ (no Kokkos, no ordo); bench/CMakeLists.txt puts
// bench/support on the include path. bench/support/ordo_bench.py has the same generator and statistics.

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// The generator is called inside Kokkos lambdas: under a device compiler, host and device functions.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define ORDO_BENCH_HOST_DEVICE __host__ __device__
#else
#define ORDO_BENCH_HOST_DEVICE
#endif

namespace ordo_bench {

// The q-quantile with linear interpolation between order statistics (numpy's default).
inline double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double position = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(position);
  return v[lo] + (v[std::min(lo + 1, v.size() - 1)] - v[lo]) * (position - static_cast<double>(lo));
}

inline double median(std::vector<double> v) { return quantile(std::move(v), 0.5); }

struct summary { double median, q1, q3, min; std::size_t reps; };

inline summary summarize(const std::vector<double>& samples) {
  return {quantile(samples, 0.5), quantile(samples, 0.25), quantile(samples, 0.75),
          *std::min_element(samples.begin(), samples.end()), samples.size()};
}

// splitmix64 (Steele, Lea, Flood 2014): exact and portable, so numpy regenerates the same bits.
// Output i of the generator seeded with s is mix(s + (i + 1) * gamma): next() walks the sequence,
// at() computes any output on its own.
struct splitmix64 {
  static constexpr std::uint64_t gamma = 0x9E3779B97F4A7C15ull;
  ORDO_BENCH_HOST_DEVICE static constexpr std::uint64_t mix(std::uint64_t z) noexcept {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  ORDO_BENCH_HOST_DEVICE static constexpr std::uint64_t at(std::uint64_t seed, std::uint64_t i) noexcept {
    return mix(seed + (i + 1) * gamma);
  }
  std::uint64_t state;
  ORDO_BENCH_HOST_DEVICE constexpr std::uint64_t next() noexcept { return mix(state += gamma); }
};

// The top 53 bits of z as a double in [0, 1).
ORDO_BENCH_HOST_DEVICE constexpr double unit_double(std::uint64_t z) noexcept {
  return static_cast<double>(z >> 11) * 0x1p-53;
}

// A timing loop stops after min_reps repetitions and min_seconds of timed calls, or after max_reps.
struct limits { int min_reps = 1, max_reps = INT_MAX; double min_seconds = 0.0; };

template <class F>
double seconds_of(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct repeated { int reps; double seconds; };

// The one timing loop: step() runs one repetition and returns the seconds it timed; repeats it
// under lim, counting from reps repetitions and seconds already done.
template <class Step>
repeated repeat(const limits& lim, Step&& step, int reps = 0, double seconds = 0.0) {
  for (; reps < lim.max_reps && (reps < lim.min_reps || seconds < lim.min_seconds); ++reps) seconds += step();
  return {reps, seconds};
}

// One callable: an untimed warm-up call (with keep_slow_warm_up, the first sample when it alone
// takes min_seconds), then timed calls under lim, appended to samples.
template <class F>
repeated time_calls(F&& f, const limits& lim, std::vector<double>& samples, bool keep_slow_warm_up = false) {
  const double warm_up = seconds_of(f);
  const bool kept = keep_slow_warm_up && warm_up >= lim.min_seconds;
  if (kept) samples.push_back(warm_up);
  return repeat(lim, [&] { return samples.emplace_back(seconds_of(f)); }, kept ? 1 : 0, kept ? warm_up : 0.0);
}

// Several callables in interleaved rounds: warm_up untimed rounds, then rounds in which each item
// runs once, in turn (starting one item later each round with rotate), so that load from other jobs
// spreads over all alike; samples[i] of every item come from round i. Returns {rounds, seconds}.
struct timed_item { std::string name; std::function<void()> run; std::vector<double> samples; };

inline repeated time_rounds(std::vector<timed_item>& items, const limits& lim, int warm_up, bool rotate = false) {
  for (int w = 0; w < warm_up; ++w) {
    for (auto& item : items) item.run();
  }
  std::size_t round = 0;
  return repeat(lim, [&] {
    double seconds = 0.0;
    for (std::size_t k = 0; k < items.size(); ++k) {
      auto& item = items[rotate ? (k + round) % items.size() : k];
      seconds += item.samples.emplace_back(seconds_of(item.run));
    }
    ++round;
    return seconds;
  });
}

// The non-empty parts of text between separators.
inline std::vector<std::string> split(std::string_view text, char separator = ',') {
  std::vector<std::string> parts;
  for (std::size_t start = 0, end; start <= text.size(); start = end + 1) {
    end = std::min(text.find(separator, start), text.size());
    if (end > start) parts.emplace_back(text.substr(start, end - start));
  }
  return parts;
}

// split, each part converted by parse (std::stoull, std::stod, ...).
template <class Parse>
auto split(std::string_view text, Parse parse, char separator = ',') {
  std::vector<decltype(parse(std::string()))> items;
  for (const std::string& part : split(text, separator)) items.push_back(parse(part));
  return items;
}

// Calls option(name, value) for each "--name value" pair of the arguments, passing over Kokkos's
// --kokkos-... ones; a name without a value throws std::invalid_argument (as option() may).
template <class Option>
void for_each_option(int argc, char** argv, Option&& option) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view name = argv[i];
    if (name.starts_with("--kokkos")) continue;
    if (i + 1 >= argc) throw std::invalid_argument("missing value after " + std::string(name));
    option(name, std::string(argv[++i]));
  }
}

}  // namespace ordo_bench

#endif
