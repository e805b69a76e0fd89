// ordo::evaluate(structured plan, result, operands...) (kernels/evaluate_structured.hpp): random
// structured chains against a long double reference built from explicit matrices and explicit
// inverses (Gauss-Jordan), on both backends (the host's BLAS/LAPACK, ordo's portable kernels on
// every enabled space, 16-bit storage), and the errors for singular or non-SPD operands and wrong
// shapes. Built into multiply_test (one executable).
#include <ordo/kernels/cholesky.hpp>
#include <ordo/kernels/evaluate_structured.hpp>
#include <ordo/kernels/structured_expression.hpp>
#include <ordo/kernels/transpose.hpp>

#include "support/execution_spaces.hpp"
#include "support/host_views.hpp"
#include "support/long_double_matrix.hpp"


#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace {

using ordo::chain_operand;
using ordo::matrix_kind;
using namespace ordo::operands;

using ordo_test::absolute;
using ordo_test::inverse;
using ordo_test::long_matrix;
using ordo_test::product;
using ordo_test::transposed;
using ordo_test::zeros;

// A stored matrix of a kind, well conditioned (kappa of order 10 at most), and what it means as a
// matrix: a triangular one holds noise outside its triangle (and on a unit diagonal), which the
// kernels must not read; a diagonal one is its n x 1 diagonal.
struct stored_operand {
  long_matrix stored;   // as passed to ordo::evaluate
  long_matrix meaning;  // the square or rectangular matrix it stands for, before transpose/inverse
};

stored_operand make_operand(matrix_kind kind, std::size_t rows, std::size_t cols, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  stored_operand s;
  s.stored = zeros(rows, cols);
  for (auto& row : s.stored)
    for (auto& e : row) e = u(rng);
  const std::size_t n = rows;
  switch (kind) {
    case matrix_kind::general:
      if (rows == cols)
        for (std::size_t i = 0; i < n; ++i) s.stored[i][i] += static_cast<long double>(n) + 2;
      break;
    case matrix_kind::symmetric:
    case matrix_kind::spd:
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < i; ++j) s.stored[j][i] = s.stored[i][j];
        const long double d = static_cast<long double>(n) + 2;
        s.stored[i][i] = kind == matrix_kind::spd || i % 2 == 0 ? d : -d;
      }
      break;
    case matrix_kind::lower:
    case matrix_kind::upper:
    case matrix_kind::unit_lower:
    case matrix_kind::unit_upper:
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) s.stored[i][j] /= static_cast<long double>(n);
        s.stored[i][i] = 2 + u(rng) * 0.5;
      }
      break;
    case matrix_kind::diagonal: {
      s.stored = zeros(n, 1);
      s.meaning = zeros(n, n);
      for (std::size_t i = 0; i < n; ++i) {
        s.stored[i][0] = (u(rng) < 0 ? -1 : 1) * (1 + std::fabs(u(rng)));
        s.meaning[i][i] = s.stored[i][0];
      }
      return s;
    }
    case matrix_kind::orthogonal: {  // a Householder reflection I - 2 v v^T / v^T v, rounded to double
      std::vector<long double> v(n);
      long double norm = 0;
      for (auto& e : v) e = u(rng), norm += e * e;
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
          s.stored[i][j] = static_cast<double>((i == j ? 1 : 0) - 2 * v[i] * v[j] / norm);
      break;
    }
  }
  s.meaning = s.stored;
  if (ordo::is_triangular(kind)) {
    const bool lower_kind = ordo::is_lower_family(kind);
    const bool unit = kind == matrix_kind::unit_lower || kind == matrix_kind::unit_upper;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        if (lower_kind ? j > i : j < i) s.meaning[i][j] = 0;
        if (unit && i == j) s.meaning[i][j] = 1;
      }
  }
  return s;
}

template <class T, class ExecutionSpace>
using dynamic_matrix = ordo::matrix<T, ordo::dynamic, ordo::dynamic, ExecutionSpace>;

// values rounded to T, in ExecutionSpace's memory.
template <class T, class ExecutionSpace>
dynamic_matrix<T, ExecutionSpace> to_matrix(const long_matrix& values, std::size_t rows, std::size_t cols) {
  dynamic_matrix<T, ExecutionSpace> m(rows, cols);
  auto host = Kokkos::create_mirror_view(m.view());
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) host(i, j) = static_cast<T>(static_cast<double>(values[i][j]));
  Kokkos::deep_copy(m.view(), host);
  return m;
}

struct structured_case {
  std::vector<std::size_t> dims;
  std::vector<chain_operand> operands;
  std::vector<stored_operand> stored;  // per operand (a SYRK pair's two share one)
};

structured_case make_case(std::mt19937_64& rng) {
  std::uniform_int_distribution<std::size_t> length(2, 7), pick(0, 6), kind_pick(0, 8), coin(0, 3);
  constexpr std::size_t extents[7] = {1, 2, 3, 5, 8, 13, 24};
  constexpr matrix_kind kinds[9] = {matrix_kind::general,    matrix_kind::symmetric,  matrix_kind::spd,
                                    matrix_kind::lower,      matrix_kind::upper,      matrix_kind::unit_lower,
                                    matrix_kind::unit_upper, matrix_kind::diagonal,   matrix_kind::orthogonal};
  structured_case c;
  const std::size_t n = length(rng);
  c.dims.push_back(extents[pick(rng)]);
  std::uint32_t source = 1;
  while (c.operands.size() < n) {
    const std::size_t rows = c.dims.back();
    if (c.operands.size() + 2 <= n && coin(rng) == 0) {  // X^T X or X X^T of one stored X
      const std::size_t inner = extents[pick(rng)];
      const bool transposed_first = coin(rng) < 2;
      chain_operand first = general.from(source), second = general.from(source);
      first.transposed = transposed_first, second.transposed = !transposed_first;
      ++source;
      // The stored X: inner x rows when X^T comes first (X^T is rows x inner), else rows x inner.
      const stored_operand x = transposed_first ? make_operand(matrix_kind::general, inner, rows, rng)
                                                : make_operand(matrix_kind::general, rows, inner, rng);
      c.operands.push_back(first), c.operands.push_back(second);
      c.stored.push_back(x), c.stored.push_back(x);
      c.dims.push_back(inner), c.dims.push_back(rows);
      continue;
    }
    chain_operand op;
    op.kind = coin(rng) == 0 ? matrix_kind::general : kinds[kind_pick(rng)];
    op.transposed = coin(rng) == 0;
    op.inverted = coin(rng) == 0;
    const bool square = op.kind != matrix_kind::general || op.inverted;
    const std::size_t cols = square ? rows : extents[pick(rng)];
    c.operands.push_back(op);
    c.stored.push_back(op.transposed ? make_operand(op.kind, cols, rows, rng) : make_operand(op.kind, rows, cols, rng));
    c.dims.push_back(cols);
  }
  return c;
}

// Evaluates one case with ordo and checks |ordo - reference| <= 100 (d0 + ... + dn) u (|A1'| ... |An'|)
// entrywise, Ai' the explicit operand (transposed, inverted): the bound of a product computed by
// backward-stable kernels, for operands of condition number near 1 (make_operand).
// With 16-bit storage (arithmetic in float, each operand and intermediate rounded once to T) the
// bound is 8 n u (|A1'| ... |An'|) for n operands instead.
// Returns false, checking nothing, for a half chain whose values leave half's range (the random
// products of up to 7 matrices of order 24 reach 10^8; half ends at 65504).
template <class T, class ExecutionSpace, class Plan>
bool evaluate_and_check(const Plan& plan, const structured_case& c, ordo::gemm_backend backend) {
  const std::size_t n = c.operands.size();
  long_matrix reference, magnitude;
  for (std::size_t i = 0; i < n; ++i) {
    long_matrix a = c.stored[i].meaning;
    if (c.operands[i].transposed) a = transposed(a);
    if (c.operands[i].inverted) a = inverse(a);
    reference = i == 0 ? a : product(reference, a);
    magnitude = i == 0 ? absolute(a) : product(magnitude, absolute(a));
    if constexpr (std::is_same_v<T, ordo::half>) {
      for (const auto& row : magnitude)
        for (const long double e : row)
          if (e > 1000) return false;
    }
  }
  std::vector<dynamic_matrix<T, ExecutionSpace>> stored;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& s = c.stored[i].stored;
    stored.push_back(to_matrix<T, ExecutionSpace>(s, s.size(), s.empty() ? 0 : s[0].size()));
  }
  // A SYRK pair passes one matrix twice, as a user does.
  for (std::size_t i = 1; i < n; ++i) {
    if (c.operands[i].source != 0 && c.operands[i].source == c.operands[i - 1].source) stored[i] = stored[i - 1];
  }
  dynamic_matrix<T, ExecutionSpace> result(c.dims.front(), c.dims.back());
  // The operands as a range: one instantiation for every length (the variadic form is checked
  // in the cases below).
  ordo::evaluate(backend, plan, result, stored);
  const auto values = ordo_test::download(result.view());
  std::size_t dim_sum = 0;
  for (const std::size_t d : c.dims) dim_sum += d;
  constexpr bool storage16 = sizeof(T) == 2;
  const long double u = static_cast<long double>(static_cast<float>(std::numeric_limits<T>::epsilon())) / 2;
  const long double factor = storage16 ? 8 * static_cast<long double>(n) : 100 * static_cast<long double>(dim_sum);
  for (std::size_t i = 0; i < result.rows(); ++i) {
    for (std::size_t j = 0; j < result.cols(); ++j) {
      const long double error = std::fabs(static_cast<long double>(static_cast<double>(values(i, j))) - reference[i][j]);
      const long double bound = factor * u * (magnitude[i][j] + 1e-30L);
      if (!(error <= bound)) {
        CAPTURE(ordo::to_string(backend));
        CAPTURE(plan.order());
        CAPTURE(plan.kernels());
        CAPTURE(i);
        CAPTURE(j);
        CHECK(static_cast<double>(error) <= static_cast<double>(bound));
        return true;
      }
    }
  }
  return true;
}

// Plans one case (flops or predicted time, explicit inverses allowed a quarter of the time) and
// checks its evaluation; false when the planner refuses it (two adjacent inverses, forbidden) or
// the values do not fit the storage type.
template <class T, class ExecutionSpace>
bool check_case(const structured_case& c, int trial, ordo::gemm_backend backend) {
  const auto policy = trial % 4 == 0 ? ordo::inverse_policy::allow_explicit : ordo::inverse_policy::solve_only;
  const auto dims = std::span<const std::size_t>(c.dims);
  const auto ops = std::span<const chain_operand>(c.operands);
  try {
    const auto plan = trial % 2 == 0 ? ordo::plan_structured_chain(dims, ops, ordo::cost_model::flops{}, policy)
                                     : ordo::plan_structured_chain(dims, ops, ordo::cost_model::predicted_time{}, policy);
    return evaluate_and_check<T, ExecutionSpace>(plan, c, backend);
  } catch (const ordo::chain_argument_error&) {
    return false;
  }
}

template <class T, class ExecutionSpace>
int check_random_cases(std::mt19937_64& rng, int count, ordo::gemm_backend backend = ordo::gemm_backend::automatic) {
  int evaluated = 0;
  for (int trial = 0; trial < count; ++trial) {
    const structured_case c = make_case(rng);
    CAPTURE(trial);
    const bool done = check_case<T, ExecutionSpace>(c, trial, backend);
    evaluated += done ? 1 : 0;
  }
  return evaluated;
}

}  // namespace

// The host BLAS/LAPACK backend, on the default host space (the space only runs its scalings).
TEST_CASE("structured chains of 2 to 7 operands evaluate within their bound of a long double reference") {
  using ExecutionSpace = Kokkos::DefaultHostExecutionSpace;
  std::mt19937_64 rng(3101);
  const int evaluated = check_random_cases<double, ExecutionSpace>(rng, 2000) +
                        check_random_cases<float, ExecutionSpace>(rng, 1000);
  CHECK(evaluated > 2500);  // of 3000: the planner refuses some chains with two adjacent inverses
}

// The portable kernels on every enabled space, double (float shares their code), and 16-bit
// storage on the default space: what runs on a GPU, and what no BLAS serves.
TEST_CASE_TEMPLATE_DEFINE("portable structured kernels: chains of 2 to 7 operands within their bound", ExecutionSpace,
                          portable_chains_id) {
  std::mt19937_64 rng(3102);
  const int evaluated = check_random_cases<double, ExecutionSpace>(rng, 600, ordo::gemm_backend::portable);
  CHECK(evaluated > 500);
  // The normal equations written with * on this space: automatic picks the portable kernels where
  // the matrices are not in host memory.
  const stored_operand x = make_operand(matrix_kind::general, 12, 5, rng), y = make_operand(matrix_kind::general, 12, 1, rng);
  const auto xm = to_matrix<double, ExecutionSpace>(x.stored, 12, 5), ym = to_matrix<double, ExecutionSpace>(y.stored, 12, 1);
  const dynamic_matrix<double, ExecutionSpace> beta(5, 1);
  ordo::evaluate(ExecutionSpace(), ordo::inverse(ordo::spd(ordo::gram(xm))) * ordo::transpose(xm) * ym, beta);
  const auto beta_values = ordo_test::download(beta.view());
  const long_matrix xt = transposed(x.stored);
  const long_matrix normal = product(inverse(product(xt, x.stored)), product(xt, y.stored));
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(std::fabs(static_cast<long double>(beta_values(i, 0)) - normal[i][0]) <= 1e-12L * (1 + std::fabs(normal[i][0])));
  }
  if constexpr (std::is_same_v<ExecutionSpace, Kokkos::DefaultExecutionSpace>) {
    const int sixteen = check_random_cases<ordo::half, ExecutionSpace>(rng, 150) +
                        check_random_cases<ordo::bfloat16, ExecutionSpace>(rng, 150);
    CHECK(sixteen > 250);
  }
}
ORDO_TEST_ALL_SPACES(portable_chains_id);

TEST_CASE_TEMPLATE_DEFINE("portable structured kernels: LU pivots; singular and non-SPD operands are reported, naming them",
                          ExecutionSpace, portable_errors_id) {
  using M = dynamic_matrix<double, ExecutionSpace>;
  const std::vector<std::size_t> dims{3, 3, 2};
  const auto plan_of = [&](std::vector<chain_operand> ops) {
    return ordo::plan_structured_chain(std::span<const std::size_t>(dims), std::span<const chain_operand>(ops),
                                       ordo::cost_model::flops{});
  };
  constexpr auto portable = ordo::gemm_backend::portable;
  // [[1, 2, 0], [2, 1, 0], [0, 0, 1]]: symmetric, eigenvalues 3, -1, 1: not SPD, nonsingular.
  long_matrix values = zeros(3, 3);
  values[0][0] = 1, values[0][1] = 2, values[1][0] = 2, values[1][1] = 1, values[2][2] = 1;
  const M b = to_matrix<double, ExecutionSpace>(long_matrix(3, std::vector<long double>(2, 1)), 3, 2);
  M x(3, 2), a = to_matrix<double, ExecutionSpace>(values, 3, 3);
  CHECK_THROWS_WITH_AS(ordo::evaluate(portable, plan_of({spd.inverse(), general}), x, a, b),
                       "ordo::evaluate(structured chain): A1 (spd, 3x3) is not positive definite (Cholesky: pivot 2 "
                       "is not positive)",
                       std::runtime_error);
  // The symmetric indefinite solve (LU on this path) is exact here: x = A^-1 [1 1 1]^T = [1/3 1/3 1].
  ordo::evaluate(portable, plan_of({symmetric.inverse(), general}), x, a, b);
  const auto xh = ordo_test::download(x.view());
  CHECK(xh(0, 0) == doctest::Approx(1.0 / 3).epsilon(1e-15));
  CHECK(xh(2, 1) == 1.0);
  // LU must pivot: a(0, 0) = 0. [[0, 2, 0], [1, 0, 0], [0, 0, 4]]^-1 [1 1 1]^T = [1 1/2 1/4]^T exactly.
  long_matrix permuted = zeros(3, 3);
  permuted[0][1] = 2, permuted[1][0] = 1, permuted[2][2] = 4;
  ordo::evaluate(portable, plan_of({general.inverse(), general}), x, to_matrix<double, ExecutionSpace>(permuted, 3, 3), b);
  const auto pivoted = ordo_test::download(x.view());
  CHECK(pivoted(0, 0) == 1.0);
  CHECK(pivoted(1, 1) == 0.5);
  CHECK(pivoted(2, 0) == 0.25);
  values[2][2] = 0;  // singular
  a = to_matrix<double, ExecutionSpace>(values, 3, 3);
  CHECK_THROWS_WITH_AS(ordo::evaluate(portable, plan_of({general.inverse(), general}), x, a, b),
                       "ordo::evaluate(structured chain): A1 (general, 3x3) is singular (LU: no nonzero pivot for "
                       "column 3)",
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(ordo::evaluate(portable, plan_of({lower.inverse(), general}), x, a, b),
                       "ordo::evaluate(structured chain): A1 (lower, 3x3) is singular: a zero on its diagonal at 3",
                       std::runtime_error);
  long_matrix diagonal_values = zeros(3, 1);
  diagonal_values[0][0] = 1, diagonal_values[2][0] = 2;
  const M d = to_matrix<double, ExecutionSpace>(diagonal_values, 3, 1);
  CHECK_THROWS_WITH_AS(ordo::evaluate(portable, plan_of({diagonal.inverse(), general}), x, d, b),
                       "ordo::evaluate(structured chain): A1 (diagonal, 3x3) is singular: its diagonal entry 2 is 0",
                       std::runtime_error);
  // A forced backend that cannot serve the call says why.
  CHECK_THROWS_WITH_AS(ordo::evaluate(ordo::gemm_backend::cublas, plan_of({general, general}), x, a, b),
                       "ordo::evaluate(structured plan, result, operands...): the cublas backend does not serve "
                       "structured chains (ordo does not call cuBLAS or cuSOLVER for them yet); use automatic or portable",
                       std::invalid_argument);
  using H = dynamic_matrix<ordo::half, ExecutionSpace>;
  H ah(3, 3), bh(3, 2), xh16(3, 2);
  CHECK_THROWS_WITH_AS(ordo::evaluate(ordo::gemm_backend::blas, plan_of({general, general}), xh16, ah, bh),
                       doctest::Contains("the blas backend needs a build with LAPACK, float or double matrices, and "
                                         "host-accessible memory (this call has ordo::half in "),
                       std::invalid_argument);
}
ORDO_TEST_ALL_SPACES(portable_errors_id);

// cholesky_factor where LAPACK does not serve (here: half storage): S = L L^T for L with small
// integer entries, every step exact in float, so L comes back exactly.
TEST_CASE_TEMPLATE_DEFINE("portable cholesky_factor: an exact factor, and a matrix that is not SPD", ExecutionSpace,
                          portable_cholesky_id) {
  using M = dynamic_matrix<ordo::half, ExecutionSpace>;
  const long_matrix l_exact{{2, 0, 0}, {1, 3, 0}, {2, 1, 4}};
  const M s = to_matrix<ordo::half, ExecutionSpace>(product(l_exact, transposed(l_exact)), 3, 3);
  const auto l = ordo_test::download(ordo::cholesky_factor(s).view());
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) CHECK(static_cast<float>(l(i, j)) == static_cast<float>(l_exact[i][j]));
  const M indefinite = to_matrix<ordo::half, ExecutionSpace>(long_matrix{{1, 2}, {2, 1}}, 2, 2);
  CHECK_THROWS_WITH_AS(static_cast<void>(ordo::cholesky_factor(indefinite)),
                       "ordo::cholesky_factor(S): S (2x2) is not positive definite (Cholesky: pivot 2 is not positive)",
                       std::runtime_error);
}
ORDO_TEST_ALL_SPACES(portable_cholesky_id);

#if defined(ORDO_HAS_LAPACK)
// LAPACK's messages (its info codes); the portable kernels' are checked below.
TEST_CASE("structured chains: singular and non-SPD operands and wrong shapes are reported, naming the operand") {
  using M = dynamic_matrix<double, Kokkos::DefaultHostExecutionSpace>;
  const std::vector<std::size_t> dims{3, 3, 2};
  const auto plan_of = [&](std::vector<chain_operand> ops) {
    return ordo::plan_structured_chain(std::span<const std::size_t>(dims), std::span<const chain_operand>(ops),
                                       ordo::cost_model::flops{});
  };
  M a(3, 3), b(3, 2), x(3, 2);
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 2; ++j) b.view()(i, j) = 1;
  // [[1, 2, 0], [2, 1, 0], [0, 0, 1]] is symmetric with eigenvalues 3, -1, 1: not SPD, nonsingular.
  a.view()(0, 0) = 1, a.view()(0, 1) = 2, a.view()(1, 0) = 2, a.view()(1, 1) = 1, a.view()(2, 2) = 1;
  CHECK_THROWS_WITH_AS(ordo::evaluate(plan_of({spd.inverse(), general}), x, a, b),
                       "ordo::evaluate(structured chain): A1 (spd, 3x3) is not positive definite (POTRF info 2)",
                       std::runtime_error);
  CHECK_NOTHROW(ordo::evaluate(plan_of({symmetric.inverse(), general}), x, a, b));
  a.view()(2, 2) = 0;  // singular
  CHECK_THROWS_WITH_AS(ordo::evaluate(plan_of({general.inverse(), general}), x, a, b),
                       "ordo::evaluate(structured chain): A1 (general, 3x3) is singular (GETRF info 3)", std::runtime_error);
  CHECK_THROWS_WITH_AS(ordo::evaluate(plan_of({lower.inverse(), general}), x, a, b),
                       "ordo::evaluate(structured chain): A1 (lower, 3x3) is singular: a zero on its diagonal at 3",
                       std::runtime_error);
  M d(3, 1);
  d.view()(0, 0) = 1, d.view()(1, 0) = 0, d.view()(2, 0) = 2;
  CHECK_THROWS_WITH_AS(ordo::evaluate(plan_of({diagonal.inverse(), general}), x, d, b),
                       "ordo::evaluate(structured chain): A1 (diagonal, 3x3) is singular: its diagonal entry 2 is 0",
                       std::runtime_error);
  // Shapes: the stored operand, the result, the count.
  CHECK_THROWS_WITH_AS(ordo::evaluate(plan_of({diagonal, general}), x, a, b),
                       "ordo::evaluate(structured plan, result, operands...): A1 is 3x3 but the plan reads a stored 3x1 "
                       "(diagonal)",
                       std::invalid_argument);
  M wrong(2, 3);
  CHECK_THROWS_WITH_AS(ordo::evaluate(plan_of({general, general}), wrong, a, b),
                       "ordo::evaluate(structured plan, result, operands...): the chain's result is 3x2 but the result "
                       "matrix is 2x3",
                       std::invalid_argument);
  CHECK_THROWS_AS(ordo::evaluate(plan_of({general, general}), x, a), std::invalid_argument);
  // The result may be an operand: computed aside, then copied.
  M square(3, 3), identity(3, 3);
  for (std::size_t i = 0; i < 3; ++i) {
    identity.view()(i, i) = 1;
    for (std::size_t j = 0; j < 3; ++j) square.view()(i, j) = static_cast<double>(i + 2 * j);
  }
  const std::vector<std::size_t> square_dims{3, 3, 3};
  const std::vector<chain_operand> plain{general, general};
  const auto square_plan = ordo::plan_structured_chain(std::span<const std::size_t>(square_dims),
                                                       std::span<const chain_operand>(plain));
  ordo::evaluate(square_plan, square, identity, square);
  CHECK(square.view()(2, 1) == 4.0);
}

// ordo::factorization_cache (kernels/factorization_cache.hpp): GLS's two chains factor M once; a
// chain that solves against M from both sides factors it once; M changed in place is factored
// anew. Oracles: the long double reference of each formula, and the same chains evaluated
// without a cache (the same LAPACK calls on the same data: the same bits).
TEST_CASE("a factorization_cache factors an operand once for the chains and solves that share it") {
  using M = dynamic_matrix<double, Kokkos::DefaultHostExecutionSpace>;
  std::mt19937_64 rng(78);
  const std::size_t m = 9, p = 4;
  stored_operand spd_m = make_operand(matrix_kind::spd, m, m, rng);
  const stored_operand x = make_operand(matrix_kind::general, m, p, rng), y = make_operand(matrix_kind::general, m, 1, rng),
                       a = make_operand(matrix_kind::general, m, m, rng);
  const M mm = to_matrix<double, Kokkos::DefaultHostExecutionSpace>(spd_m.stored, m, m);
  const M xm = to_matrix<double, Kokkos::DefaultHostExecutionSpace>(x.stored, m, p);
  const M ym = to_matrix<double, Kokkos::DefaultHostExecutionSpace>(y.stored, m, 1);
  const M am = to_matrix<double, Kokkos::DefaultHostExecutionSpace>(a.stored, m, m);
  const auto plan = [](std::vector<std::size_t> dims, std::vector<chain_operand> ops) {
    return ordo::plan_structured_chain(std::span<const std::size_t>(dims), std::span<const chain_operand>(ops));
  };
  const auto close_to = [](const M& value, const long_matrix& reference) {
    bool close = true;
    for (std::size_t i = 0; i < value.rows(); ++i) {
      for (std::size_t j = 0; j < value.cols(); ++j) {
        close = close && std::fabs(static_cast<long double>(value.view()(i, j)) - reference[i][j]) <=
                             1e-13L * (1 + std::fabs(reference[i][j]));
      }
    }
    return close;
  };
  const auto same_bits = [](const M& u, const M& v) {
    bool same = u.rows() == v.rows() && u.cols() == v.cols();
    for (std::size_t i = 0; same && i < u.rows(); ++i) {
      for (std::size_t j = 0; j < u.cols(); ++j) same = same && u.view()(i, j) == v.view()(i, j);
    }
    return same;
  };
  const auto xmx = plan({p, m, m, p}, {general.transpose(), spd.inverse(), general});
  const auto xmy = plan({p, m, m, 1}, {general.transpose(), spd.inverse(), general});
  M s1(p, p), t1(p, 1), s2(p, p), t2(p, 1);
  ordo::evaluate(xmx, s1, xm, mm, xm);
  ordo::evaluate(xmy, t1, xm, mm, ym);
  ordo::factorization_cache cache;
  ordo::evaluate(cache, xmx, s2, xm, mm, xm);
  ordo::evaluate(cache, xmy, t2, xm, mm, ym);
  CHECK(cache.factorizations() == 1);
  CHECK(cache.reuses() == 1);
  CHECK(same_bits(s1, s2));
  CHECK(same_bits(t1, t2));
  const long_matrix xt_mi = product(transposed(x.stored), inverse(spd_m.stored));
  CHECK(close_to(s2, product(xt_mi, x.stored)));
  CHECK(close_to(t2, product(xt_mi, y.stored)));

  // M^-1 A M^-1: solved from the left and from the right, one factorization (M is symmetric in
  // memory, so its transpose hashes the same).
  cache.clear();
  M r(m, m);
  ordo::evaluate(cache, plan({m, m, m, m}, {spd.inverse(), general, spd.inverse()}), r, mm, am, mm);
  CHECK(cache.factorizations() == 1);
  CHECK(cache.reuses() == 1);
  const long_matrix mi = inverse(spd_m.stored);
  CHECK(close_to(r, product(product(mi, a.stored), mi)));

  // An unsymmetric A: A^-1 B A^-T solves with A from both sides (X A^-T = (A^-1 X^T)^T), one
  // factorization; A^-1 B A^-1 needs A's and A^T's, two.
  const stored_operand b = make_operand(matrix_kind::general, m, m, rng);
  const M bm = to_matrix<double, Kokkos::DefaultHostExecutionSpace>(b.stored, m, m);
  const long_matrix ai = inverse(a.stored);
  cache.clear();
  ordo::evaluate(cache, plan({m, m, m, m}, {general.inverse(), general, general.transpose().inverse()}), r, am, bm, am);
  CHECK(cache.factorizations() == 1);
  CHECK(cache.reuses() == 1);
  CHECK(close_to(r, product(product(ai, b.stored), transposed(ai))));
  cache.clear();
  ordo::evaluate(cache, plan({m, m, m, m}, {general.inverse(), general, general.inverse()}), r, am, bm, am);
  CHECK(cache.factorizations() == 2);
  CHECK(cache.reuses() == 0);
  CHECK(close_to(r, product(product(ai, b.stored), ai)));

  // M changed in place (the same memory): its old factor is not used.
  cache.clear();
  ordo::evaluate(cache, xmy, t2, xm, mm, ym);
  mm.view()(0, 0) += 1;
  spd_m.stored[0][0] += 1;
  ordo::evaluate(cache, xmy, t2, xm, mm, ym);
  CHECK(cache.factorizations() == 2);
  CHECK(cache.reuses() == 0);
  CHECK(close_to(t2, product(product(transposed(x.stored), inverse(spd_m.stored)), y.stored)));
}

#endif

TEST_CASE("cholesky_factor: S = L L^T, and generalized least squares through one factorization") {
  using M = dynamic_matrix<double, Kokkos::DefaultHostExecutionSpace>;
  M s(2, 2);
  s.view()(0, 0) = 4, s.view()(0, 1) = 2, s.view()(1, 0) = 2, s.view()(1, 1) = 3;
  const M l = ordo::cholesky_factor(s);  // [[2, 0], [1, sqrt(2)]]
  CHECK(l.view()(0, 0) == 2.0);
  CHECK(l.view()(0, 1) == 0.0);
  CHECK(l.view()(1, 0) == 1.0);
  CHECK(l.view()(1, 1) == doctest::Approx(std::sqrt(2.0)).epsilon(1e-15));
  s.view()(1, 1) = 1;  // 4 * 1 - 2 * 2 = 0: singular, not positive definite
  CHECK_THROWS_WITH_AS(static_cast<void>(ordo::cholesky_factor(s)),
                       "ordo::cholesky_factor(S): S (2x2) is not positive definite (POTRF info 2)", std::runtime_error);
  CHECK_THROWS_AS(static_cast<void>(ordo::cholesky_factor(M(2, 3))), std::invalid_argument);

  // GLS beta = (X^T M^-1 X)^-1 X^T M^-1 y with M = L L^T factored once: B = L^-1 X, c = L^-1 y,
  // beta = (B^T B)^-1 B^T c, against the long double reference of the formula as written.
  std::mt19937_64 rng(77);
  const std::size_t m = 9, p = 4;
  const stored_operand spd_m = make_operand(matrix_kind::spd, m, m, rng), x = make_operand(matrix_kind::general, m, p, rng),
                       y = make_operand(matrix_kind::general, m, 1, rng);
  const M mm = to_matrix<double, Kokkos::DefaultHostExecutionSpace>(spd_m.stored, m, m);
  const M xm = to_matrix<double, Kokkos::DefaultHostExecutionSpace>(x.stored, m, p);
  const M ym = to_matrix<double, Kokkos::DefaultHostExecutionSpace>(y.stored, m, 1);
  const M factor = ordo::cholesky_factor(mm);
  const auto plan = [](std::vector<std::size_t> dims, std::vector<chain_operand> ops) {
    return ordo::plan_structured_chain(std::span<const std::size_t>(dims), std::span<const chain_operand>(ops));
  };
  M b(m, p), c(m, 1), gram(p, p), beta(p, 1);
  ordo::evaluate(plan({m, m, p}, {lower.inverse(), general}), b, factor, xm);
  ordo::evaluate(plan({m, m, 1}, {lower.inverse(), general}), c, factor, ym);
  ordo::evaluate(plan({p, m, p}, {general.transpose().from(1), general.from(1)}), gram, b, b);
  ordo::evaluate(plan({p, p, m, 1}, {spd.inverse(), general.transpose(), general}), beta, gram, b, c);
  const long_matrix mi = inverse(spd_m.stored);
  const long_matrix xt_mi = product(transposed(x.stored), mi);
  const long_matrix reference = product(inverse(product(xt_mi, x.stored)), product(xt_mi, y.stored));
  for (std::size_t i = 0; i < p; ++i) {
    CHECK(std::fabs(static_cast<long double>(beta.view()(i, 0)) - reference[i][0]) <= 1e-13L * (1 + std::fabs(reference[i][0])));
  }
}

TEST_CASE("structured products: the normal equations and a whitening written with *, planned from the types") {
  using space = Kokkos::DefaultHostExecutionSpace;
  std::mt19937_64 rng(91);
  // 60 x 30: large enough that the predicted-time model prefers SYRK to GEMM (at 6 x 3 a call's
  // overhead decides, and GEMM's is smaller).
  const stored_operand x = make_operand(matrix_kind::general, 60, 30, rng), y = make_operand(matrix_kind::general, 60, 1, rng);
  ordo::matrix<double, 60, 30, space> xm;
  for (std::size_t i = 0; i < 60; ++i)
    for (std::size_t j = 0; j < 30; ++j) xm.view()(i, j) = static_cast<double>(x.stored[i][j]);
  ordo::matrix<double, 60, 1, space> ym;
  for (std::size_t i = 0; i < 60; ++i) ym.view()(i, 0) = static_cast<double>(y.stored[i][0]);

  // beta = (X^T X)^-1 X^T y: SYRK for the Gram matrix, then X^T y (GEMV) and a Cholesky solve.
  const auto e = ordo::inverse(ordo::spd(ordo::gram(xm))) * ordo::transpose(xm) * ym;
  static_assert(decltype(e)::kernels() == "syrk gemv posv");
  static_assert(decltype(e)::order() == "(A1(A2A3))");
  // The cost model is a template argument: under the flop count the same product plans alike here.
  static_assert(decltype(e)::kernels<ordo::cost_model::flops{}>() == "syrk gemv posv");
  const ordo::matrix<double, 30, 1, space> beta = e;
  const long_matrix xt = transposed(x.stored);
  const long_matrix reference = product(inverse(product(xt, x.stored)), product(xt, y.stored));
  for (std::size_t i = 0; i < 30; ++i) {
    CHECK(std::fabs(static_cast<long double>(beta.view()(i, 0)) - reference[i][0]) <= 1e-12L * (1 + std::fabs(reference[i][0])));
  }

  // L^-1 A L^-T with dynamic extents: planned at evaluation, two triangular solves.
  const stored_operand l = make_operand(matrix_kind::lower, 5, 5, rng), a = make_operand(matrix_kind::general, 5, 5, rng);
  const auto lm = to_matrix<double, space>(l.stored, 5, 5), am = to_matrix<double, space>(a.stored, 5, 5);
  const auto w = ordo::inverse(ordo::lower(lm)) * am * ordo::transpose(ordo::inverse(ordo::lower(lm)));
  CHECK(w.plan().kernels() == "trsm trsm");
  CHECK(w.plan<ordo::cost_model::multiplications{}>().kernels() == "trsm trsm");
  const dynamic_matrix<double, space> wm = w;
  const long_matrix li = inverse(l.meaning);
  const long_matrix wr = product(product(li, a.stored), transposed(li));
  for (std::size_t i = 0; i < 5; ++i)
    for (std::size_t j = 0; j < 5; ++j)
      CHECK(std::fabs(static_cast<long double>(wm.view()(i, j)) - wr[i][j]) <= 1e-13L * (1 + std::fabs(wr[i][j])));

  // Extents that do not conform: a dynamic mismatch throws, naming both shapes.
  const dynamic_matrix<double, space> b(4, 2);
  CHECK_THROWS_WITH_AS(static_cast<void>(ordo::lower(lm) * b),
                       "ordo: operator*: the left operand is 5x5 and the right operand is 4x2 (inner extents 5 != 4)",
                       std::invalid_argument);
}
