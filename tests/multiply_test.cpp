#include <ordo/core/float16.hpp>
#include <ordo/kernels/multiply.hpp>

#include "support/brute_force_chain.hpp"
#include "support/execution_spaces.hpp"
#include "support/kokkos_tools_recorder.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <ostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace {

// Host copies of matrices, through mirrors so the same test serves device spaces.
template <class M>
std::vector<typename M::value_type> to_host(const M& m) {
  auto mirror = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.view());
  std::vector<typename M::value_type> out(m.rows() * m.cols());
  for (std::size_t i = 0; i < m.rows(); ++i) {
    for (std::size_t j = 0; j < m.cols(); ++j) out[i * m.cols() + j] = mirror(i, j);
  }
  return out;
}

template <class M>
void fill(const M& m, const std::vector<typename M::value_type>& values) {
  auto mirror = Kokkos::create_mirror_view(m.view());
  for (std::size_t i = 0; i < m.rows(); ++i) {
    for (std::size_t j = 0; j < m.cols(); ++j) mirror(i, j) = values[i * m.cols() + j];
  }
  Kokkos::deep_copy(m.view(), mirror);
}

template <class T>
std::vector<T> random_values(std::size_t count, std::mt19937_64& rng) {
  std::vector<T> v(count);
  if constexpr (std::is_integral_v<T>) {
    std::uniform_int_distribution<int> d(-2, 2);
    for (auto& x : v) x = static_cast<T>(d(rng));
  } else {
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    for (auto& x : v) x = static_cast<T>(d(rng));
  }
  return v;
}

// Naive left-to-right reference: in long double for floating point, exactly for integers. Also
// returns |A1| |A2| ... |An|, the scale of the rounding error bound.
struct reference_product {
  std::vector<long double> value, magnitude;
  std::size_t rows = 0, cols = 0;
};

template <class T>
reference_product left_to_right(const std::vector<std::vector<T>>& ops, const std::vector<std::size_t>& dims) {
  reference_product r;
  r.rows = dims[0];
  r.cols = dims[1];
  r.value.assign(ops[0].begin(), ops[0].end());
  r.magnitude.resize(r.value.size());
  for (std::size_t i = 0; i < r.value.size(); ++i) r.magnitude[i] = std::fabs(r.value[i]);
  for (std::size_t p = 1; p < ops.size(); ++p) {
    const std::size_t k = dims[p], n = dims[p + 1];
    std::vector<long double> next(r.rows * n, 0.0L), next_magnitude(r.rows * n, 0.0L);
    for (std::size_t i = 0; i < r.rows; ++i) {
      for (std::size_t l = 0; l < k; ++l) {
        const long double a = r.value[i * k + l], am = r.magnitude[i * k + l];
        for (std::size_t j = 0; j < n; ++j) {
          next[i * n + j] += a * static_cast<long double>(ops[p][l * n + j]);
          next_magnitude[i * n + j] += am * std::fabs(static_cast<long double>(ops[p][l * n + j]));
        }
      }
    }
    r.value = std::move(next);
    r.magnitude = std::move(next_magnitude);
    r.cols = n;
  }
  return r;
}

// Integers: exact. Floating point: |computed - exact| <= 2 K u (|A1|...|An|) elementwise, K the sum
// of the inner dimensions (Higham, Accuracy and Stability, 3.5: gamma_K for a product chain).
template <class T>
bool within_bound(const std::vector<T>& computed, const reference_product& ref, const std::vector<std::size_t>& dims) {
  if (computed.size() != ref.value.size()) return false;
  long double inner = 0;
  for (std::size_t i = 1; i + 1 < dims.size(); ++i) inner += static_cast<long double>(dims[i]);
  for (std::size_t i = 0; i < computed.size(); ++i) {
    if constexpr (std::is_integral_v<T>) {
      if (static_cast<long double>(computed[i]) != ref.value[i]) return false;
    } else {
      const long double u = std::numeric_limits<T>::epsilon() / 2;
      const long double bound = 2 * inner * u * ref.magnitude[i] + std::numeric_limits<T>::denorm_min();
      if (std::fabs(static_cast<long double>(computed[i]) - ref.value[i]) > bound) return false;
    }
  }
  return true;
}

// The bytes Kokkos Tools reports for a plain rows x cols View of T in Memory, measured through the
// same recorder: whatever padding Kokkos adds to an allocation is Kokkos' own, so the tests
// measure it instead of assuming it. It must cover the elements themselves; otherwise the
// recorder saw nothing, and an equality with its count would prove nothing.
template <class T, class Memory>
std::uint64_t probe_allocation_bytes(std::size_t rows, std::size_t cols = 1) {
  std::uint64_t bytes = 0;
  {
    ordo_test::kokkos_tools_recorder probe;
    const Kokkos::View<T**, Kokkos::LayoutRight, Memory> v(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("probe")), rows, cols);
    bytes = probe.allocated_bytes();
  }
  CHECK(bytes >= std::uint64_t{rows} * cols * sizeof(T));
  return bytes;
}

struct gemm_call {
  std::size_t m, k, n;
  std::string backend;
  friend bool operator==(const gemm_call&, const gemm_call&) = default;
};

// "5x200x20 blas, 100x5x20 blas": how a failed comparison prints.
std::ostream& operator<<(std::ostream& out, const std::vector<gemm_call>& calls) {
  for (std::size_t i = 0; i < calls.size(); ++i) {
    out << (i == 0 ? "" : ", ") << calls[i].m << 'x' << calls[i].k << 'x' << calls[i].n << ' ' << calls[i].backend;
  }
  return out;
}

std::vector<gemm_call> gemm_calls(const std::vector<std::string>& regions) {
  std::vector<gemm_call> calls;
  for (const std::string& region : regions) {
    if (region.rfind("ordo::gemm ", 0) != 0) continue;
    std::istringstream in(region.substr(11));
    gemm_call c{};
    char x1 = 0, x2 = 0;
    in >> c.m >> x1 >> c.k >> x2 >> c.n >> c.backend;
    calls.push_back(c);
  }
  return calls;
}

template <class Plan>
std::vector<gemm_call> planned_calls(const Plan& plan, const std::string& backend) {
  std::vector<gemm_call> calls;
  for (const auto& step : plan.products()) calls.push_back({step.rows, step.inner, step.cols, backend});
  return calls;
}

// The backend ordo::gemm must announce for a product of contiguous (LayoutRight) operands, as
// docs/evaluation.md ("ordo::gemm") states it, written out per build kind. The kind is what
// configure found (tests/CMakeLists.txt sets ORDO_TEST_GEMM_BUILD from the BLAS and cuBLAS it
// found and ORDO_FORCE_PORTABLE_GEMM), not the macros gemm.hpp reads: a build that found BLAS
// must use it, whatever those macros say.
#if !defined(ORDO_TEST_GEMM_BUILD)
#error "multiply_test needs ORDO_TEST_GEMM_BUILD from tests/CMakeLists.txt"
#endif
constexpr std::string_view gemm_build_kinds[] = {"host_blas", "no_blas", "portable_forced", "cuda_cublas",
                                                 "cuda_cublas_without_blas"};
enum class space_kind { host, cuda, other_device };
struct backend_row {
  std::string_view build;
  space_kind space;
  bool float_or_double;
  ordo::gemm_backend requested;
  const char* backend;
};
// Every (build, space, scalar, request) not listed here gets the portable kernel.
constexpr backend_row library_backends[] = {
    {"host_blas", space_kind::host, true, ordo::gemm_backend::automatic, "blas"},
    {"cuda_cublas", space_kind::host, true, ordo::gemm_backend::automatic, "blas"},
    {"cuda_cublas", space_kind::cuda, true, ordo::gemm_backend::automatic, "cublas"},
    {"cuda_cublas_without_blas", space_kind::cuda, true, ordo::gemm_backend::automatic, "cublas"},
};

template <class ExecutionSpace>
constexpr space_kind space_kind_of() {
#if defined(KOKKOS_ENABLE_CUDA)
  if (std::is_same_v<ExecutionSpace, Kokkos::Cuda>) return space_kind::cuda;
#endif
  return std::is_same_v<typename ExecutionSpace::memory_space, Kokkos::HostSpace> ? space_kind::host
                                                                                  : space_kind::other_device;
}

template <class T, class ExecutionSpace>
std::string expected_backend(ordo::gemm_backend requested) {
  constexpr std::string_view build = ORDO_TEST_GEMM_BUILD;
  REQUIRE(std::find(std::begin(gemm_build_kinds), std::end(gemm_build_kinds), build) != std::end(gemm_build_kinds));
  const bool float_or_double = std::is_same_v<T, float> || std::is_same_v<T, double>;
  for (const backend_row& row : library_backends) {
    if (row.build == build && row.space == space_kind_of<ExecutionSpace>() && row.float_or_double == float_or_double &&
        row.requested == requested) {
      return row.backend;
    }
  }
  return "portable";
}

// Multiplies a random chain with the given dims (run-time extents) through chain + evaluate and
// checks the value, the sequence of products and the bytes allocated.
template <class T, class ExecutionSpace, std::size_t N>
void check_dynamic_chain(const std::vector<std::size_t>& dims, std::mt19937_64& rng, ordo::gemm_backend backend) {
  using dyn = ordo::matrix<T, ordo::dynamic, ordo::dynamic, ExecutionSpace>;
  std::vector<std::vector<T>> values(N);
  const auto operands = [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::array<dyn, N>{dyn(dims[I], dims[I + 1])...};
  }(std::make_index_sequence<N>{});
  for (std::size_t i = 0; i < N; ++i) {
    values[i] = random_values<T>(dims[i] * dims[i + 1], rng);
    fill(operands[i], values[i]);
  }
  const auto expression = std::apply([](const auto&... m) { return ordo::chain(m...); }, operands);
  dyn result(dims[0], dims[N]);
  // Only the workspace is allocated, and it is exactly the predicted peak, checked independently.
  const auto peak = static_cast<std::uint64_t>(ordo_test::simulated_peak_elements(expression.plan()));
  const std::uint64_t workspace_bytes =
      peak > 0 ? probe_allocation_bytes<T, typename ExecutionSpace::memory_space>(peak) : 0;
  {
    ordo_test::kokkos_tools_recorder recorder;
    ordo::evaluate(expression, result, backend);
    CHECK(recorder.allocated_bytes() == workspace_bytes);
    if (N > 1) CHECK(gemm_calls(recorder.regions()) == planned_calls(expression.plan(), expected_backend<T, ExecutionSpace>(backend)));
  }
  // The order the evaluator followed is the optimum found by exhaustive search.
  CHECK(expression.plan().order() == ordo_test::brute_force_optimum(dims).order);
  CHECK(within_bound(to_host(result), left_to_right(values, dims), dims));
}

template <class T, class ExecutionSpace>
void check_random_dynamic_chains(ordo::gemm_backend backend, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> dim(1, std::is_integral_v<T> ? 12 : 40);
  [&]<std::size_t... N>(std::index_sequence<N...>) {
    const auto one = [&]<std::size_t Count>(std::integral_constant<std::size_t, Count>) {
      std::vector<std::size_t> dims(Count + 1);
      for (auto& d : dims) d = dim(rng);
      CAPTURE(Count);
      check_dynamic_chain<T, ExecutionSpace, Count>(dims, rng, backend);
    };
    (one(std::integral_constant<std::size_t, N + 1>{}), ...);
  }(std::make_index_sequence<12>{});
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("the seed chain is computed as A(BC) and matches the naive product", ExecutionSpace,
                          seed_chain_id) {
  using A = ordo::matrix<double, 100, 5, ExecutionSpace>;
  using B = ordo::matrix<double, 5, 200, ExecutionSpace>;
  using C = ordo::matrix<double, 200, 20, ExecutionSpace>;
  A a;
  B b;
  C c;
  std::mt19937_64 rng(1);
  const std::vector<std::vector<double>> values{random_values<double>(500, rng), random_values<double>(1000, rng),
                                                random_values<double>(4000, rng)};
  fill(a, values[0]);
  fill(b, values[1]);
  fill(c, values[2]);

  auto e = ordo::chain(a, b, c);
  static_assert(decltype(e)::cost() == 30'000);
  static_assert(decltype(e)::left_to_right_cost() == 500'000);
  static_assert(decltype(e)::order() == "(A1(A2A3))");
  static_assert(std::is_same_v<decltype(ordo::multiply(a, b, c)), ordo::matrix<double, 100, 20, ExecutionSpace>>);
  // The same operands with run-time extents: planned at run time, to the same cost and order.
  using dyn = ordo::matrix<double, ordo::dynamic, ordo::dynamic, ExecutionSpace>;
  const auto d = ordo::chain(dyn(a.view()), dyn(b.view()), dyn(c.view()));
  CHECK(d.plan().cost() == decltype(e)::cost());
  CHECK(d.plan().cost() == 30'000);
  CHECK(d.plan().left_to_right_cost() == 500'000);
  CHECK(d.plan().order() == decltype(e)::order());
  CHECK(d.plan().order() == "(A1(A2A3))");

  const std::vector<std::size_t> dims{100, 5, 200, 20};
  const auto reference = left_to_right(values, dims);
  ordo::matrix<double, 100, 20, ExecutionSpace> warm = ordo::multiply(a, b, c);  // sizes the thread pools
  CHECK(within_bound(to_host(warm), reference, dims));
  dyn planned_at_run_time(100, 20);
  ordo::evaluate(d, planned_at_run_time);
  CHECK(within_bound(to_host(planned_at_run_time), reference, dims));
  // The workspace holds B*C (5x20); the result is 100x20.
  using memory = typename ExecutionSpace::memory_space;
  const std::uint64_t expected_bytes = probe_allocation_bytes<double, memory>(5 * 20) +
                                       probe_allocation_bytes<double, memory>(100, 20);
  {
    ordo_test::kokkos_tools_recorder recorder;
    const auto r = ordo::multiply(a, b, c);
    CHECK(recorder.allocated_bytes() == expected_bytes);
    CHECK(gemm_calls(recorder.regions()) ==
          std::vector<gemm_call>{{5, 200, 20, expected_backend<double, ExecutionSpace>(ordo::gemm_backend::automatic)},
                                 {100, 5, 20, expected_backend<double, ExecutionSpace>(ordo::gemm_backend::automatic)}});
    CHECK(within_bound(to_host(r), reference, dims));
  }
  ordo::matrix<double, 100, 20, ExecutionSpace> into;
  ordo::evaluate(e, into, ordo::gemm_backend::portable);
  CHECK(within_bound(to_host(into), reference, dims));
}
ORDO_TEST_ALL_SPACES(seed_chain_id);

TEST_CASE_TEMPLATE_DEFINE("static chains of 6 and 12 matrices follow their compile-time plans", ExecutionSpace,
                          static_chain_id) {
  std::mt19937_64 rng(2);
  // CLRS dims.
  ordo::matrix<float, 30, 35, ExecutionSpace> a1;
  ordo::matrix<float, 35, 15, ExecutionSpace> a2;
  ordo::matrix<float, 15, 5, ExecutionSpace> a3;
  ordo::matrix<float, 5, 10, ExecutionSpace> a4;
  ordo::matrix<float, 10, 20, ExecutionSpace> a5;
  ordo::matrix<float, 20, 25, ExecutionSpace> a6;
  const std::vector<std::size_t> dims{30, 35, 15, 5, 10, 20, 25};
  std::vector<std::vector<float>> values;
  std::apply(
      [&](const auto&... m) {
        ((values.push_back(random_values<float>(m.rows() * m.cols(), rng)), fill(m, values.back())), ...);
      },
      std::tie(a1, a2, a3, a4, a5, a6));
  auto e = ordo::chain(a1, a2, a3, a4, a5, a6);
  static_assert(decltype(e)::cost() == 15'125 && decltype(e)::order() == "((A1(A2A3))((A4A5)A6))");
  for (const auto backend : {ordo::gemm_backend::automatic, ordo::gemm_backend::portable}) {
    ordo::matrix<float, 30, 25, ExecutionSpace> r;
    ordo_test::kokkos_tools_recorder recorder;
    ordo::evaluate(e, r, backend);
    CHECK(gemm_calls(recorder.regions()) == planned_calls(e.plan(), expected_backend<float, ExecutionSpace>(backend)));
    CHECK(within_bound(to_host(r), left_to_right(values, dims), dims));
  }

  using i64 = std::int64_t;
  ordo::matrix<i64, 3, 9, ExecutionSpace> b1;
  ordo::matrix<i64, 9, 1, ExecutionSpace> b2;
  ordo::matrix<i64, 1, 12, ExecutionSpace> b3;
  ordo::matrix<i64, 12, 7, ExecutionSpace> b4;
  ordo::matrix<i64, 7, 7, ExecutionSpace> b5;
  ordo::matrix<i64, 7, 2, ExecutionSpace> b6;
  ordo::matrix<i64, 2, 11, ExecutionSpace> b7;
  ordo::matrix<i64, 11, 5, ExecutionSpace> b8;
  ordo::matrix<i64, 5, 8, ExecutionSpace> b9;
  ordo::matrix<i64, 8, 3, ExecutionSpace> b10;
  ordo::matrix<i64, 3, 10, ExecutionSpace> b11;
  ordo::matrix<i64, 10, 4, ExecutionSpace> b12;
  const std::vector<std::size_t> int_dims{3, 9, 1, 12, 7, 7, 2, 11, 5, 8, 3, 10, 4};
  std::vector<std::vector<i64>> ints;
  std::apply(
      [&](const auto&... m) {
        ((ints.push_back(random_values<i64>(m.rows() * m.cols(), rng)), fill(m, ints.back())), ...);
      },
      std::tie(b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12));
  const auto r = ordo::multiply(b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(r)>, ordo::matrix<i64, 3, 4, ExecutionSpace>>);
  const auto oracle = ordo_test::brute_force_optimum(int_dims);
  static_assert(decltype(ordo::chain(b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12))::matrices == 12);
  CHECK(ordo::chain(b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12).plan().order() == oracle.order);
  CHECK(within_bound(to_host(r), left_to_right(ints, int_dims), int_dims));
}
ORDO_TEST_ALL_SPACES(static_chain_id);

TEST_CASE_TEMPLATE_DEFINE("random dynamic chains of 1 to 12 matrices, float, double and int64", ExecutionSpace,
                          dynamic_chain_id) {
  for (const auto backend : {ordo::gemm_backend::automatic, ordo::gemm_backend::portable}) {
    check_random_dynamic_chains<double, ExecutionSpace>(backend, 11);
    check_random_dynamic_chains<float, ExecutionSpace>(backend, 12);
  }
  check_random_dynamic_chains<std::int64_t, ExecutionSpace>(ordo::gemm_backend::automatic, 13);
}
ORDO_TEST_ALL_SPACES(dynamic_chain_id);

TEST_CASE_TEMPLATE_DEFINE("mixed static and dynamic extents are planned at run time", ExecutionSpace, mixed_id) {
  const std::size_t n = 33;
  ordo::matrix<float, ordo::dynamic, 64, ExecutionSpace> x(n);
  ordo::matrix<float, 64, 8, ExecutionSpace> w1;
  ordo::matrix<float, 8, ordo::dynamic, ExecutionSpace> w2(128);
  ordo::matrix<float, ordo::dynamic, 3, ExecutionSpace> w3(128);
  std::mt19937_64 rng(3);
  std::vector<std::vector<float>> values;
  std::apply(
      [&](const auto&... m) {
        ((values.push_back(random_values<float>(m.rows() * m.cols(), rng)), fill(m, values.back())), ...);
      },
      std::tie(x, w1, w2, w3));
  const auto y = ordo::multiply(x, w1, w2, w3);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(y)>, ordo::matrix<float, ordo::dynamic, 3, ExecutionSpace>>);
  CHECK(y.rows() == n);
  const std::vector<std::size_t> dims{n, 64, 8, 128, 3};
  CHECK(ordo::chain(x, w1, w2, w3).plan().order() == ordo_test::brute_force_optimum(dims).order);
  CHECK(within_bound(to_host(y), left_to_right(values, dims), dims));
}
ORDO_TEST_ALL_SPACES(mixed_id);

TEST_CASE_TEMPLATE_DEFINE("bad input: mismatched or wrongly sized matrices are refused; an aliased result is not", ExecutionSpace,
                          errors_id) {
  using dyn = ordo::matrix<double, ordo::dynamic, ordo::dynamic, ExecutionSpace>;
  const dyn a(100, 5), b(5, 200), c(100, 20);
  CHECK_THROWS_WITH_AS(ordo::multiply(a, b, c), "ordo::multiply: A2 is 5x200 but A3 is 100x20 (inner dimensions 200 != 100)",
                       std::invalid_argument);
  // The message names the function called.
  CHECK_THROWS_WITH_AS((void)ordo::chain(a, b, c), "ordo::chain: A2 is 5x200 but A3 is 100x20 (inner dimensions 200 != 100)",
                       std::invalid_argument);
  const dyn good_c(200, 20);
  const auto e = ordo::chain(a, b, good_c);
  dyn wrong(100, 21);
  CHECK_THROWS_WITH_AS(ordo::evaluate(e, wrong),
                       "ordo::evaluate: the chain's result is 100x20 but the result matrix is 100x21",
                       std::invalid_argument);
  // A result that is also an operand gets the product through a temporary (docs/expressions.md).
  const dyn square(5, 5);
  std::vector<double> values(25);
  for (std::size_t i = 0; i < 25; ++i) values[i] = static_cast<double>(i % 7) - 3.0;
  fill(square, values);
  ordo::evaluate(ordo::chain(square, square), square);
  CHECK(within_bound(to_host(square), left_to_right<double>({values, values}, {5, 5, 5}), {5, 5, 5}));
  CHECK_THROWS_AS(ordo::gemm(ExecutionSpace(), 1.0, a.view(), c.view(), 0.0, wrong.view()), std::invalid_argument);

  // Zero-sized inner dimensions are legal: the product is all zeros.
  const dyn p(3, 0), q(0, 4);
  dyn r(3, 4);
  Kokkos::deep_copy(r.view(), 7.0);
  ordo::evaluate(ordo::chain(p, q), r);
  const auto host = to_host(r);
  CHECK(std::all_of(host.begin(), host.end(), [](double v) { return v == 0.0; }));
}
ORDO_TEST_ALL_SPACES(errors_id);

// ---- 16-bit storage and named precision ----

namespace {

// One product as the portable GEMM computes it for inner dimensions up to its 256-deep slice:
// products added in k order into a Compute sum that starts at 0, rounded once to T.
template <class T, class Compute>
std::vector<T> product_rounded_once(const std::vector<T>& a, const std::vector<T>& b, std::size_t m, std::size_t k,
                                    std::size_t n) {
  std::vector<T> c(m * n);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      Compute sum = 0;
      for (std::size_t p = 0; p < k; ++p) {
        const Compute product = static_cast<Compute>(a[i * k + p]) * static_cast<Compute>(b[p * n + j]);
        sum = sum + product;
      }
      c[i * n + j] = static_cast<T>(sum);
    }
  }
  return c;
}

template <class T>
std::vector<T> uniform_storage(std::size_t count, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<T> v;
  for (std::size_t i = 0; i < count; ++i) v.push_back(T(d(rng)));
  return v;
}

template <class T>
bool same_storage_bits(const std::vector<T>& x, const std::vector<T>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0;
}

template <class S, class ExecutionSpace>
void check_storage_chain() {
  // (10 x 40)(40 x 3)(3 x 30): the plan is (A1 A2) A3, whose intermediate is stored in S.
  std::mt19937_64 rng(77);
  ordo::matrix<S, 10, 40, ExecutionSpace> a;
  ordo::matrix<S, 40, 3, ExecutionSpace> b;
  ordo::matrix<S, 3, 30, ExecutionSpace> c;
  const auto va = uniform_storage<S>(400, rng), vb = uniform_storage<S>(120, rng), vc = uniform_storage<S>(90, rng);
  fill(a, va);
  fill(b, vb);
  fill(c, vc);
  static_assert(decltype(ordo::chain(a, b, c))::order() == "((A1A2)A3)");
  const auto r = ordo::multiply(a, b, c);
  static_assert(std::is_same_v<typename decltype(r)::value_type, S>);
  const auto ab = product_rounded_once<S, float>(va, vb, 10, 40, 3);
  const auto expected = product_rounded_once<S, float>(ab, vc, 10, 3, 30);
  CHECK(same_storage_bits(to_host(r), expected));
  // The default pair, named, gives the same bits.
  CHECK(same_storage_bits(to_host(ordo::multiply(a, b, c, ordo::precision<S, float>{})), expected));
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("16-bit chains multiply in float and store every product rounded once; precision<float, "
                          "double> accumulates float data in double",
                          ExecutionSpace, storage_chain_id) {
  check_storage_chain<ordo::half, ExecutionSpace>();
  check_storage_chain<ordo::bfloat16, ExecutionSpace>();
  std::mt19937_64 rng(78);
  ordo::matrix<float, ordo::dynamic, ordo::dynamic, ExecutionSpace> a(7, 200), b(200, 5);
  const auto va = uniform_storage<float>(1400, rng), vb = uniform_storage<float>(1000, rng);
  fill(a, va);
  fill(b, vb);
  const auto in_double = product_rounded_once<float, double>(va, vb, 7, 200, 5);
  CHECK(same_storage_bits(to_host(ordo::multiply(a, b, ordo::precision<float, double>{})), in_double));
  // Without the pair, float data take BLAS or the float kernel, which round 200 times per element:
  // the double result is the float product's correctly rounded value here, the float one is not.
  const auto in_float = to_host(ordo::multiply(a, b));
  CHECK(!same_storage_bits(in_float, in_double));
}
ORDO_TEST_ALL_SPACES(storage_chain_id);
