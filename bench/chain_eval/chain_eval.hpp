#ifndef ORDO_BENCH_CHAIN_EVAL_HPP
#define ORDO_BENCH_CHAIN_EVAL_HPP

// What the contenders of bench_chain_eval share: the chains' inputs (row-major doubles generated
// from a seed, reproducible in numpy by numpy_chain_eval.py) and the contender interface. Plain
// C++, so the Eigen and Armadillo translation units see neither Kokkos nor each other.

#include "bench_support.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace chain_eval {

using ordo_bench::splitmix64;

// The seed of matrix `matrix` of chain `chain` (numpy_chain_eval.py computes it alike).
constexpr std::uint64_t matrix_stream(std::uint64_t seed, std::uint64_t chain, std::uint64_t matrix) noexcept {
  return splitmix64::mix(seed ^ (chain << 32) ^ matrix);
}

// Element `index` (row-major) of a matrix with `cols` columns: uniform in [-1, 1) scaled by
// sqrt(3 / cols), i.e. variance 1 / cols, so every product keeps entries of order one and long
// chains neither overflow nor lose relative accuracy to cancellation.
inline double input_value(std::uint64_t stream, std::uint64_t index, std::size_t cols) noexcept {
  const double unit = ordo_bench::unit_double(splitmix64::at(stream, index));
  return (2.0 * unit - 1.0) * std::sqrt(3.0 / static_cast<double>(cols));
}

struct chain_data {
  std::string name;
  std::vector<std::size_t> dims;             // d0 .. dn; Ak is dims[k] x dims[k + 1]
  std::vector<std::vector<double>> inputs;   // row-major
};

// One way of computing the chain's product. run() computes it into a newly allocated result that
// it keeps (releasing the previous one), as a caller writing `auto r = A * B * C;` in a loop would.
struct contender {
  std::string name;
  std::function<void()> run;
  // The last result, copied out row-major.
  std::function<std::vector<double>()> values;
};

// Row-major copy of a rows x cols result read through at(i, j).
template <class At>
std::vector<double> row_major_copy(std::size_t rows, std::size_t cols, At&& at) {
  std::vector<double> out(rows * cols);
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) out[i * cols + j] = static_cast<double>(at(i, j));
  }
  return out;
}

// The operand counts the benchmark's chains use; the variadic contenders are instantiated for
// these only.
template <class F>
decltype(auto) with_length(std::size_t matrices, F&& f) {
  switch (matrices) {
    case 3: return f(std::integral_constant<std::size_t, 3>{});
    case 6: return f(std::integral_constant<std::size_t, 6>{});
    case 8: return f(std::integral_constant<std::size_t, 8>{});
    case 16: return f(std::integral_constant<std::size_t, 16>{});
    default:
      throw std::invalid_argument("bench_chain_eval: chains of " + std::to_string(matrices) +
                                  " matrices are not instantiated; add the length to chain_eval::with_length");
  }
}

// Defined in eigen_contender.cpp and armadillo_contender.cpp.
contender make_eigen(const chain_data& chain);
contender make_armadillo(const chain_data& chain);
int eigen_threads(int requested);  // Eigen::setNbThreads(requested); returns Eigen::nbThreads()
std::string eigen_version();
std::string armadillo_version();

}  // namespace chain_eval

#endif
