#ifndef ORDO_BENCH_EXPRESSION_HPP
#define ORDO_BENCH_EXPRESSION_HPP

// What the contenders of bench_expression share: the cases (their operands, generated from a seed
// as row-major doubles that numpy_expression.py regenerates bit for bit) and the contender
// interface. Plain C++, so that the Eigen and Armadillo translation units see neither Kokkos nor
// each other. Every extent is a constant here: ordo's static contender needs them at compile time.

#include "bench_support.hpp"

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace expression_bench {

using ordo_bench::splitmix64;

inline constexpr std::size_t n = 3000;  // H, A, B are n x n; x, y have n elements
inline constexpr std::size_t m = 600;   // the thin side of M, M1, M2

// The CLRS 15.2 chain 30, 35, 15, 5, 10, 20, 25, times 10.
inline constexpr std::array<std::size_t, 7> clrs_dims{300, 350, 150, 50, 100, 200, 250};

// The 16-matrix chain: d0 .. d16 uniform in [random_lo, random_hi] from splitmix64 seeded with
// random_seed, fixed at compile time (ordo's static contender needs them as constants).
inline constexpr std::uint64_t random_seed = 20240601;
inline constexpr std::size_t random_lo = 16, random_hi = 2048;
inline constexpr std::array<std::size_t, 17> random_dims = [] {
  splitmix64 rng{random_seed};
  std::array<std::size_t, 17> d{};
  for (auto& e : d) e = random_lo + static_cast<std::size_t>(rng.next() % (random_hi - random_lo + 1));
  return d;
}();

// One stored operand: a name (H, x, A1, ...) and its rows x cols elements, row-major.
struct operand {
  std::string name;
  std::size_t rows, cols;
  std::vector<double> values;
};

// One case: what is written (formula), its operands in the order the formula first names them,
// and the chain the product forms (d0 .. dk, after transposes).
struct case_data {
  std::string name;
  std::string formula;
  std::vector<operand> operands;
  std::vector<std::size_t> dims;
  const operand& at(std::string_view name) const;  // the operand of that name
};

// The case names, in the order they run.
inline const std::vector<std::string> case_names{"hth_x", "hty_xth", "m_a_b", "a_b_m", "a_m1_m2_b", "clrs_x10",
                                                 "random_16"};

// The seed of operand k of case c (numpy_expression.py computes it alike).
constexpr std::uint64_t operand_stream(std::uint64_t seed, std::uint64_t c, std::uint64_t k) noexcept {
  return splitmix64::mix(seed ^ (c << 32) ^ k);
}

// Element `index` (row-major) of an operand with `cols` columns: uniform in [-1, 1) scaled by
// sqrt(3 / cols), variance 1 / cols, so every product keeps entries of order one.
inline double input_value(std::uint64_t stream, std::uint64_t index, std::size_t cols) noexcept {
  const double unit = ordo_bench::unit_double(splitmix64::at(stream, index));
  return (2.0 * unit - 1.0) * std::sqrt(3.0 / static_cast<double>(cols));
}

case_data make_case(const std::string& name, std::uint64_t seed);  // expression.cpp

// One way of computing a case's product. run() computes it into a result it keeps: a new one each
// call, or (the *_into contenders) one allocated once beforehand.
struct contender {
  std::string name;
  std::function<void()> run;
  std::function<std::vector<double>()> values;  // the last result, row-major
};

template <class At>
std::vector<double> row_major_copy(std::size_t rows, std::size_t cols, At&& at) {
  std::vector<double> out(rows * cols);
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) out[i * cols + j] = static_cast<double>(at(i, j));
  }
  return out;
}

// Defined in eigen_contender.cpp and armadillo_contender.cpp: the contenders of one case
// (Eigen: "eigen", a new result, and "eigen_noalias", r.noalias() = ... into a preallocated r).
std::vector<contender> make_eigen(const case_data& c);
std::vector<contender> make_armadillo(const case_data& c);
int eigen_threads(int requested);  // Eigen::setNbThreads(requested); returns Eigen::nbThreads()
std::string eigen_version();
std::string armadillo_version();

}  // namespace expression_bench

#endif
