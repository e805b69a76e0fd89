// bench_structured: Linnea-style structured chains, double, every contender on the same inputs.
// hand: the best hand-written BLAS/LAPACK call sequence (the floor); ordo: plan_structured_chain
// (predicted-time model, planned inside the timed call) and ordo::evaluate; eigen and armadillo
// written as their documentation recommends. Prints JSON lines: per case its plans; per contender
// its samples and the relative difference of its result from hand's. bench.py times numpy on the
// same inputs (the same splitmix64 values) and checks its results against the checksums printed here.
//
// Cases (sizes from --scale 1; --scale 0.25 for smoke runs):
//   lsq       beta = (X^T X)^-1 X^T y            X 4000 x 500, y 4000
//   gls       beta = (X^T M^-1 X)^-1 X^T M^-1 y  M 1500 x 1500 SPD, X 1500 x 300
//   whiten    W = L^-1 A L^-T                    L 1500 lower, A 1500 x 1500
//   dwd       R = D W D                          W 3000 x 3000, D diagonal
//   triangles r = L1 L2 L3 x                     L1..L3 3000 lower, x 3000

#include <ordo/kernels/cholesky.hpp>
#include <ordo/kernels/evaluate_structured.hpp>

#include "bench_support.hpp"

#include <Eigen/Dense>
#include <armadillo>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

extern "C" {
int openblas_get_num_threads(void);
void dtrmv_(const char*, const char*, const char*, const int*, const double*, const int*, double*, const int*);
void dposv_(const char*, const int*, const int*, double*, const int*, double*, const int*, int*);
}

namespace {

using ordo::chain_operand;
using namespace ordo::operands;
using lapack = ordo::detail::lapack<double>;
using host_matrix = ordo::matrix<double, ordo::dynamic, ordo::dynamic, Kokkos::DefaultHostExecutionSpace>;
using eigen_rows = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using eigen_map = Eigen::Map<eigen_rows>;
using eigen_const_map = Eigen::Map<const eigen_rows>;
using eigen_vector_map = Eigen::Map<Eigen::VectorXd>;
constexpr std::uint64_t seed = 20261126;

// Matrix `id`'s values: 2 u - 1 for u the splitmix64 outputs seeded with seed + id, row-major, then
// made into its kind: spd adds rows to the diagonal of the symmetrized matrix, lower keeps the
// lower triangle divided by rows with 2 on the diagonal, diagonal is 1 + u. bench.py does the same.
host_matrix make(std::uint64_t id, std::size_t rows, std::size_t cols, const char* kind = "general") {
  host_matrix m(ordo::uninitialized, rows, cols);
  double* v = m.view().data();
  for (std::size_t e = 0; e < rows * cols; ++e) v[e] = 2 * ordo_bench::unit_double(ordo_bench::splitmix64::at(seed + id, e)) - 1;
  const std::string k = kind;
  if (k == "spd") {
    for (std::size_t i = 0; i < rows; ++i) {
      for (std::size_t j = 0; j < i; ++j) v[i * cols + j] = v[j * cols + i];
      v[i * cols + i] += static_cast<double>(rows);
    }
  } else if (k == "lower") {
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j) v[i * cols + j] = j > i ? 0.0 : j == i ? 2.0 : v[i * cols + j] / static_cast<double>(rows);
  } else if (k == "diagonal") {
    for (std::size_t e = 0; e < rows * cols; ++e) v[e] = 1.5 + 0.5 * v[e];
  }
  return m;
}

host_matrix copy_of(const host_matrix& m) {
  host_matrix c(ordo::uninitialized, m.rows(), m.cols());
  std::memcpy(c.view().data(), m.view().data(), m.rows() * m.cols() * sizeof(double));
  return c;
}

arma::mat to_arma(const host_matrix& m) {  // column-major copy, made before timing
  return arma::mat(const_cast<double*>(m.view().data()), m.cols(), m.rows(), true).t();
}

double relative_difference(const double* a, const double* b, std::size_t n) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < n; ++i) num += (a[i] - b[i]) * (a[i] - b[i]), den += b[i] * b[i];
  return std::sqrt(num / (den > 0 ? den : 1));
}

struct contender {
  std::string name;
  std::function<void()> run;
  std::function<std::vector<double>()> result;  // row-major
};

struct bench_case {
  std::string name;
  std::vector<std::string> plans;  // each plan's order and kernels, for the report
  std::vector<contender> contenders;
};

// A hand-written sequence's temporaries, allocated in the timed call as ordo's are (uninitialized).
struct scratch {
  explicit scratch(std::size_t elements) : data(new double[elements]) {}
  double* get() const { return data.get(); }
  std::unique_ptr<double[]> data;
};

std::size_t scaled(double scale, std::size_t n) { return std::max<std::size_t>(8, static_cast<std::size_t>(n * scale)); }

std::vector<double> values(const host_matrix& m) { return {m.view().data(), m.view().data() + m.rows() * m.cols()}; }

// --- lsq: beta = (X^T X)^-1 X^T y ---
bench_case least_squares(double scale) {
  const std::size_t m = scaled(scale, 4000), n = scaled(scale, 500);
  auto x = std::make_shared<host_matrix>(make(1, m, n)), y = std::make_shared<host_matrix>(make(2, m, 1));
  auto beta_hand = std::make_shared<host_matrix>(n, 1), beta_ordo = std::make_shared<host_matrix>(n, 1);
  auto beta_eigen = std::make_shared<Eigen::VectorXd>(n);
  auto xa = std::make_shared<arma::mat>(to_arma(*x)), ya = std::make_shared<arma::mat>(to_arma(*y));
  auto beta_arma = std::make_shared<arma::mat>();
  const std::array<std::size_t, 3> gram_dims{n, m, n};
  const std::array<std::size_t, 4> solve_dims{n, n, m, 1};
  const std::array<chain_operand, 2> gram_ops{general.transpose().from(1), general.from(1)};
  const std::array<chain_operand, 3> solve_ops{spd.inverse(), general.transpose(), general};
  bench_case c{"lsq", {}, {}};
  for (const auto& p : {ordo::plan_structured_chain(std::span<const std::size_t>(gram_dims), std::span<const chain_operand>(gram_ops)),
                        ordo::plan_structured_chain(std::span<const std::size_t>(solve_dims), std::span<const chain_operand>(solve_ops))}) {
    c.plans.push_back(std::string(p.order()) + " " + std::string(p.kernels()));
  }
  c.contenders.push_back({"hand", [=] {
    // Row-major X is column-major X^T (n x m): S = X^T X by SYRK ('N' on X^T), t = X^T y by GEMV, POSV.
    const int mi = static_cast<int>(m), ni = static_cast<int>(n), one_i = 1;
    const double one = 1, zero = 0;
    const scratch s(n * n);
    lapack::syrk("L", "N", &ni, &mi, &one, x->view().data(), &ni, &zero, s.get(), &ni);
    dgemv_("N", &ni, &mi, &one, x->view().data(), &ni, y->view().data(), &one_i, &zero, beta_hand->view().data(), &one_i);
    int info = 0;
    dposv_("L", &ni, &one_i, s.get(), &ni, beta_hand->view().data(), &ni, &info);
  }, [=] { return values(*beta_hand); }});
  c.contenders.push_back({"ordo", [=] {
    const host_matrix s_ordo(ordo::uninitialized, n, n);
    ordo::evaluate(ordo::plan_structured_chain(std::span<const std::size_t>(gram_dims), std::span<const chain_operand>(gram_ops)),
                   s_ordo, *x, *x);
    ordo::evaluate(ordo::plan_structured_chain(std::span<const std::size_t>(solve_dims), std::span<const chain_operand>(solve_ops)),
                   *beta_ordo, s_ordo, *x, *y);
  }, [=] { return values(*beta_ordo); }});
  c.contenders.push_back({"eigen", [=] {  // Eigen's "Solving linear least squares systems": normal equations
    const eigen_const_map X(x->view().data(), static_cast<long>(m), static_cast<long>(n));
    const Eigen::Map<const Eigen::VectorXd> Y(y->view().data(), static_cast<long>(m));
    *beta_eigen = (X.transpose() * X).ldlt().solve(X.transpose() * Y);
  }, [=] { return std::vector<double>(beta_eigen->data(), beta_eigen->data() + n); }});
  c.contenders.push_back({"armadillo", [=] {
    *beta_arma = arma::solve(xa->t() * *xa, xa->t() * *ya, arma::solve_opts::likely_sympd);
  }, [=] { return std::vector<double>(beta_arma->begin(), beta_arma->end()); }});
  return c;
}

// --- gls: beta = (X^T M^-1 X)^-1 X^T M^-1 y ---
bench_case generalized_least_squares(double scale) {
  const std::size_t m = scaled(scale, 1500), p = scaled(scale, 300);
  auto mm = std::make_shared<host_matrix>(make(3, m, m, "spd")), x = std::make_shared<host_matrix>(make(4, m, p)),
       y = std::make_shared<host_matrix>(make(5, m, 1));
  auto beta_hand = std::make_shared<host_matrix>(p, 1), beta_ordo = std::make_shared<host_matrix>(p, 1),
       beta_factored = std::make_shared<host_matrix>(p, 1), beta_cached = std::make_shared<host_matrix>(p, 1);
  auto beta_eigen = std::make_shared<Eigen::VectorXd>(p);
  auto ma = std::make_shared<arma::mat>(to_arma(*mm)), xa = std::make_shared<arma::mat>(to_arma(*x)),
       ya = std::make_shared<arma::mat>(to_arma(*y));
  auto beta_arma = std::make_shared<arma::mat>();
  const std::array<std::size_t, 4> s_dims{p, m, m, p}, t_dims{p, m, m, 1};
  const std::array<std::size_t, 3> beta_dims{p, p, 1};
  const std::array<chain_operand, 3> xmx{general.transpose(), spd.inverse(), general};
  const std::array<chain_operand, 2> solve{spd.inverse(), general};
  const auto plan = [](const auto& d, const auto& o) {
    return ordo::plan_structured_chain(std::span<const std::size_t>(d), std::span<const chain_operand>(o));
  };
  bench_case c{"gls", {}, {}};
  for (const auto& pl : {plan(s_dims, xmx), plan(t_dims, xmx), plan(beta_dims, solve)}) {
    c.plans.push_back(std::string(pl.order()) + " " + std::string(pl.kernels()));
  }
  c.contenders.push_back({"hand", [=] {
    // One Cholesky of M. Row-major Z = M^-1 X is column-major Z^T = X^T L^-T L^-1: two right-side TRSMs.
    const int mi = static_cast<int>(m), pi = static_cast<int>(p), one_i = 1;
    const double one = 1, zero = 0;
    int info = 0;
    const scratch factor(m * m), z(m * p), w(m), s(p * p);
    std::memcpy(factor.get(), mm->view().data(), m * m * sizeof(double));
    lapack::potrf("L", &mi, factor.get(), &mi, &info);
    std::memcpy(z.get(), x->view().data(), m * p * sizeof(double));
    lapack::trsm("R", "L", "T", "N", &pi, &mi, &one, factor.get(), &mi, z.get(), &pi);
    lapack::trsm("R", "L", "N", "N", &pi, &mi, &one, factor.get(), &mi, z.get(), &pi);
    std::memcpy(w.get(), y->view().data(), m * sizeof(double));
    lapack::potrs("L", &mi, &one_i, factor.get(), &mi, w.get(), &mi, &info);
    // S = X^T Z: column-major S^T = Z^T X, X being the transpose of its column-major X^T.
    dgemm_("N", "T", &pi, &pi, &mi, &one, z.get(), &pi, x->view().data(), &pi, &zero, s.get(), &pi);
    dgemv_("N", &pi, &mi, &one, x->view().data(), &pi, w.get(), &one_i, &zero, beta_hand->view().data(), &one_i);
    dposv_("L", &pi, &one_i, s.get(), &pi, beta_hand->view().data(), &pi, &info);
  }, [=] { return values(*beta_hand); }});
  c.contenders.push_back({"ordo", [=] {
    const host_matrix s_ordo(ordo::uninitialized, p, p), t_ordo(ordo::uninitialized, p, 1);
    ordo::evaluate(plan(s_dims, xmx), s_ordo, *x, *mm, *x);
    ordo::evaluate(plan(t_dims, xmx), t_ordo, *x, *mm, *y);
    ordo::evaluate(plan(beta_dims, solve), *beta_ordo, s_ordo, t_ordo);
  }, [=] { return values(*beta_ordo); }});
  c.contenders.push_back({"ordo_cache", [=] {
    // The chains as written, with one ordo::factorization_cache: M's Cholesky factor is computed
    // by the first chain and reused by the second.
    ordo::factorization_cache cache;
    const host_matrix s_ordo(ordo::uninitialized, p, p), t_ordo(ordo::uninitialized, p, 1);
    ordo::evaluate(cache, plan(s_dims, xmx), s_ordo, *x, *mm, *x);
    ordo::evaluate(cache, plan(t_dims, xmx), t_ordo, *x, *mm, *y);
    ordo::evaluate(cache, plan(beta_dims, solve), *beta_cached, s_ordo, t_ordo);
  }, [=] { return values(*beta_cached); }});
  c.contenders.push_back({"ordo_factored", [=] {
    // M = L L^T once (ordo::cholesky_factor), then B = L^-1 X, c = L^-1 y, beta = (B^T B)^-1 B^T c.
    const host_matrix l = ordo::cholesky_factor(*mm);
    const host_matrix b(ordo::uninitialized, m, p), cc(ordo::uninitialized, m, 1), s_ordo(ordo::uninitialized, p, p);
    ordo::evaluate(plan(std::array<std::size_t, 3>{m, m, p}, std::array<chain_operand, 2>{lower.inverse(), general}), b, l, *x);
    ordo::evaluate(plan(std::array<std::size_t, 3>{m, m, 1}, std::array<chain_operand, 2>{lower.inverse(), general}), cc, l, *y);
    ordo::evaluate(plan(std::array<std::size_t, 3>{p, m, p},
                        std::array<chain_operand, 2>{general.transpose().from(1), general.from(1)}), s_ordo, b, b);
    ordo::evaluate(plan(std::array<std::size_t, 4>{p, p, m, 1},
                        std::array<chain_operand, 3>{spd.inverse(), general.transpose(), general}), *beta_factored, s_ordo, b, cc);
  }, [=] { return values(*beta_factored); }});
  c.contenders.push_back({"eigen", [=] {  // one LLT of M, reused
    const eigen_const_map M(mm->view().data(), static_cast<long>(m), static_cast<long>(m));
    const eigen_const_map X(x->view().data(), static_cast<long>(m), static_cast<long>(p));
    const Eigen::Map<const Eigen::VectorXd> Y(y->view().data(), static_cast<long>(m));
    const Eigen::LLT<Eigen::MatrixXd> llt(M);
    const Eigen::MatrixXd Z = llt.solve(X);
    *beta_eigen = (X.transpose() * Z).llt().solve(X.transpose() * llt.solve(Y));
  }, [=] { return std::vector<double>(beta_eigen->data(), beta_eigen->data() + p); }});
  c.contenders.push_back({"armadillo", [=] {
    const arma::mat z_arma = arma::solve(*ma, *xa, arma::solve_opts::likely_sympd);
    *beta_arma = arma::solve(xa->t() * z_arma, xa->t() * arma::solve(*ma, *ya, arma::solve_opts::likely_sympd),
                             arma::solve_opts::likely_sympd);
  }, [=] { return std::vector<double>(beta_arma->begin(), beta_arma->end()); }});
  return c;
}

// --- whiten: W = L^-1 A L^-T ---
bench_case whitening(double scale) {
  const std::size_t n = scaled(scale, 1500);
  auto l = std::make_shared<host_matrix>(make(6, n, n, "lower")), a = std::make_shared<host_matrix>(make(7, n, n));
  auto w_hand = std::make_shared<host_matrix>(n, n), w_ordo = std::make_shared<host_matrix>(n, n);
  auto w_eigen = std::make_shared<eigen_rows>(n, n);
  auto la = std::make_shared<arma::mat>(to_arma(*l)), aa = std::make_shared<arma::mat>(to_arma(*a));
  auto w_arma = std::make_shared<arma::mat>();
  const std::array<std::size_t, 4> dims{n, n, n, n};
  const std::array<chain_operand, 3> ops{lower.inverse().from(1), general, lower.inverse().transpose().from(1)};
  bench_case c{"whiten", {}, {}};
  const auto plan0 = ordo::plan_structured_chain(std::span<const std::size_t>(dims), std::span<const chain_operand>(ops));
  c.plans.push_back(std::string(plan0.order()) + " " + std::string(plan0.kernels()));
  c.contenders.push_back({"hand", [=] {
    // Row-major W is column-major W^T = L^-1 A^T L^-T; row-major L is column-major L^T (upper).
    const int ni = static_cast<int>(n);
    const double one = 1;
    std::memcpy(w_hand->view().data(), a->view().data(), n * n * sizeof(double));
    lapack::trsm("L", "U", "T", "N", &ni, &ni, &one, l->view().data(), &ni, w_hand->view().data(), &ni);
    lapack::trsm("R", "U", "N", "N", &ni, &ni, &one, l->view().data(), &ni, w_hand->view().data(), &ni);
  }, [=] { return values(*w_hand); }});
  c.contenders.push_back({"ordo", [=] {
    ordo::evaluate(ordo::plan_structured_chain(std::span<const std::size_t>(dims), std::span<const chain_operand>(ops)),
                   *w_ordo, *l, *a, *l);
  }, [=] { return values(*w_ordo); }});
  c.contenders.push_back({"eigen", [=] {  // triangularView<Lower>().solve, then solveInPlace<OnTheRight>
    const eigen_const_map L(l->view().data(), static_cast<long>(n), static_cast<long>(n));
    const eigen_const_map A(a->view().data(), static_cast<long>(n), static_cast<long>(n));
    *w_eigen = L.triangularView<Eigen::Lower>().solve(A);
    L.transpose().triangularView<Eigen::Upper>().solveInPlace<Eigen::OnTheRight>(*w_eigen);
  }, [=] { return std::vector<double>(w_eigen->data(), w_eigen->data() + n * n); }});
  c.contenders.push_back({"armadillo", [=] {
    const arma::mat left = arma::solve(arma::trimatl(*la), *aa);
    *w_arma = arma::solve(arma::trimatl(*la), left.t()).t();
  }, [=] { const arma::mat rows = w_arma->t(); return std::vector<double>(rows.begin(), rows.end()); }});
  return c;
}

// --- dwd: R = D W D ---
bench_case diagonal_scaling(double scale) {
  const std::size_t n = scaled(scale, 3000);
  auto d = std::make_shared<host_matrix>(make(8, n, 1, "diagonal")), w = std::make_shared<host_matrix>(make(9, n, n));
  auto r_hand = std::make_shared<host_matrix>(n, n), r_ordo = std::make_shared<host_matrix>(n, n);
  auto r_eigen = std::make_shared<eigen_rows>(n, n);
  auto da = std::make_shared<arma::vec>(to_arma(*d));
  auto wa = std::make_shared<arma::mat>(to_arma(*w));
  auto r_arma = std::make_shared<arma::mat>(n, n);
  const std::array<std::size_t, 4> dims{n, n, n, n};
  const std::array<chain_operand, 3> ops{diagonal, general, diagonal};
  bench_case c{"dwd", {}, {}};
  const auto plan0 = ordo::plan_structured_chain(std::span<const std::size_t>(dims), std::span<const chain_operand>(ops));
  c.plans.push_back(std::string(plan0.order()) + " " + std::string(plan0.kernels()));
  c.contenders.push_back({"hand", [=] {  // one pass, rows over the OpenMP threads
    const double* dv = d->view().data();
    const double* wv = w->view().data();
    double* rv = r_hand->view().data();
#pragma omp parallel for
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) rv[i * n + j] = dv[i] * wv[i * n + j] * dv[j];
  }, [=] { return values(*r_hand); }});
  c.contenders.push_back({"ordo", [=] {
    ordo::evaluate(ordo::plan_structured_chain(std::span<const std::size_t>(dims), std::span<const chain_operand>(ops)),
                   *r_ordo, *d, *w, *d);
  }, [=] { return values(*r_ordo); }});
  c.contenders.push_back({"eigen", [=] {
    const Eigen::Map<const Eigen::VectorXd> D(d->view().data(), static_cast<long>(n));
    const eigen_const_map W(w->view().data(), static_cast<long>(n), static_cast<long>(n));
    r_eigen->noalias() = D.asDiagonal() * W * D.asDiagonal();
  }, [=] { return std::vector<double>(r_eigen->data(), r_eigen->data() + n * n); }});
  c.contenders.push_back({"armadillo", [=] { *r_arma = arma::diagmat(*da) * *wa * arma::diagmat(*da); },
                          [=] { const arma::mat rows = r_arma->t(); return std::vector<double>(rows.begin(), rows.end()); }});
  return c;
}

// --- triangles: r = L1 L2 L3 x ---
bench_case triangular_chain(double scale) {
  const std::size_t n = scaled(scale, 3000);
  auto l1 = std::make_shared<host_matrix>(make(10, n, n, "lower")), l2 = std::make_shared<host_matrix>(make(11, n, n, "lower")),
       l3 = std::make_shared<host_matrix>(make(12, n, n, "lower")), x = std::make_shared<host_matrix>(make(13, n, 1));
  auto r_hand = std::make_shared<host_matrix>(n, 1), r_ordo = std::make_shared<host_matrix>(n, 1);
  auto r_eigen = std::make_shared<Eigen::VectorXd>(n);
  auto a1 = std::make_shared<arma::mat>(to_arma(*l1)), a2 = std::make_shared<arma::mat>(to_arma(*l2)),
       a3 = std::make_shared<arma::mat>(to_arma(*l3)), xa = std::make_shared<arma::mat>(to_arma(*x));
  auto r_arma = std::make_shared<arma::mat>();
  const std::array<std::size_t, 5> dims{n, n, n, n, 1};
  const std::array<chain_operand, 4> ops{lower, lower, lower, general};
  bench_case c{"triangles", {}, {}};
  const auto plan0 = ordo::plan_structured_chain(std::span<const std::size_t>(dims), std::span<const chain_operand>(ops));
  c.plans.push_back(std::string(plan0.order()) + " " + std::string(plan0.kernels()));
  c.contenders.push_back({"hand", [=] {  // row-major L is column-major L^T (upper): TRMV with 'T'
    const int ni = static_cast<int>(n), inc = 1;
    std::memcpy(r_hand->view().data(), x->view().data(), n * sizeof(double));
    for (const auto* l : {l3.get(), l2.get(), l1.get()}) dtrmv_("U", "T", "N", &ni, l->view().data(), &ni, r_hand->view().data(), &inc);
  }, [=] { return values(*r_hand); }});
  c.contenders.push_back({"ordo", [=] {
    ordo::evaluate(ordo::plan_structured_chain(std::span<const std::size_t>(dims), std::span<const chain_operand>(ops)),
                   *r_ordo, *l1, *l2, *l3, *x);
  }, [=] { return values(*r_ordo); }});
  c.contenders.push_back({"eigen", [=] {
    const eigen_const_map L1(l1->view().data(), static_cast<long>(n), static_cast<long>(n));
    const eigen_const_map L2(l2->view().data(), static_cast<long>(n), static_cast<long>(n));
    const eigen_const_map L3(l3->view().data(), static_cast<long>(n), static_cast<long>(n));
    const Eigen::Map<const Eigen::VectorXd> X(x->view().data(), static_cast<long>(n));
    r_eigen->noalias() = L1.triangularView<Eigen::Lower>() *
                         (L2.triangularView<Eigen::Lower>() * (L3.triangularView<Eigen::Lower>() * X)).eval();
  }, [=] { return std::vector<double>(r_eigen->data(), r_eigen->data() + n); }});
  c.contenders.push_back({"armadillo", [=] { *r_arma = arma::trimatl(*a1) * arma::trimatl(*a2) * arma::trimatl(*a3) * *xa; },
                          [=] { return std::vector<double>(r_arma->begin(), r_arma->end()); }});
  return c;
}

// --- model: U^-1 L A, where the fewest flops is not the fastest plan (docs/structured_chains.md) ---
bench_case cost_models(double scale) {
  const std::size_t n = scaled(scale, 100), k = scaled(scale, 3000);
  auto u = std::make_shared<host_matrix>(make(14, n, n, "lower")), l = std::make_shared<host_matrix>(make(15, n, n, "lower")),
       a = std::make_shared<host_matrix>(make(16, n, k));
  // U^-1 as stored: the transpose of a lower triangle, unit diagonal (the stored 2s are not read).
  auto r_hand = std::make_shared<host_matrix>(n, k), r_time = std::make_shared<host_matrix>(n, k),
       r_flops = std::make_shared<host_matrix>(n, k);
  const std::array<std::size_t, 4> dims{n, n, n, k};
  const std::array<chain_operand, 3> ops{unit_lower.transpose().inverse(), unit_lower, general};
  const auto by_time = [=] { return ordo::plan_structured_chain(std::span<const std::size_t>(dims), std::span<const chain_operand>(ops)); };
  const auto by_flops = [=] {
    return ordo::plan_structured_chain(std::span<const std::size_t>(dims), std::span<const chain_operand>(ops), ordo::cost_model::flops{});
  };
  bench_case c{"model", {}, {}};
  for (const auto& p : {by_time(), by_flops()}) c.plans.push_back(std::string(p.order()) + " " + std::string(p.kernels()));
  c.contenders.push_back({"hand", [=] {
    // The flop-optimal U^-1 (L A) by hand: row-major R = column-major R^T = A^T L^T U^-T; row-major
    // L is column-major L^T (upper), row-major U-as-stored (lower, its transpose is U) likewise.
    const int ni = static_cast<int>(n), ki = static_cast<int>(k);
    const double one = 1;
    std::memcpy(r_hand->view().data(), a->view().data(), n * k * sizeof(double));
    lapack::trmm("R", "U", "N", "U", &ki, &ni, &one, l->view().data(), &ni, r_hand->view().data(), &ki);
    lapack::trsm("R", "U", "T", "U", &ki, &ni, &one, u->view().data(), &ni, r_hand->view().data(), &ki);
  }, [=] { return values(*r_hand); }});
  c.contenders.push_back({"ordo", [=] { ordo::evaluate(by_time(), *r_time, *u, *l, *a); }, [=] { return values(*r_time); }});
  c.contenders.push_back({"ordo_flops", [=] { ordo::evaluate(by_flops(), *r_flops, *u, *l, *a); }, [=] { return values(*r_flops); }});
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  double scale = 1.0, block_seconds = 0.5;
  int min_reps = 3, rounds = 3;
  std::string only;
  ordo_bench::for_each_option(argc, argv, [&](std::string_view name, const std::string& value) {
    if (name == "--scale") scale = std::stod(value);
    else if (name == "--block-seconds") block_seconds = std::stod(value);
    else if (name == "--min-reps") min_reps = std::stoi(value);
    else if (name == "--rounds") rounds = std::stoi(value);
    else if (name == "--cases") only = value;
    else throw std::invalid_argument("unknown option " + std::string(name));
  });
  std::printf("{\"openblas_threads\": %d, \"eigen_threads\": %d, \"armadillo\": \"%s\"}\n", openblas_get_num_threads(),
              Eigen::nbThreads(), arma::arma_version::as_string().c_str());
  for (auto make_case : {least_squares, generalized_least_squares, whitening, diagonal_scaling, triangular_chain, cost_models}) {
    bench_case c = make_case(scale);
    if (!only.empty() && only.find(c.name) == std::string::npos) continue;
    std::vector<ordo_bench::timed_item> items;
    for (const auto& k : c.contenders) items.push_back({k.name, k.run, {}});
    ordo_bench::time_rounds(items, {std::max(min_reps, rounds), 100000, block_seconds * static_cast<double>(items.size())}, 1, true);
    const std::vector<double> reference = c.contenders.front().result();
    double checksum = 0, magnitude = 0;
    for (const double v : reference) checksum += v, magnitude += std::fabs(v);
    std::printf("{\"case\": \"%s\", \"plans\": [", c.name.c_str());
    for (std::size_t p = 0; p < c.plans.size(); ++p) std::printf("%s\"%s\"", p ? ", " : "", c.plans[p].c_str());
    std::printf("], \"checksum\": %.17g, \"magnitude\": %.17g, \"elements\": %zu}\n", checksum, magnitude, reference.size());
    for (std::size_t k = 0; k < items.size(); ++k) {
      const std::vector<double> mine = c.contenders[k].result();
      std::printf("{\"case\": \"%s\", \"contender\": \"%s\", \"difference\": %.3g, \"samples\": [", c.name.c_str(),
                  items[k].name.c_str(), relative_difference(mine.data(), reference.data(), reference.size()));
      for (std::size_t s = 0; s < items[k].samples.size(); ++s) std::printf("%s%.9g", s ? ", " : "", items[k].samples[s]);
      std::printf("]}\n");
    }
    std::fflush(stdout);
  }
  return 0;
}
