// Eigen 3.4 contender: `MatrixXd r = A1 * A2 * ... * An;`, which Eigen evaluates left to right
// with its own GEMM kernels (no EIGEN_USE_BLAS), parallelized with OpenMP (Eigen::setNbThreads).

#include "chain_eval.hpp"

#include <Eigen/Core>

#include <array>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

namespace chain_eval {

namespace {

using row_major = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <std::size_t N>
contender make_eigen_n(const chain_data& chain) {
  struct state {
    std::array<Eigen::MatrixXd, N> operands;
    Eigen::MatrixXd result;
  };
  auto s = std::make_shared<state>();
  for (std::size_t k = 0; k < N; ++k) {
    const auto rows = static_cast<Eigen::Index>(chain.dims[k]), cols = static_cast<Eigen::Index>(chain.dims[k + 1]);
    s->operands[k] = Eigen::Map<const row_major>(chain.inputs[k].data(), rows, cols);
  }
  contender c;
  c.name = "eigen";
  // A left fold is exactly what `A1 * A2 * ... * An` parses to.
  c.run = [s] { s->result = std::apply([](const auto&... m) { return Eigen::MatrixXd((... * m)); }, s->operands); };
  c.values = [s] {
    const auto rows = static_cast<std::size_t>(s->result.rows()), cols = static_cast<std::size_t>(s->result.cols());
    return row_major_copy(rows, cols, [&](std::size_t i, std::size_t j) {
      return s->result(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
    });
  };
  return c;
}

}  // namespace

contender make_eigen(const chain_data& chain) {
  return with_length(chain.dims.size() - 1, [&](auto n) { return make_eigen_n<decltype(n)::value>(chain); });
}

int eigen_threads(int requested) {
  Eigen::setNbThreads(requested);
  return Eigen::nbThreads();
}

std::string eigen_version() {
  return std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
         std::to_string(EIGEN_MINOR_VERSION);
}

}  // namespace chain_eval
