// Eigen 3.4 and Armadillo, spelled as their users spell a product: `MatrixXd r = H.transpose() * H
// * x;` (Eigen goes left to right with its own kernels, no EIGEN_USE_BLAS, on OpenMP threads),
// `r.noalias() = ...;` into r allocated beforehand (Eigen's fastest spelling), and `arma::mat r =
// H.t() * H * x;` (Armadillo orders products of 3 and 4 operands by the size of the temporaries,
// then goes left to right; Debian's libarmadillo calls the system BLAS, OpenBLAS).

#include "chains.hpp"

#include <Eigen/Core>
#include <armadillo>

#include <memory>

namespace chains {
namespace {

using row_major = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr auto eigen_load = []<class S>(S, const operand& o) {
  const auto rows = static_cast<Eigen::Index>(o.rows), cols = static_cast<Eigen::Index>(o.cols);
  if constexpr (S::vector) return Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(o.values.data(), rows));
  else return Eigen::MatrixXd(Eigen::Map<const row_major>(o.values.data(), rows, cols));
};
constexpr auto arma_load = []<class S>(S, const operand& o) {
  if constexpr (S::vector) return arma::vec(o.values);
  else return arma::mat(arma::mat(o.values.data(), o.cols, o.rows).t());  // row-major: the transpose
};

template <class Case>
contenders make(const case_data& c, const names& selected) {
  contenders out;
  if (wanted(selected, "eigen") || wanted(selected, "eigen_noalias")) {
    struct state { decltype(load_operands<Case>(c, eigen_load)) ops; Eigen::MatrixXd fresh, into; };
    const auto rows = static_cast<Eigen::Index>(c.dims.front()), cols = static_cast<Eigen::Index>(c.dims.back());
    auto s = std::make_shared<state>(state{load_operands<Case>(c, eigen_load), {}, Eigen::MatrixXd::Zero(rows, cols)});
    const auto t = [](const auto& a) { return a.transpose(); };
    const auto copy = [](const row_major& x) { return std::vector<double>(x.data(), x.data() + x.size()); };
    if (wanted(selected, "eigen")) {
      out.push_back({"eigen",
                     [s, t] { with_product<Case>(s->ops, t, [&](auto&& e) { s->fresh = Eigen::MatrixXd(e); }); },
                     [s, copy] { return copy(s->fresh); }});
    }
    if (wanted(selected, "eigen_noalias")) {
      out.push_back({"eigen_noalias",
                     [s, t] { with_product<Case>(s->ops, t, [&](auto&& e) { s->into.noalias() = e; }); },
                     [s, copy] { return copy(s->into); }});
    }
  }
  if (wanted(selected, "armadillo")) {
    struct state { decltype(load_operands<Case>(c, arma_load)) ops; arma::mat r; };
    auto s = std::make_shared<state>(state{load_operands<Case>(c, arma_load), {}});
    const auto t = [](const auto& a) { return a.t(); };
    out.push_back({"armadillo", [s, t] { with_product<Case>(s->ops, t, [&](auto&& e) { s->r = arma::mat(e); }); },
                   [s] { return arma::conv_to<std::vector<double>>::from(arma::vectorise(s->r.t())); }});
  }
  return out;
}

}  // namespace

contenders peers(const case_data& c, const names& selected) {
  return visit_case(c.name, [&](auto k) { return make<decltype(k)>(c, selected); });
}

std::string setup_peers() {
  Eigen::setNbThreads(2);
  return "\"eigen\": \"" + std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
         std::to_string(EIGEN_MINOR_VERSION) + "\", \"armadillo\": \"" + arma::arma_version::as_string() +
         "\", \"eigen_threads\": " + std::to_string(Eigen::nbThreads());
}

}  // namespace chains
