// What the teaching examples and the tour share: claims checked at run time, and median timings.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string_view>
#include <vector>

namespace ordo_examples {

// Every printed claim is also checked; a wrong one is reported here and fails the program.
inline int wrong_results = 0;

inline bool expect(bool correct, std::string_view what) {
  if (!correct) {
    std::fprintf(stderr, "WRONG: %.*s\n", static_cast<int>(what.size()), what.data());
    ++wrong_results;
  }
  return correct;
}

// Median wall time of f over repeated runs, in units of Period (std::micro, std::milli); the
// median ignores the odd descheduled run.
template <class Period, class F>
double median_time(F&& f, int repetitions) {
  std::vector<double> times;
  for (int r = 0; r < repetitions; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    times.push_back(std::chrono::duration<double, Period>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(times.begin(), times.begin() + repetitions / 2, times.end());
  return times[static_cast<std::size_t>(repetitions / 2)];
}

inline double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace ordo_examples
