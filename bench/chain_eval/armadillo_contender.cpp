// Armadillo contender: `arma::mat r = A1 * A2 * ... * An;`. Armadillo reorders products of three
// and four operands (comparing the sizes of the temporaries) and calls BLAS dgemm for each
// product; Debian's libarmadillo forwards to the system BLAS, OpenBLAS here.

#include "chain_eval.hpp"

#include <armadillo>

#include <array>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

namespace chain_eval {

namespace {

template <std::size_t N>
contender make_armadillo_n(const chain_data& chain) {
  struct state {
    std::array<arma::mat, N> operands;
    arma::mat result;
  };
  auto s = std::make_shared<state>();
  for (std::size_t k = 0; k < N; ++k) {
    const std::size_t rows = chain.dims[k], cols = chain.dims[k + 1];
    arma::mat m(rows, cols);
    for (std::size_t i = 0; i < rows; ++i) {
      for (std::size_t j = 0; j < cols; ++j) m(i, j) = chain.inputs[k][i * cols + j];
    }
    s->operands[k] = std::move(m);
  }
  contender c;
  c.name = "armadillo";
  c.run = [s] { s->result = std::apply([](const auto&... m) { return arma::mat((... * m)); }, s->operands); };
  c.values = [s] {
    return row_major_copy(s->result.n_rows, s->result.n_cols, [&](std::size_t i, std::size_t j) { return s->result(i, j); });
  };
  return c;
}

}  // namespace

contender make_armadillo(const chain_data& chain) {
  return with_length(chain.dims.size() - 1, [&](auto n) { return make_armadillo_n<decltype(n)::value>(chain); });
}

std::string armadillo_version() { return arma::arma_version::as_string(); }

}  // namespace chain_eval
