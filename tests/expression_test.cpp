// a * b * c: lazy products of matrices, transposes, vectors and scalars, flattened and planned as
// one chain. Oracles: exact integer products (values in [-2, 2] are exact in double), the brute-
// force optimum over all parenthesizations, and the sequence of BLAS calls recorded by Kokkos
// Tools.
#include <ordo/expression.hpp>
#include <ordo/kernels/format.hpp>

#include "support/brute_force_chain.hpp"
#include "support/execution_spaces.hpp"
#include "support/kokkos_tools_recorder.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

// A dense row-major integer matrix: the oracle's representation.
struct exact_matrix {
  std::size_t rows = 0, cols = 0;
  std::vector<std::int64_t> values;
  std::int64_t at(std::size_t i, std::size_t j) const { return values[i * cols + j]; }
};

exact_matrix exact_product(const exact_matrix& a, const exact_matrix& b) {
  exact_matrix c{a.rows, b.cols, std::vector<std::int64_t>(a.rows * b.cols, 0)};
  for (std::size_t i = 0; i < a.rows; ++i) {
    for (std::size_t l = 0; l < a.cols; ++l) {
      for (std::size_t j = 0; j < b.cols; ++j) c.values[i * c.cols + j] += a.at(i, l) * b.at(l, j);
    }
  }
  return c;
}

exact_matrix exact_transpose(const exact_matrix& a) {
  exact_matrix t{a.cols, a.rows, std::vector<std::int64_t>(a.values.size())};
  for (std::size_t i = 0; i < a.rows; ++i) {
    for (std::size_t j = 0; j < a.cols; ++j) t.values[j * t.cols + i] = a.at(i, j);
  }
  return t;
}

exact_matrix random_exact(std::size_t rows, std::size_t cols, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> d(-2, 2);
  exact_matrix m{rows, cols, std::vector<std::int64_t>(rows * cols)};
  for (auto& v : m.values) v = d(rng);
  return m;
}

template <class M>
void fill(const M& m, const exact_matrix& values) {
  auto mirror = Kokkos::create_mirror_view(m.view());
  for (std::size_t i = 0; i < m.rows(); ++i) {
    for (std::size_t j = 0; j < m.cols(); ++j) mirror(i, j) = static_cast<typename M::value_type>(static_cast<double>(values.at(i, j)));
  }
  Kokkos::deep_copy(m.view(), mirror);
}

template <class M>
bool equals(const M& m, const exact_matrix& expected, std::int64_t scale = 1) {
  if (m.rows() != expected.rows || m.cols() != expected.cols) return false;
  auto mirror = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.view());
  for (std::size_t i = 0; i < m.rows(); ++i) {
    for (std::size_t j = 0; j < m.cols(); ++j) {
      if (static_cast<double>(mirror(i, j)) != static_cast<double>(scale * expected.at(i, j))) return false;
    }
  }
  return true;
}

struct recorded_product {
  std::string product;  // "ordo::gemm MxKxN backend"
  std::string routine;  // "ordo::gemv", "ordo::dot" or "" (a GEMM)
  friend bool operator==(const recorded_product&, const recorded_product&) = default;
};

// The products of an evaluation and the vector routine each one took, from the region stream.
std::vector<recorded_product> products_of(const std::vector<std::string>& regions) {
  std::vector<recorded_product> out;
  for (const std::string& r : regions) {
    if (r.rfind("ordo::gemm ", 0) == 0) {
      out.push_back({r, ""});
    } else if ((r == "ordo::gemv" || r == "ordo::dot") && !out.empty()) {
      out.back().routine = r;
    }
  }
  return out;
}

template <class ExecutionSpace>
std::string library_backend() {
#if defined(ORDO_FORCE_PORTABLE_GEMM)
  return "portable";
#else
  if constexpr (ordo::is_host_space_v<ExecutionSpace>) {
#if defined(ORDO_HAS_BLAS)
    return "blas";
#endif
  }
#if defined(KOKKOS_ENABLE_CUDA) && defined(ORDO_HAS_CUBLAS)
  if constexpr (std::is_same_v<ExecutionSpace, Kokkos::Cuda>) return "cublas";
#endif
  return "portable";
#endif
}

// ---- every parenthesization, transpose pattern and scalar placement of 3- and 4-leaf chains ----

// The leaves of one test chain: leaf i is op_i(stored_i), where op_i transposes when bit i of the
// mask is set; stored_i then holds the transpose of the leaf's values.
template <class ExecutionSpace>
using dyn = ordo::matrix<double, ordo::dynamic, ordo::dynamic, ExecutionSpace>;

// A matrix leaf is the stored matrix itself: products borrow lvalue matrices, so a copy made
// here would die before the expression that points to it is evaluated.
template <std::size_t Mask, std::size_t I, class M>
decltype(auto) leaf(const M& stored) {
  if constexpr ((Mask >> I) & 1U) {
    return ordo::transpose(stored);
  } else {
    return (stored);
  }
}

// The parenthesizations of 3 and 4 operands.
template <std::size_t N>
constexpr std::size_t tree_count = N == 3 ? 2 : 5;

template <std::size_t Tree, class A, class B, class C>
auto parenthesize(const A& a, const B& b, const C& c) {
  if constexpr (Tree == 0) {
    return (a * b) * c;
  } else {
    return a * (b * c);
  }
}

template <std::size_t Tree, class A, class B, class C, class D>
auto parenthesize(const A& a, const B& b, const C& c, const D& d) {
  if constexpr (Tree == 0) {
    return ((a * b) * c) * d;
  } else if constexpr (Tree == 1) {
    return (a * (b * c)) * d;
  } else if constexpr (Tree == 2) {
    return (a * b) * (c * d);
  } else if constexpr (Tree == 3) {
    return a * ((b * c) * d);
  } else {
    return a * (b * (c * d));
  }
}

// Scalar placements: none, 2 * leaf 1, -(whole), (whole) * 3, and -(2 * leaf 0) * leaf 1 ... * 3.
constexpr std::array<std::int64_t, 5> placement_scale{1, 2, -1, 3, -6};

template <std::size_t Placement, std::size_t Tree, class... Leaves>
auto build(const Leaves&... leaves) {
  auto product = parenthesize<Tree>(leaves...);
  if constexpr (Placement == 0) {
    return product;
  } else if constexpr (Placement == 1) {
    return [&]<class First, class Second, class... Rest>(const First& a, const Second& b, const Rest&... rest) {
      return parenthesize<Tree>(a, 2 * b, rest...);
    }(leaves...);
  } else if constexpr (Placement == 2) {
    return -product;
  } else if constexpr (Placement == 3) {
    return product * 3;
  } else {
    return [&]<class First, class... Rest>(const First& a, const Rest&... rest) {
      return -parenthesize<Tree>(2.0 * a, rest...) * 3.0f;
    }(leaves...);
  }
}

template <class ExecutionSpace, std::size_t N>
void check_all_forms(const std::array<std::size_t, N + 1>& dims, std::mt19937_64& rng) {
  // The exact value of each leaf and the brute-force plan are the same for every form.
  std::vector<std::size_t> dim_list(dims.begin(), dims.end());
  const ordo_test::brute_force_tree optimum = ordo_test::brute_force_optimum(dim_list);
  std::array<exact_matrix, N> exact;
  for (std::size_t i = 0; i < N; ++i) exact[i] = random_exact(dims[i], dims[i + 1], rng);
  exact_matrix expected = exact[0];
  for (std::size_t i = 1; i < N; ++i) expected = exact_product(expected, exact[i]);

  [&]<std::size_t... Mask>(std::index_sequence<Mask...>) {
    const auto one_mask = [&]<std::size_t M>(std::integral_constant<std::size_t, M>) {
      // stored_i: the leaf's values, or their transpose when leaf i is written transpose(stored_i).
      std::vector<dyn<ExecutionSpace>> stored;
      for (std::size_t i = 0; i < N; ++i) {
        const bool t = (M >> i) & 1U;
        stored.push_back(t ? dyn<ExecutionSpace>(dims[i + 1], dims[i]) : dyn<ExecutionSpace>(dims[i], dims[i + 1]));
        fill(stored[i], t ? exact_transpose(exact[i]) : exact[i]);
      }
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        [&]<std::size_t... Tree>(std::index_sequence<Tree...>) {
          const auto one_tree = [&]<std::size_t T>(std::integral_constant<std::size_t, T>) {
            // Out of line: one function per form keeps the optimizer's work linear in the forms.
            const auto one_placement = [&]<std::size_t Pl>(std::integral_constant<std::size_t, Pl>)
                                           __attribute__((noinline)) {
              CAPTURE(M);
              CAPTURE(T);
              CAPTURE(Pl);
              const auto e = build<Pl, T>(leaf<M, I>(stored[I])...);
              static_assert(std::remove_cvref_t<decltype(e)>::matrices == N,
                            "a product of N leaves is one chain of N, however it is parenthesized");
              CHECK(e.plan().order() == optimum.order);
              CHECK(e.plan().cost() == static_cast<std::uint64_t>(optimum.cost));
              CHECK(e.scale() == static_cast<double>(placement_scale[Pl]));
              const dyn<ExecutionSpace> r = e;
              CHECK(equals(r, expected, placement_scale[Pl]));
              const auto portable = e.make_result();
              ordo::evaluate(e, portable, ordo::gemm_backend::portable);
              CHECK(equals(portable, expected, placement_scale[Pl]));
              // On an instance given explicitly: the same exact products.
              const auto on_instance = e.make_result();
              ordo::evaluate(ExecutionSpace(), e, on_instance);
              CHECK(equals(on_instance, expected, placement_scale[Pl]));
            };
            if constexpr (N == 3 && (M == 0 || M + 1 == (std::size_t{1} << N))) {
              // Three operands, none or all transposed: every placement on every tree.
              [&]<std::size_t... P>(std::index_sequence<P...>) {
                (one_placement(std::integral_constant<std::size_t, P>{}), ...);
              }(std::make_index_sequence<placement_scale.size()>{});
            } else {
              // Otherwise each (mask, tree) pair with one placement, (mask + tree) mod 5: with four
              // operands every pair of mask, tree and placement occurs (80 forms instead of 400);
              // with three, 32 forms instead of 80.
              one_placement(std::integral_constant<std::size_t, (M + T) % placement_scale.size()>{});
            }
          };
          (one_tree(std::integral_constant<std::size_t, Tree>{}), ...);
        }(std::make_index_sequence<tree_count<N>>{});
      }(std::make_index_sequence<N>{});
    };
    (one_mask(std::integral_constant<std::size_t, Mask>{}), ...);
  }(std::make_index_sequence<std::size_t{1} << N>{});
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("every parenthesization, transpose pattern and scalar placement of 3 and 4 operands",
                          ExecutionSpace, forms_id) {
  std::mt19937_64 rng(2026);
  // Extents 1 make vectors, row vectors and 1 x 1 results (GEMV and DOT); 0 makes empty products.
  const std::vector<std::array<std::size_t, 4>> three{{{5, 7, 3, 1}}, {{1, 6, 4, 1}}, {{4, 1, 5, 6}}, {{3, 8, 1, 2}},
                                                      {{1, 9, 9, 9}}, {{2, 0, 3, 4}}, {{6, 5, 4, 3}}};
  for (const auto& dims : three) {
    CAPTURE(dims[0]);
    CAPTURE(dims[1]);
    CAPTURE(dims[2]);
    CAPTURE(dims[3]);
    check_all_forms<ExecutionSpace, 3>(dims, rng);
  }
  const std::vector<std::array<std::size_t, 5>> four{{{7, 7, 7, 7, 1}}, {{1, 5, 8, 5, 1}}, {{9, 1, 9, 1, 9}},
                                                     {{4, 6, 2, 7, 3}}, {{3, 2, 0, 2, 3}}, {{1, 1, 1, 1, 1}}};
  for (const auto& dims : four) {
    CAPTURE(dims[0]);
    CAPTURE(dims[4]);
    check_all_forms<ExecutionSpace, 4>(dims, rng);
  }
}
ORDO_TEST_ALL_SPACES(forms_id);

// ---- compile-time plans ----

TEST_CASE_TEMPLATE_DEFINE("H^T H x is planned as H^T (H x) at compile time: two GEMVs, no n x n temporary",
                          ExecutionSpace, htx_id) {
  constexpr std::size_t n = 64;
  ordo::matrix<double, n, n, ExecutionSpace> h;
  ordo::vector<double, n, ExecutionSpace> x;
  using expression = decltype(ordo::transpose(h) * h * x);
  static_assert(expression::order() == "(A1(A2A3))");
  static_assert(expression::cost() == 2 * n * n);
  static_assert(expression::left_to_right_cost() == n * n * n + n * n);
  static_assert(std::is_same_v<expression, decltype(ordo::transpose(h) * (h * x))>);
  static_assert(std::is_same_v<typename expression::result_type, ordo::vector<double, n, ExecutionSpace>>);
  // The same facts from the brute-force search at run time.
  const auto optimum = ordo_test::brute_force_optimum({n, n, n, 1});
  CHECK(expression::order() == optimum.order);
  CHECK(expression::cost() == static_cast<std::uint64_t>(optimum.cost));

  std::mt19937_64 rng(5);
  const exact_matrix vh = random_exact(n, n, rng), vx = random_exact(n, 1, rng);
  fill(h, vh);
  fill(x, vx);
  ordo::vector<double, n, ExecutionSpace> y(ordo::uninitialized);
  const std::string backend = library_backend<ExecutionSpace>();
  {
    ordo_test::kokkos_tools_recorder recorder;
    y = ordo::transpose(h) * h * x;
    // One workspace of n elements (h x), nothing n x n.
    CHECK(recorder.allocated_bytes() < n * n * sizeof(double));
    const std::vector<recorded_product> expected{
        {"ordo::gemm " + std::to_string(n) + "x" + std::to_string(n) + "x1 " + backend, "ordo::gemv"},
        {"ordo::gemm " + std::to_string(n) + "x" + std::to_string(n) + "x1 " + backend, "ordo::gemv"}};
    CHECK(products_of(recorder.regions()) == expected);
  }
  CHECK(equals(y, exact_product(exact_transpose(vh), exact_product(vh, vx))));
}
ORDO_TEST_ALL_SPACES(htx_id);

TEST_CASE_TEMPLATE_DEFINE("static expressions: order, cost and the CLRS chain written with *", ExecutionSpace,
                          static_id) {
  // CLRS 15.2: dims 30, 35, 15, 5, 10, 20, 25; optimum 15125, ((A1(A2A3))((A4A5)A6)).
  ordo::matrix<double, 30, 35, ExecutionSpace> a1;
  ordo::matrix<double, 35, 15, ExecutionSpace> a2;
  ordo::matrix<double, 15, 5, ExecutionSpace> a3;
  ordo::matrix<double, 5, 10, ExecutionSpace> a4;
  ordo::matrix<double, 10, 20, ExecutionSpace> a5;
  ordo::matrix<double, 20, 25, ExecutionSpace> a6;
  using clrs = decltype(a1 * a2 * a3 * a4 * a5 * a6);
  static_assert(clrs::order() == "((A1(A2A3))((A4A5)A6))");
  static_assert(clrs::cost() == 15125);
  static_assert(std::is_same_v<clrs, decltype((a1 * (a2 * a3)) * ((a4 * a5) * a6))>);
  CHECK(clrs::order() == ordo_test::brute_force_optimum({30, 35, 15, 5, 10, 20, 25}).order);

  // A row vector times matrices times a column vector: x^T A B y, a 1 x 1 result.
  ordo::vector<double, 30, ExecutionSpace> u;
  ordo::vector<double, 25, ExecutionSpace> v;
  using bilinear = decltype(ordo::transpose(u) * a1 * a2 * a3 * a4 * a5 * a6 * v);
  static_assert(bilinear::result_type::static_rows == 1 && bilinear::result_type::static_cols == 1);
  CHECK(bilinear::order() == ordo_test::brute_force_optimum({1, 30, 35, 15, 5, 10, 20, 25, 1}).order);
  CHECK(bilinear::cost() ==
        static_cast<std::uint64_t>(ordo_test::brute_force_optimum({1, 30, 35, 15, 5, 10, 20, 25, 1}).cost));

  // transpose(transpose(m)) is m; the transpose of a product reverses it.
  static_assert(std::is_same_v<decltype(ordo::transpose(ordo::transpose(a1))), const decltype(a1)&>);
  using reversed = decltype(ordo::transpose(a1 * a2));
  static_assert(std::is_same_v<reversed, ordo::chain_expression<ordo::transposed<decltype(a2)>, ordo::transposed<decltype(a1)>>>);

  std::mt19937_64 rng(8);
  const auto e1 = random_exact(30, 35, rng), e2 = random_exact(35, 15, rng), e3 = random_exact(15, 5, rng),
             e4 = random_exact(5, 10, rng), e5 = random_exact(10, 20, rng), e6 = random_exact(20, 25, rng),
             eu = random_exact(30, 1, rng), ev = random_exact(25, 1, rng);
  fill(a1, e1);
  fill(a2, e2);
  fill(a3, e3);
  fill(a4, e4);
  fill(a5, e5);
  fill(a6, e6);
  fill(u, eu);
  fill(v, ev);
  exact_matrix chain = e1;
  for (const auto* m : {&e2, &e3, &e4, &e5, &e6}) chain = exact_product(chain, *m);
  CHECK(equals(ordo::evaluate(a1 * a2 * a3 * a4 * a5 * a6), chain));
  CHECK(equals(ordo::evaluate(ordo::transpose(a1 * a2 * a3 * a4 * a5 * a6)), exact_transpose(chain)));
  const auto scalar = ordo::evaluate(ordo::transpose(u) * a1 * a2 * a3 * a4 * a5 * a6 * v);
  CHECK(equals(scalar, exact_product(exact_product(exact_transpose(eu), chain), ev)));
  // ordo::chain and multiply take transposes too and agree with the operators.
  CHECK(equals(ordo::multiply(ordo::transpose(a2), ordo::transpose(a1)), exact_transpose(exact_product(e1, e2))));
}
ORDO_TEST_ALL_SPACES(static_id);

// ---- small static products: plain loops on the calling thread ----

// The product regions of an expression assigned to a matrix: every extent static and at most 8,
// host memory: "inline" (kernels/detail/small_product.hpp); otherwise the backend's.
TEST_CASE_TEMPLATE_DEFINE("small static products run inline on host memory, exactly, and forced backends still run",
                          ExecutionSpace, small_id) {
  constexpr bool host_memory = std::is_same_v<typename ExecutionSpace::memory_space, Kokkos::HostSpace>;
  const std::string small = host_memory ? "inline" : library_backend<ExecutionSpace>();
  std::mt19937_64 rng(29);
  ordo::matrix<double, 3, 3, ExecutionSpace> a, b;
  const exact_matrix ea = random_exact(3, 3, rng), eb = random_exact(3, 3, rng);
  fill(a, ea);
  fill(b, eb);
  {
    ordo_test::kokkos_tools_recorder recorder;
    const ordo::matrix<double, 3, 3, ExecutionSpace> c = a * b;
    CHECK(equals(c, exact_product(ea, eb)));
    CHECK(products_of(recorder.regions()) == std::vector<recorded_product>{{"ordo::gemm 3x3x3 " + small, ""}});
  }
  {
    // A forced backend is honoured: the same product through it, the same exact values.
    ordo_test::kokkos_tools_recorder recorder;
    ordo::matrix<double, 3, 3, ExecutionSpace> c(ordo::uninitialized);
    ordo::evaluate(a * b, c, ordo::gemm_backend::portable);
    CHECK(equals(c, exact_product(ea, eb)));
    CHECK(products_of(recorder.regions()).at(0).product == "ordo::gemm 3x3x3 portable");
  }

  // Transposes, vectors, a scalar and the plan's intermediates: 2 * A^T B C x with A 4 x 3,
  // B 4 x 5, C 5 x 8, x 8 x 1 (every extent at most 8).
  ordo::matrix<double, 4, 3, ExecutionSpace> ta;
  ordo::matrix<double, 4, 5, ExecutionSpace> tb;
  ordo::matrix<double, 5, 8, ExecutionSpace> tc;
  ordo::vector<double, 8, ExecutionSpace> x;
  const exact_matrix eta = random_exact(4, 3, rng), etb = random_exact(4, 5, rng), etc = random_exact(5, 8, rng),
                     ex = random_exact(8, 1, rng);
  fill(ta, eta);
  fill(tb, etb);
  fill(tc, etc);
  fill(x, ex);
  const exact_matrix chain = exact_product(exact_product(exact_product(exact_transpose(eta), etb), etc), ex);
  {
    ordo_test::kokkos_tools_recorder recorder;
    const ordo::vector<double, 3, ExecutionSpace> y = 2 * ordo::transpose(ta) * tb * tc * x;
    CHECK(equals(y, chain, 2));
    using expression = decltype(2 * ordo::transpose(ta) * tb * tc * x);
    static_assert(expression::order() == "(A1(A2(A3A4)))");
    const std::vector<recorded_product> expected{{"ordo::gemm 5x8x1 " + small, ""},
                                                 {"ordo::gemm 4x5x1 " + small, ""},
                                                 {"ordo::gemm 3x4x1 " + small, ""}};
    if (host_memory) CHECK(products_of(recorder.regions()) == expected);
  }
  // C += A B and C -= A B, and a = a * b (the root is computed in full before it is written).
  ordo::matrix<double, 3, 3, ExecutionSpace> acc;
  const exact_matrix eacc = random_exact(3, 3, rng);
  fill(acc, eacc);
  acc += a * b;
  acc -= 2 * a * b * b;
  exact_matrix expected_acc = eacc;
  const exact_matrix ab = exact_product(ea, eb), abb = exact_product(ab, eb);
  for (std::size_t e = 0; e < expected_acc.values.size(); ++e) expected_acc.values[e] += ab.values[e] - 2 * abb.values[e];
  CHECK(equals(acc, expected_acc));
  a = b * a * b;
  CHECK(equals(a, exact_product(exact_product(eb, ea), eb)));

  // 8 x 8 is the limit; 9 x 9 is past it: the backends run it.
  ordo::matrix<double, 8, 8, ExecutionSpace> limit;
  ordo::matrix<double, 9, 9, ExecutionSpace> past;
  const exact_matrix elimit = random_exact(8, 8, rng), epast = random_exact(9, 9, rng);
  fill(limit, elimit);
  fill(past, epast);
  {
    ordo_test::kokkos_tools_recorder recorder;
    const ordo::matrix<double, 8, 8, ExecutionSpace> square = limit * limit;
    const ordo::matrix<double, 9, 9, ExecutionSpace> larger = past * past;
    CHECK(equals(square, exact_product(elimit, elimit)));
    CHECK(equals(larger, exact_product(epast, epast)));
    const auto products = products_of(recorder.regions());
    REQUIRE(products.size() == 2);
    CHECK(products[0].product == "ordo::gemm 8x8x8 " + small);
    CHECK(products[1].product == "ordo::gemm 9x9x9 " + library_backend<ExecutionSpace>());
  }

  // 16-bit storage: small integers and their products are exact in half.
  ordo::matrix<ordo::half, 3, 4, ExecutionSpace> ha;
  ordo::matrix<ordo::half, 4, 2, ExecutionSpace> hb;
  const exact_matrix eha = random_exact(3, 4, rng), ehb = random_exact(4, 2, rng);
  fill(ha, eha);
  fill(hb, ehb);
  const ordo::matrix<ordo::half, 3, 2, ExecutionSpace> hc = ha * hb;
  CHECK(equals(hc, exact_product(eha, ehb)));
}
ORDO_TEST_ALL_SPACES(small_id);

// ---- aliasing, errors, edge extents ----

namespace {
template <class S, class M>
concept scalable_by = requires(const S& s, const M& m) { s * m; };
}  // namespace

TEST_CASE_TEMPLATE_DEFINE("a = a * b and other aliasing assignments give the product", ExecutionSpace, alias_id) {
  std::mt19937_64 rng(11);
  ordo::matrix<double, 6, 6, ExecutionSpace> a;
  ordo::matrix<double, 6, 6, ExecutionSpace> b;
  const exact_matrix ea = random_exact(6, 6, rng), eb = random_exact(6, 6, rng);
  fill(a, ea);
  fill(b, eb);
  const auto a_copy = a;  // shares a's elements: it sees the assignment
  a = a * b;
  CHECK(equals(a, exact_product(ea, eb)));
  CHECK(equals(a_copy, exact_product(ea, eb)));
  fill(a, ea);
  a = b * a * b;
  CHECK(equals(a, exact_product(exact_product(eb, ea), eb)));
  fill(a, ea);
  a = ordo::transpose(a);  // in-place transpose through the temporary
  CHECK(equals(a, exact_transpose(ea)));
  fill(a, ea);
  a = -a;
  CHECK(equals(a, ea, -1));
  // The result overlapping an operand through a View that starts elsewhere is detected too.
  using dyn_matrix = dyn<ExecutionSpace>;
  dyn_matrix whole(12, 6);
  fill(whole, random_exact(12, 6, rng));
  const auto host_whole = [&] {
    exact_matrix m{12, 6, std::vector<std::int64_t>(72)};
    auto mirror = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), whole.view());
    for (std::size_t i = 0; i < 12; ++i) {
      for (std::size_t j = 0; j < 6; ++j) m.values[i * 6 + j] = static_cast<std::int64_t>(mirror(i, j));
    }
    return m;
  }();
  using view_type = typename dyn_matrix::view_type;
  const dyn_matrix top(view_type(whole.view().data(), 6, 6));
  dyn_matrix middle(view_type(whole.view().data() + 18, 6, 6));
  exact_matrix top_values{6, 6, {host_whole.values.begin(), host_whole.values.begin() + 36}};
  middle = top * top;
  CHECK(equals(middle, exact_product(top_values, top_values)));
}
ORDO_TEST_ALL_SPACES(alias_id);

TEST_CASE_TEMPLATE_DEFINE("dynamic mismatches throw at the offending *, naming both shapes", ExecutionSpace,
                          errors_id) {
  using dyn_matrix = dyn<ExecutionSpace>;
  const dyn_matrix a(100, 5), b(200, 4), c(5, 200);
  CHECK_THROWS_WITH_AS((void)(a * b), "ordo: operator*: the left operand is 100x5 and the right operand is 200x4 "
                                      "(inner extents 5 != 200)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)((a * c) * ordo::transpose(b)),
                       "ordo: operator*: the left operand is 100x200 and the right operand is 4x200 "
                       "(inner extents 200 != 4)",
                       std::invalid_argument);
  // Mixed static and dynamic: the static side's extents are checked at run time against the other.
  ordo::matrix<double, 5, ordo::dynamic, ExecutionSpace> mixed(7);
  CHECK_THROWS_WITH_AS((void)(mixed * c), "ordo: operator*: the left operand is 5x7 and the right operand is 5x200 "
                                          "(inner extents 7 != 5)",
                       std::invalid_argument);
  // A result of the wrong run-time extents.
  dyn_matrix wrong(100, 3);
  CHECK_THROWS_WITH_AS(wrong = a * c, "ordo::evaluate: the chain's result is 100x200 but the result matrix is 100x3",
                       std::invalid_argument);
  // Scalars are arithmetic types other than bool (mixed matrix types: must-fail builds).
  using matrix_type = ordo::matrix<double, 5, 5, ExecutionSpace>;
  static_assert(!scalable_by<bool, matrix_type>);
  static_assert(scalable_by<int, matrix_type> && scalable_by<float, matrix_type>);
}
ORDO_TEST_ALL_SPACES(errors_id);

TEST_CASE_TEMPLATE_DEFINE("empty extents and 1 x 1 results", ExecutionSpace, edges_id) {
  using dyn_matrix = dyn<ExecutionSpace>;
  // 3 x 0 times 0 x 4: all zeros, even over a result full of NaN.
  const dyn_matrix p(3, 0), q(0, 4);
  dyn_matrix r(3, 4);
  Kokkos::deep_copy(r.view(), std::numeric_limits<double>::quiet_NaN());
  r = 2.0 * p * q;
  CHECK(equals(r, exact_matrix{3, 4, std::vector<std::int64_t>(12, 0)}));
  // 0 x 5 times 5 x 1: an empty result.
  const dyn_matrix e(0, 5), v(5, 1);
  const dyn_matrix empty = e * v;
  CHECK(empty.rows() == 0);
  CHECK(empty.cols() == 1);
  // x^T y: a dot product, and x^T x scaled.
  std::mt19937_64 rng(3);
  ordo::vector<double, 40, ExecutionSpace> x, y;
  const exact_matrix ex = random_exact(40, 1, rng), ey = random_exact(40, 1, rng);
  fill(x, ex);
  fill(y, ey);
  ordo::matrix<double, 1, 1, ExecutionSpace> dot = ordo::transpose(x) * y;
  CHECK(equals(dot, exact_product(exact_transpose(ex), ey)));
  dot = -3 * ordo::transpose(x) * x;
  CHECK(equals(dot, exact_product(exact_transpose(ex), ex), -3));
  // One operand: a scaled copy, and a transposed copy.
  const ordo::matrix<double, 40, 1, ExecutionSpace> twice = 2 * x;
  CHECK(equals(twice, ex, 2));
  const ordo::matrix<double, 1, 40, ExecutionSpace> row = ordo::transpose(x);
  CHECK(equals(row, exact_transpose(ex)));
  // An outer product x y^T (inner extent 1).
  const ordo::matrix<double, 40, 40, ExecutionSpace> outer = x * ordo::transpose(y);
  CHECK(equals(outer, exact_product(ex, exact_transpose(ey))));
}
ORDO_TEST_ALL_SPACES(edges_id);

// What users of Eigen or Armadillo expect on day one (issue 28): matrices from lists and from
// their own memory, an empty dynamic matrix sized by its first product, cost and order of a
// dynamic expression, a 1 x 1 product as a scalar, and printing. Oracles: integer triple loops,
// the brute-force optimum, and strings written out by hand.
TEST_CASE_TEMPLATE_DEFINE("lists, borrowed memory, sizing by assignment, dynamic cost and order, scalars, printing",
                          ExecutionSpace, newcomer_id) {
  using dyn_matrix = dyn<ExecutionSpace>;
  // Lists, row by row; static extents must match the list, rows must be equal.
  const ordo::matrix<double, 2, 3, ExecutionSpace> a{{1, 2, 3}, {4, 5, 6}};
  const dyn_matrix b{{1, 0}, {0, -1}, {2, 1}};
  const exact_matrix ea{2, 3, {1, 2, 3, 4, 5, 6}}, eb{3, 2, {1, 0, 0, -1, 2, 1}};
  CHECK(equals(a, ea));
  CHECK(equals(b, eb));
  CHECK_THROWS_WITH_AS((ordo::matrix<double, 2, 2, ExecutionSpace>{{1, 2, 3}, {4, 5, 6}}),
                       "ordo::matrix{{...}}: the list is 2x3 but the matrix type is 2x2", std::invalid_argument);
  CHECK_THROWS_WITH_AS((dyn_matrix{{1, 2}, {3}}), "ordo::matrix{{...}}: row 1 has 1 elements, row 0 has 2",
                       std::invalid_argument);

  // An empty dynamic matrix takes the first product's extents; static and dynamic extents mixed.
  ordo::matrix<double, ordo::dynamic, 2, ExecutionSpace> c;
  CHECK(c.rows() == 0);
  c = a * b;
  CHECK(equals(c, exact_product(ea, eb)));
  dyn_matrix d;
  d = ordo::transpose(b) * ordo::transpose(a);  // (a b)^T
  CHECK(equals(d, exact_transpose(exact_product(ea, eb))));
  // A matrix with elements keeps them (its copies share them): a wrong size still throws.
  dyn_matrix wrong(3, 3);
  CHECK_THROWS_AS(wrong = a * b, std::invalid_argument);

  // Dynamic expressions plan at run time: the brute-force optimum, and the order it implies.
  std::mt19937_64 rng(28);
  const std::vector<std::size_t> dims{30, 2, 40, 3, 25};
  std::vector<dyn_matrix> m;
  std::vector<exact_matrix> em;
  for (std::size_t i = 0; i + 1 < dims.size(); ++i) {
    em.push_back(random_exact(dims[i], dims[i + 1], rng));
    m.emplace_back(dims[i], dims[i + 1]);
    fill(m.back(), em.back());
  }
  const auto e = m[0] * m[1] * m[2] * m[3];
  CHECK(e.cost() == ordo_test::brute_force_optimum(dims).cost);
  // By hand: A2A3 = 2*40*3 = 240, then (2x3)A4 = 2*3*25 = 150, then A1 = 30*2*25 = 1,500: 1,890,
  // below (A1(A2A3))A4 = 2,670, A1(A2(A3A4)) = 6,500, ((A1A2)A3)A4 = 8,250, (A1A2)(A3A4) = 35,400.
  CHECK(e.cost() == 1890);
  CHECK(e.order() == "(A1((A2A3)A4))");
  CHECK(e.left_to_right_cost() == 30 * 2 * 40 + 30 * 40 * 3 + 30 * 3 * 25);
  const dyn_matrix product = e;
  CHECK(equals(product, exact_product(exact_product(exact_product(em[0], em[1]), em[2]), em[3])));

  // A 1 x 1 product as its element: x^T y.
  ordo::vector<double, ordo::dynamic, ExecutionSpace> x{{1}, {-2}, {3}}, y{{4}, {5}, {-6}};
  const double dot = ordo::transpose(x) * y;
  CHECK(dot == 1 * 4 - 2 * 5 - 3 * 6);
  const double scaled = 2 * ordo::transpose(x) * x;
  CHECK(scaled == 2 * (1 + 4 + 9));

  // Printing, row by row; a product prints its value.
  std::ostringstream printed;
  printed << a << '\n' << (a * b);
  CHECK(printed.str() == "[[1, 2, 3],\n [4, 5, 6]]\n[[7, 1],\n [16, 1]]");
  // The formatters give the same text; the spec pads the whole of it, as for a string.
#if defined(ORDO_TEST_HAS_FMT) && defined(ORDO_HAS_FMT_FORMATTER)
  CHECK(fmt::format("{}|{:>22}", a, a * b + a * b) == "[[1, 2, 3],\n [4, 5, 6]]|   [[14, 2],\n [32, 2]]");
#elif defined(__CUDACC__)
  MESSAGE("nvcc: <ordo/kernels/format.hpp> declares no formatter (nvcc compiles neither std::format nor {fmt} 9's)");
#else
  MESSAGE("{fmt} not found at configure time: fmt::formatter not checked (install libfmt-dev)");
#endif
#if defined(ORDO_HAS_STD_FORMATTER)
  CHECK(std::format("{}", a * b) == "[[7, 1],\n [16, 1]]");
#endif
}
ORDO_TEST_ALL_SPACES(newcomer_id);

exact_matrix exact_sum(const exact_matrix& a, const exact_matrix& b, std::int64_t sa = 1, std::int64_t sb = 1) {
  exact_matrix c{a.rows, a.cols, std::vector<std::int64_t>(a.values.size())};
  for (std::size_t k = 0; k < c.values.size(); ++k) c.values[k] = sa * a.values[k] + sb * b.values[k];
  return c;
}

// Sums and differences of products through the BLAS beta (issue 28): exact on integer data
// against triple loops and element-wise sums written out here, static, dynamic and mixed extents.
TEST_CASE_TEMPLATE_DEFINE("sums of products, C += A*B, C -= A*B, division by a scalar, element-wise a + b",
                          ExecutionSpace, sums_id) {
  std::mt19937_64 rng(2828);
  const exact_matrix ea = random_exact(30, 20, rng), eb = random_exact(20, 40, rng), ec = random_exact(40, 5, rng),
                     ed = random_exact(30, 5, rng), ef = random_exact(30, 7, rng), eg = random_exact(7, 5, rng);
  const ordo::matrix<double, 30, 20, ExecutionSpace> a;         // static
  const dyn<ExecutionSpace> b(20, 40);                          // dynamic
  const ordo::matrix<double, ordo::dynamic, 5, ExecutionSpace> c(40);  // mixed
  const ordo::matrix<double, 30, 5, ExecutionSpace> d;
  const dyn<ExecutionSpace> f(30, 7), g(7, 5);
  fill(a, ea); fill(b, eb); fill(c, ec); fill(d, ed); fill(f, ef); fill(g, eg);
  const exact_matrix abc = exact_product(exact_product(ea, eb), ec), fg = exact_product(ef, eg);

  ordo::matrix<double, 30, 5, ExecutionSpace> y = a * b * c + d;
  CHECK(equals(y, exact_sum(abc, ed)));
  y = a * b * c - d;
  CHECK(equals(y, exact_sum(abc, ed, 1, -1)));
  y = 2 * a * b * c + 3 * f * g;  // two planned chains, the second added with beta = 1
  CHECK(equals(y, exact_sum(abc, fg, 2, 3)));
  y = d - a * b * c + f * g;
  CHECK(equals(y, exact_sum(exact_sum(ed, abc, 1, -1), fg)));
  y = -(d + f * g);
  CHECK(equals(y, exact_sum(ed, fg, -1, -1)));
  y = (a * b * c) / 2.0;  // the scale 1/2, exact here
  {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y.view());
    bool halves = true;
    for (std::size_t i = 0; i < 30; ++i) {
      for (std::size_t j = 0; j < 5; ++j) halves = halves && host(i, j) * 2 == static_cast<double>(abc.at(i, j));
    }
    CHECK(halves);
  }
  const ordo::matrix<double, 30, 5, ExecutionSpace> e = d + d;  // element-wise, one shape
  CHECK(equals(e, ed, 2));
  y = e - d;
  CHECK(equals(y, ed));

  // C += A*B and C -= A*B: the planned workspace (30 x 40, the product a b) and nothing of C's size.
  ordo::matrix<double, 30, 5, ExecutionSpace> acc(ordo::uninitialized);
  Kokkos::deep_copy(acc.view(), d.view());
  {
    ordo_test::kokkos_tools_recorder recorder;
    acc += a * b * c;
    const std::uint64_t planned = (a * b * c).plan().peak_temporary_elements() * sizeof(double);
    CHECK(recorder.allocated_bytes() <= planned);
  }
  CHECK(equals(acc, exact_sum(ed, abc)));
  acc -= 2 * f * g;
  CHECK(equals(acc, exact_sum(exact_sum(ed, abc), fg, 1, -2)));
  acc += d;  // a matrix: element-wise
  CHECK(equals(acc, exact_sum(exact_sum(exact_sum(ed, abc), fg, 1, -2), ed)));
  // A sum that reads its result: computed into a temporary first.
  acc = acc - d + d;
  CHECK(equals(acc, exact_sum(exact_sum(exact_sum(ed, abc), fg, 1, -2), ed)));

  // The same sums on each GEMM backend, every product announced with the backend asked for.
  const exact_matrix expected_sum = exact_sum(exact_sum(abc, fg, 2, 3), ed, 1, -1);
  for (const ordo::gemm_backend backend : {ordo::gemm_backend::automatic, ordo::gemm_backend::portable}) {
    const std::string name = backend == ordo::gemm_backend::portable ? "portable" : library_backend<ExecutionSpace>();
    CAPTURE(name);
    ordo::matrix<double, 30, 5, ExecutionSpace> z(ordo::uninitialized);
    ordo_test::kokkos_tools_recorder recorder;
    ordo::evaluate(2 * a * b * c + 3 * f * g - d, z, backend);
    CHECK(equals(z, expected_sum));
    dyn<ExecutionSpace> w(30, 5);
    ordo::evaluate(ExecutionSpace(), d - a * b * c, w, backend);
    CHECK(equals(w, exact_sum(ed, abc, 1, -1)));
    const auto products = products_of(recorder.regions());
    CHECK(products.size() == 5);  // a b c: 2, f g: 1, a b c again: 2
    for (const auto& p : products) CHECK(p.product.ends_with(" " + name));
  }

  // Shapes: dynamic mismatches throw naming both terms.
  CHECK_THROWS_WITH_AS(static_cast<void>(a * b * c + f),
                       "ordo: operator+: the left term is 30x5 and the right term is 30x7 (a sum needs equal shapes)",
                       std::invalid_argument);
}
ORDO_TEST_ALL_SPACES(sums_id);

// What a product holds (issue 30): lvalue matrices by pointer (no View copied, no reference count
// touched), temporaries moved in, transposes and diagonals as small copies.
TEST_CASE_TEMPLATE_DEFINE("a product borrows lvalue matrices and owns temporaries", ExecutionSpace, borrow_id) {
  using m33 = ordo::matrix<double, 3, 3, ExecutionSpace>;
  const m33 a{{1, 2, 0}, {0, 1, 0}, {0, 0, 1}};
  const m33 b{{1, 0, 0}, {3, 1, 0}, {0, 0, 2}};
  const auto references = a.view().use_count();
  {
    const auto e = a * b * a * b;
    static_assert(std::is_trivially_copyable_v<std::remove_cvref_t<decltype(e)>>,
                  "a product of lvalue matrices is a few pointers and a scale");
    CHECK(a.view().use_count() == references);
    CHECK(b.view().use_count() == references);
    const m33 r = e;
    const m33 ab = a * b;
    const m33 expected = ab * ab;
    auto host_r = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r.view());
    auto host_expected = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), expected.view());
    for (std::size_t i = 0; i < 3; ++i) {
      for (std::size_t j = 0; j < 3; ++j) CHECK(host_r(i, j) == host_expected(i, j));
    }
  }
  {
    // A temporary is moved in: the expression holds the only reference to its elements.
    const auto fresh = [] { return m33{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}; };
    const auto e = fresh() * b;
    CHECK(e.template operand<0>().view().use_count() == 1);
    // A transpose shares its matrix's elements: one more reference while the expression lives.
    const auto t = ordo::transpose(a) * b;
    CHECK(a.view().use_count() == references + 1);
  }
  CHECK(a.view().use_count() == references);
}
ORDO_TEST_ALL_SPACES(borrow_id);

// diag(v) as a dense matrix: the oracle for ordo::diagonal(v).
exact_matrix exact_diagonal(const exact_matrix& v) {
  exact_matrix d{v.rows, v.rows, std::vector<std::int64_t>(v.rows * v.rows, 0)};
  for (std::size_t i = 0; i < v.rows; ++i) d.values[i * v.rows + i] = v.at(i, 0);
  return d;
}

// Diagonal factors (issue 28): W1 D1 W2 D2 W3 G, an MLP's backward pass shape, with static,
// dynamic and mixed extents, on each GEMM backend; exact against dense diagonals multiplied out.
TEST_CASE_TEMPLATE_DEFINE("diagonal factors: exact against dense diagonals, static, dynamic and mixed, both backends",
                          ExecutionSpace, diagonal_id) {
  std::mt19937_64 rng(2829);
  const exact_matrix e1 = random_exact(9, 12, rng), v1 = random_exact(12, 1, rng), e2 = random_exact(12, 8, rng),
                     v2 = random_exact(8, 1, rng), e3 = random_exact(8, 5, rng), eg = random_exact(5, 3, rng);
  const exact_matrix d1 = exact_diagonal(v1), d2 = exact_diagonal(v2);
  exact_matrix expected = e1;
  for (const exact_matrix* next : {&d1, &e2, &d2, &e3, &eg}) expected = exact_product(expected, *next);
  const auto oracle = ordo_test::brute_force_structured_optimum({9, 12, 12, 8, 8, 5, 3},
                                                                {false, true, false, true, false, false});

  using H = ExecutionSpace;
  const ordo::matrix<double, 9, 12, H> w1;
  const ordo::vector<double, 12, H> s1;
  const ordo::matrix<double, 12, 8, H> w2;
  const ordo::vector<double, 8, H> s2;
  const ordo::matrix<double, 8, 5, H> w3;
  const ordo::matrix<double, 5, 3, H> g;
  const dyn<H> y1(9, 12), t1(12, 1), y2(12, 8), t2(8, 1), y3(8, 5), yg(5, 3);
  fill(w1, e1); fill(s1, v1); fill(w2, e2); fill(s2, v2); fill(w3, e3); fill(g, eg);
  fill(y1, e1); fill(t1, v1); fill(y2, e2); fill(t2, v2); fill(y3, e3); fill(yg, eg);

  const auto fixed = w1 * ordo::diagonal(s1) * w2 * ordo::diagonal(s2) * w3 * g;
  using fixed_type = decltype(fixed);
  static_assert(fixed_type::is_static && fixed_type::matrices == 6);
  // Dense diagonals would cost 12 x 12 and 8 x 8 multiplications per column of what they scale.
  static_assert(fixed_type::cost() < ordo::plan_chain(std::array<std::size_t, 7>{9, 12, 12, 8, 8, 5, 3}).cost());
  CHECK(fixed_type::cost() == oracle.cost);
  CHECK(fixed_type::order() == oracle.order);
  const auto dynamic_chain = y1 * ordo::diagonal(t1) * y2 * ordo::diagonal(t2) * y3 * yg;
  CHECK(dynamic_chain.cost() == oracle.cost);
  CHECK(dynamic_chain.order() == oracle.order);
  const auto mixed = w1 * ordo::diagonal(t1) * y2 * ordo::diagonal(s2) * w3 * yg;
  CHECK(mixed.order() == oracle.order);

  for (const ordo::gemm_backend backend : {ordo::gemm_backend::automatic, ordo::gemm_backend::portable}) {
    CAPTURE(ordo::to_string(backend));
    const ordo::matrix<double, 9, 3, H> r1(ordo::uninitialized);
    ordo::evaluate(fixed, r1, backend);
    CHECK(equals(r1, expected));
    const dyn<H> r2(9, 3);
    ordo::evaluate(dynamic_chain, r2, backend);
    CHECK(equals(r2, expected));
    const dyn<H> r3(9, 3);
    ordo::evaluate(-2 * mixed, r3, backend);
    CHECK(equals(r3, expected, -2));
  }

  // The other shapes a diagonal takes part in: alone, times a diagonal, at either end, transposed,
  // accumulated, and assigned over the matrix it scales.
  const dyn<H> alone = ordo::diagonal(s1);
  CHECK(equals(alone, d1));
  const ordo::matrix<double, 12, 12, H> squared = 3 * ordo::diagonal(s1) * ordo::diagonal(t1);
  CHECK(equals(squared, exact_product(d1, d1), 3));
  const dyn<H> both_ends = ordo::diagonal(t1) * ordo::diagonal(s1) * w2 * ordo::diagonal(s2);
  CHECK(equals(both_ends, exact_product(exact_product(exact_product(d1, d1), e2), d2)));
  const dyn<H> transposed = ordo::transpose(ordo::diagonal(s1) * w2);
  CHECK(equals(transposed, exact_transpose(exact_product(d1, e2))));
  dyn<H> acc(12, 8);
  fill(acc, e2);
  acc += ordo::diagonal(s1) * y2;
  CHECK(equals(acc, exact_sum(e2, exact_product(d1, e2))));
  acc = ordo::diagonal(t1) * acc;  // reads its result: computed into a temporary first
  CHECK(equals(acc, exact_product(d1, exact_sum(e2, exact_product(d1, e2)))));
  const dyn<H> vector_scaled = ordo::diagonal(s2) * t2;
  CHECK(equals(vector_scaled, exact_product(d2, v2)));

  CHECK_THROWS_WITH_AS(static_cast<void>(ordo::diagonal(y3)),
                       "ordo::diagonal(d): d is 8x5 (a diagonal is a column vector, n x 1)", std::invalid_argument);
}
ORDO_TEST_ALL_SPACES(diagonal_id);

// A run-time number of operands (issue 28): planned from the run-time extents, one workspace.
TEST_CASE_TEMPLATE_DEFINE("evaluate_chain of a std::vector: planned at run time, exact, one workspace",
                          ExecutionSpace, range_id) {
  std::mt19937_64 rng(2807);
  const std::vector<std::size_t> dims{7, 30, 2, 40, 3, 25};
  std::vector<dyn<ExecutionSpace>> chain;
  exact_matrix expected;
  for (std::size_t i = 0; i + 1 < dims.size(); ++i) {
    const exact_matrix e = random_exact(dims[i], dims[i + 1], rng);
    chain.emplace_back(dims[i], dims[i + 1]);
    fill(chain.back(), e);
    expected = i == 0 ? e : exact_product(expected, e);
  }
  {
    ordo_test::kokkos_tools_recorder recorder;
    const auto product = ordo::evaluate_chain(chain);
    // Counted before equals(), whose host copy of a device result is the test's, not ordo's.
    const std::size_t allocated = recorder.allocated_bytes();
    CHECK(equals(product, expected));
    // The result and the planned workspace, nothing else.
    const auto plan = ordo::plan_chain(dims);
    CHECK(allocated == (7 * 25 + plan.peak_temporary_elements()) * sizeof(double));
  }
  // Backpropagation through time: twelve 4 x 4 Jacobians of one static type.
  std::vector<ordo::matrix<double, 4, 4, ExecutionSpace>> jacobians(12);
  exact_matrix jacobian_product;
  for (std::size_t t = 0; t < jacobians.size(); ++t) {
    std::uniform_int_distribution<int> d(-1, 1);
    exact_matrix e{4, 4, std::vector<std::int64_t>(16)};
    for (auto& v : e.values) v = d(rng);
    fill(jacobians[t], e);
    jacobian_product = t == 0 ? e : exact_product(jacobian_product, e);
  }
  CHECK(equals(ordo::evaluate_chain(jacobians), jacobian_product));
  // The same on the portable backend, every product announced as such.
  {
    ordo_test::kokkos_tools_recorder recorder;
    CHECK(equals(ordo::evaluate_chain(chain, ordo::gemm_backend::portable), expected));
    CHECK(equals(ordo::evaluate_chain(jacobians, ordo::gemm_backend::portable), jacobian_product));
    const auto products = products_of(recorder.regions());
    CHECK(products.size() == 4 + 11);
    for (const auto& p : products) CHECK(p.product.ends_with(" portable"));
  }
  // One matrix: a copy. None, or neighbours that do not conform: refused by name.
  const auto single = ordo::evaluate_chain(std::span(chain.data() + 1, 1));
  CHECK(single.rows() == 30);
  CHECK(single.view().data() != chain[1].view().data());
  CHECK_THROWS_WITH_AS(ordo::evaluate_chain(std::vector<dyn<ExecutionSpace>>{}),
                       "ordo::evaluate_chain: the range holds no matrix", std::invalid_argument);
  std::swap(chain[1], chain[2]);
  CHECK_THROWS_WITH_AS(ordo::evaluate_chain(chain),
                       "ordo::evaluate_chain: A1 is 7x30 but A2 is 2x40 (inner extents 30 != 2)",
                       std::invalid_argument);
}
ORDO_TEST_ALL_SPACES(range_id);

// The caller's own memory, used in place (host spaces: a std::vector lives in host memory).
TEST_CASE("ordo::borrowed wraps a pointer or a std::vector without copying") {
  std::vector<double> elements{1, 2, 3, 4, 5, 6};
  using host = Kokkos::DefaultHostExecutionSpace;
  const ordo::matrix<double, 2, ordo::dynamic, host> m(ordo::borrowed, elements, 3);
  const ordo::matrix<double, 3, 2, host> t(ordo::borrowed, elements.data());
  elements[0] = 10;  // seen through both: no copy
  CHECK(m(0, 0) == 10);
  CHECK(t(0, 0) == 10);
  CHECK(m.view().data() == elements.data());
  const ordo::matrix<double, 2, 2, host> product = m * ordo::transpose(m);
  CHECK(product(0, 0) == 10 * 10 + 2 * 2 + 3 * 3);
  CHECK(product(1, 0) == 4 * 10 + 5 * 2 + 6 * 3);
  CHECK_THROWS_WITH_AS((ordo::matrix<double, 2, ordo::dynamic, host>(ordo::borrowed, elements, 4)),
                       "ordo::matrix(borrowed, vector): the vector has 6 elements, the matrix is 2x4",
                       std::invalid_argument);
}
