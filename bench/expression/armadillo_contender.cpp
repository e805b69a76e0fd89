// Armadillo contender: `arma::mat r = H.t() * H * x;` as an Armadillo user writes it. Armadillo
// reorders a product of three operands (the pair whose result is smaller first) and of four (the
// triple whose result is smaller first), then evaluates longer products left to right after the
// first four; transposes become BLAS flags. Debian's libarmadillo calls the system BLAS, OpenBLAS.

#include "expression_bench.hpp"

#include <armadillo>

#include <array>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

namespace expression_bench {

namespace {

arma::mat load(const operand& o) {
  arma::mat m(o.rows, o.cols);
  for (std::size_t i = 0; i < o.rows; ++i) {
    for (std::size_t j = 0; j < o.cols; ++j) m(i, j) = o.values[i * o.cols + j];
  }
  return m;
}

arma::vec load_vector(const operand& o) { return arma::vec(o.values); }

// product(operands, result) assigns `result = arma::mat(expression)`: Armadillo's expressions hold
// references to their subexpressions, so each is converted within the statement that builds it.
template <class Operands, class Product>
std::vector<contender> contenders(Operands operands, Product product) {
  struct state {
    Operands operands;
    arma::mat result;
  };
  auto s = std::make_shared<state>(state{std::move(operands), {}});
  contender c{"armadillo", [s, product] { product(s->operands, s->result); },
              [s] {
                return row_major_copy(s->result.n_rows, s->result.n_cols,
                                      [&](std::size_t i, std::size_t j) { return s->result(i, j); });
              }};
  return {std::move(c)};
}

template <std::size_t N>
std::vector<contender> chain_contenders(const case_data& c) {
  std::array<arma::mat, N> a;
  for (std::size_t k = 0; k < N; ++k) a[k] = load(c.operands[k]);
  return contenders(std::move(a), [](const auto& a, arma::mat& r) {
    std::apply([&](const auto&... m) { r = arma::mat((... * m)); }, a);
  });
}

}  // namespace

std::vector<contender> make_armadillo(const case_data& c) {
  if (c.name == "hth_x") {
    return contenders(std::make_tuple(load(c.at("H")), load_vector(c.at("x"))), [](const auto& o, arma::mat& r) {
      const auto& [h, x] = o;
      r = arma::mat(h.t() * h * x);
    });
  }
  if (c.name == "hty_xth") {
    return contenders(std::make_tuple(load(c.at("H")), load_vector(c.at("y")), load_vector(c.at("x"))),
                      [](const auto& o, arma::mat& r) {
                        const auto& [h, y, x] = o;
                        r = arma::mat(h.t() * y * x.t() * h);
                      });
  }
  if (c.name == "m_a_b") {
    return contenders(std::make_tuple(load(c.at("M")), load(c.at("A")), load(c.at("B"))), [](const auto& o, arma::mat& r) {
      const auto& [mm, a, b] = o;
      r = arma::mat(mm * a * b);
    });
  }
  if (c.name == "a_b_m") {
    return contenders(std::make_tuple(load(c.at("A")), load(c.at("B")), load(c.at("M"))), [](const auto& o, arma::mat& r) {
      const auto& [a, b, mm] = o;
      r = arma::mat(a * b * mm);
    });
  }
  if (c.name == "a_m1_m2_b") {
    return contenders(std::make_tuple(load(c.at("A")), load(c.at("M1")), load(c.at("M2")), load(c.at("B"))),
                      [](const auto& o, arma::mat& r) {
                        const auto& [a, m1, m2, b] = o;
                        r = arma::mat(a * m1 * m2 * b);
                      });
  }
  if (c.name == "clrs_x10") return chain_contenders<6>(c);
  if (c.name == "random_16") return chain_contenders<16>(c);
  throw std::invalid_argument("bench_expression: no Armadillo spelling of case " + c.name);
}

std::string armadillo_version() { return arma::arma_version::as_string(); }

}  // namespace expression_bench
