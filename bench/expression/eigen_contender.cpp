// Eigen 3.4 contenders, written as an Eigen user writes them: `MatrixXd r = H.transpose() * H * x;`
// (a new result; Eigen evaluates `*` left to right, with its own GEMM/GEMV kernels, no
// EIGEN_USE_BLAS, parallelized with OpenMP) and `r.noalias() = ...;` into a result allocated
// beforehand (no temporary for the last product, Eigen's fastest spelling).

#include "expression_bench.hpp"

#include <Eigen/Core>

#include <array>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

namespace expression_bench {

namespace {

using row_major = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

Eigen::MatrixXd load(const operand& o) {
  return Eigen::Map<const row_major>(o.values.data(), static_cast<Eigen::Index>(o.rows),
                                     static_cast<Eigen::Index>(o.cols));
}

Eigen::VectorXd load_vector(const operand& o) {
  return Eigen::Map<const Eigen::VectorXd>(o.values.data(), static_cast<Eigen::Index>(o.rows));
}

// The two contenders of one product: product(operands) is the Eigen expression.
template <class Operands, class Product>
std::vector<contender> contenders(Operands operands, std::size_t rows, std::size_t cols, Product product) {
  struct state {
    Operands operands;
    Eigen::MatrixXd result, preallocated;
  };
  auto s = std::make_shared<state>(state{std::move(operands), {}, {}});
  s->preallocated.resize(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
  s->preallocated.setZero();
  const auto values = [](const Eigen::MatrixXd& r) {
    return row_major_copy(static_cast<std::size_t>(r.rows()), static_cast<std::size_t>(r.cols()),
                          [&](std::size_t i, std::size_t j) {
                            return r(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
                          });
  };
  contender fresh{"eigen", [s, product] { s->result = Eigen::MatrixXd(product(s->operands)); },
                  [s, values] { return values(s->result); }};
  contender into{"eigen_noalias", [s, product] { s->preallocated.noalias() = product(s->operands); },
                 [s, values] { return values(s->preallocated); }};
  return {std::move(fresh), std::move(into)};
}

template <std::size_t N>
std::vector<contender> chain_contenders(const case_data& c) {
  std::array<Eigen::MatrixXd, N> a;
  for (std::size_t k = 0; k < N; ++k) a[k] = load(c.operands[k]);
  // A left fold is exactly what `A1 * A2 * ... * An` parses to.
  return contenders(std::move(a), c.dims.front(), c.dims.back(),
                    [](const auto& a) { return std::apply([](const auto&... m) { return (... * m); }, a); });
}

}  // namespace

std::vector<contender> make_eigen(const case_data& c) {
  const std::size_t rows = c.dims.front(), cols = c.dims.back();
  if (c.name == "hth_x") {
    return contenders(std::make_tuple(load(c.at("H")), load_vector(c.at("x"))), rows, cols, [](const auto& o) {
      const auto& [h, x] = o;
      return h.transpose() * h * x;
    });
  }
  if (c.name == "hty_xth") {
    return contenders(std::make_tuple(load(c.at("H")), load_vector(c.at("y")), load_vector(c.at("x"))), rows, cols,
                      [](const auto& o) {
                        const auto& [h, y, x] = o;
                        return h.transpose() * y * x.transpose() * h;
                      });
  }
  if (c.name == "m_a_b") {
    return contenders(std::make_tuple(load(c.at("M")), load(c.at("A")), load(c.at("B"))), rows, cols,
                      [](const auto& o) {
                        const auto& [mm, a, b] = o;
                        return mm * a * b;
                      });
  }
  if (c.name == "a_b_m") {
    return contenders(std::make_tuple(load(c.at("A")), load(c.at("B")), load(c.at("M"))), rows, cols,
                      [](const auto& o) {
                        const auto& [a, b, mm] = o;
                        return a * b * mm;
                      });
  }
  if (c.name == "a_m1_m2_b") {
    return contenders(std::make_tuple(load(c.at("A")), load(c.at("M1")), load(c.at("M2")), load(c.at("B"))), rows,
                      cols, [](const auto& o) {
                        const auto& [a, m1, m2, b] = o;
                        return a * m1 * m2 * b;
                      });
  }
  if (c.name == "clrs_x10") return chain_contenders<6>(c);
  if (c.name == "random_16") return chain_contenders<16>(c);
  throw std::invalid_argument("bench_expression: no Eigen spelling of case " + c.name);
}

int eigen_threads(int requested) {
  Eigen::setNbThreads(requested);
  return Eigen::nbThreads();
}

std::string eigen_version() {
  return std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
         std::to_string(EIGEN_MINOR_VERSION);
}

}  // namespace expression_bench
