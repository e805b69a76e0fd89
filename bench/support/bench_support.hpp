#ifndef ORDO_BENCH_SUPPORT_HPP
#define ORDO_BENCH_SUPPORT_HPP

// Small helpers every benchmark driver needs: order statistics of timing samples and splitting a
// comma-separated option. Benchmarks include it as "bench_support.hpp" (bench/CMakeLists.txt).

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ordo_bench {

// The q-quantile with linear interpolation between order statistics (numpy's default).
inline double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double position = q * static_cast<double>(v.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(position);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (position - static_cast<double>(lo));
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 != 0 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// The non-empty parts of text between separators.
inline std::vector<std::string> split(std::string_view text, char separator = ',') {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(separator, start), text.size());
    if (end > start) parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

}  // namespace ordo_bench

#endif
