#include <ordo/core/float16.hpp>
#include <ordo/kernels/detail/portable_gemm.hpp>

#include "support/execution_spaces.hpp"

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <utility>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

// The oracle is a naive triple loop on the host in long double over the same inputs. Integer
// types and integer-valued floating inputs must match it exactly; otherwise every element must
// lie within the rounding-error bound of a k-term dot product (Higham, "Accuracy and Stability
// of Numerical Algorithms", 2nd ed., §3.1):
//   |C - C_exact| <= (k + 8) u (|alpha| (|A||B|)_ij + |beta| |C0_ij|),
// the 8 covering the scaling by alpha, the merge of the kc-deep slices and the beta update.

namespace {

// Storage orders of a test matrix. The strided ones are LayoutStride views with padded leading
// dimensions, column-major and row-major.
struct left {
  using layout = Kokkos::LayoutLeft;
  static layout make(std::size_t rows, std::size_t columns) { return layout(rows, columns); }
  static std::size_t offset(std::size_t i, std::size_t j, std::size_t rows, std::size_t) {
    return i + j * rows;
  }
  static std::size_t span(std::size_t rows, std::size_t columns) { return rows * columns; }
  static constexpr const char* name = "left";
};
struct right {
  using layout = Kokkos::LayoutRight;
  static layout make(std::size_t rows, std::size_t columns) { return layout(rows, columns); }
  static std::size_t offset(std::size_t i, std::size_t j, std::size_t, std::size_t columns) {
    return i * columns + j;
  }
  static std::size_t span(std::size_t rows, std::size_t columns) { return rows * columns; }
  static constexpr const char* name = "right";
};
struct strided_left {
  using layout = Kokkos::LayoutStride;
  static std::size_t ld(std::size_t rows) { return rows + 3; }
  static layout make(std::size_t rows, std::size_t columns) {
    return layout(rows, 1, columns, ld(rows));
  }
  static std::size_t offset(std::size_t i, std::size_t j, std::size_t rows, std::size_t) {
    return i + j * ld(rows);
  }
  static std::size_t span(std::size_t rows, std::size_t columns) { return ld(rows) * columns; }
  static constexpr const char* name = "strided_left";
};
struct strided_right {
  using layout = Kokkos::LayoutStride;
  static std::size_t ld(std::size_t columns) { return columns + 5; }
  static layout make(std::size_t rows, std::size_t columns) {
    return layout(rows, ld(columns), columns, 1);
  }
  static std::size_t offset(std::size_t i, std::size_t j, std::size_t, std::size_t columns) {
    return i * ld(columns) + j;
  }
  static std::size_t span(std::size_t rows, std::size_t columns) { return rows * ld(columns); }
  static constexpr const char* name = "strided_right";
};

// A rows x columns matrix in the memory of ExecutionSpace, stored in a 1-D buffer (padding
// included) that is filled on the host and copied over; the 2-D view is unmanaged over it.
template <class ExecutionSpace, class T, class Storage>
struct test_matrix {
  using memory_space = typename ExecutionSpace::memory_space;
  using view_type =
      Kokkos::View<T**, typename Storage::layout, memory_space, Kokkos::MemoryUnmanaged>;
  using buffer_type = Kokkos::View<T*, memory_space>;

  std::size_t rows;
  std::size_t columns;
  buffer_type buffer;
  typename buffer_type::HostMirror host;
  view_type view;

  test_matrix(std::size_t rows_, std::size_t columns_, T fill)
      : rows(rows_),
        columns(columns_),
        // Not initialized by Kokkos (a parallel kernel per allocation): filled on the host below.
        buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ordo::test_matrix"),
               Storage::span(rows_, columns_) + 1),
        host(Kokkos::create_mirror_view(buffer)),
        view(buffer.data(), Storage::make(rows_, columns_)) {
    for (std::size_t e = 0; e < host.extent(0); ++e) host(e) = fill;
  }
  T& operator()(std::size_t i, std::size_t j) const {
    return host(Storage::offset(i, j, rows, columns));
  }
  void to_device() const { Kokkos::deep_copy(buffer, host); }
  void to_host() const { Kokkos::deep_copy(host, buffer); }
  // The padding must come back untouched: the kernel writes only inside C.
  bool padding_is(T fill) const {
    std::vector<bool> inside(host.extent(0), false);
    for (std::size_t i = 0; i < rows; ++i) {
      for (std::size_t j = 0; j < columns; ++j) inside[Storage::offset(i, j, rows, columns)] = true;
    }
    for (std::size_t e = 0; e < host.extent(0); ++e) {
      if (!inside[e] && !(host(e) == fill)) return false;
    }
    return true;
  }
};

// splitmix64: a deterministic stream per test case.
struct random_stream {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-52 - 1.0; }
  // Uniform integer in [-4, 4].
  int small_integer() { return static_cast<int>(next() % 9) - 4; }
};

enum class values { uniform, integers };

template <class T>
T draw(random_stream& random, values kind) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(random.small_integer());
  } else {
    return kind == values::integers ? static_cast<T>(random.small_integer())
                                    : static_cast<T>(random.uniform());
  }
}

template <class T>
constexpr T quiet_nan() {
  if constexpr (std::numeric_limits<T>::has_quiet_NaN) {
    return std::numeric_limits<T>::quiet_NaN();
  } else {
    return T(0);
  }
}

struct gemm_case {
  std::size_t m, n, k;
  double alpha, beta;
  bool nan_in_c = false;   // C holds NaN before the call (meaningful with beta == 0)
  bool nan_in_ab = false;  // A and B hold NaN (meaningful with alpha == 0)
};

// Expected C from the host copies of A, B and C0, and the error bound per element.
struct oracle {
  std::vector<long double> expected;
  std::vector<long double> bound;
};

oracle reference(const gemm_case& g, const auto& a, const auto& b, const auto& c0, long double u) {
  oracle o{std::vector<long double>(g.m * g.n), std::vector<long double>(g.m * g.n)};
  const auto alpha = static_cast<long double>(g.alpha);
  const auto beta = static_cast<long double>(g.beta);
  for (std::size_t i = 0; i < g.m; ++i) {
    for (std::size_t j = 0; j < g.n; ++j) {
      long double sum = 0;
      long double magnitude = 0;
      if (g.alpha != 0) {
        for (std::size_t p = 0; p < g.k; ++p) {
          const auto x = static_cast<long double>(a(i, p)) * static_cast<long double>(b(p, j));
          sum += x;
          magnitude += std::fabs(x);
        }
      }
      long double value = alpha * sum;
      long double scale = std::fabs(alpha) * magnitude;
      if (g.beta != 0) {
        value += beta * static_cast<long double>(c0(i, j));
        scale += std::fabs(beta) * std::fabs(static_cast<long double>(c0(i, j)));
      }
      o.expected[i * g.n + j] = value;
      o.bound[i * g.n + j] = static_cast<long double>(g.k + 8) * u * scale;
    }
  }
  return o;
}

// Number of elements of c outside the bound (exact comparison when exact); the first one is
// described in *first.
template <class C>
std::size_t mismatches(const gemm_case& g, const C& c, const oracle& o, bool exact,
                       std::string* first) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < g.m; ++i) {
    for (std::size_t j = 0; j < g.n; ++j) {
      const auto got = static_cast<long double>(c(i, j));
      const long double want = o.expected[i * g.n + j];
      const bool ok = exact ? got == want : std::fabs(got - want) <= o.bound[i * g.n + j];
      if (!ok && count++ == 0 && first != nullptr) {
        std::ostringstream out;
        out << "C(" << i << ", " << j << ") = " << static_cast<double>(got) << ", expected "
            << static_cast<double>(want) << " +- " << static_cast<double>(o.bound[i * g.n + j]);
        *first = out.str();
      }
    }
  }
  return count;
}

template <class T>
constexpr long double unit_roundoff() {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<long double>(std::numeric_limits<T>::epsilon()) / 2;
  } else {
    return 0;
  }
}

// Runs portable_gemm in launch shape Shape on one case and compares with the oracle. Returns the
// number of mismatches; C is copied row by row into *result when asked for.
template <class ExecutionSpace, class T, class SA, class SB, class SC,
          ordo::detail::launch_shape Shape = ordo::detail::default_launch_shape_v<ExecutionSpace>>
std::size_t run_case(const gemm_case& g, values kind, std::uint64_t seed,
                     std::vector<T>* result = nullptr) {
  // The oracle uses alpha and beta as given: they must be values of T.
  REQUIRE(static_cast<double>(static_cast<T>(g.alpha)) == g.alpha);
  REQUIRE(static_cast<double>(static_cast<T>(g.beta)) == g.beta);
  random_stream random{seed};
  const T c_padding = T(77);
  test_matrix<ExecutionSpace, T, SA> a(g.m, g.k, T(0));
  test_matrix<ExecutionSpace, T, SB> b(g.k, g.n, T(0));
  test_matrix<ExecutionSpace, T, SC> c(g.m, g.n, c_padding);
  for (std::size_t i = 0; i < g.m; ++i) {
    for (std::size_t p = 0; p < g.k; ++p)
      a(i, p) = g.nan_in_ab ? quiet_nan<T>() : draw<T>(random, kind);
  }
  for (std::size_t p = 0; p < g.k; ++p) {
    for (std::size_t j = 0; j < g.n; ++j)
      b(p, j) = g.nan_in_ab ? quiet_nan<T>() : draw<T>(random, kind);
  }
  std::vector<T> c0(g.m * g.n);
  for (std::size_t i = 0; i < g.m; ++i) {
    for (std::size_t j = 0; j < g.n; ++j) {
      c(i, j) = g.nan_in_c ? quiet_nan<T>() : draw<T>(random, kind);
      c0[i * g.n + j] = c(i, j);
    }
  }
  a.to_device();
  b.to_device();
  c.to_device();

  // A and B as views of const, as callers holding read-only operands pass them.
  const Kokkos::View<const T**, typename SA::layout, typename ExecutionSpace::memory_space,
                     Kokkos::MemoryUnmanaged>
      a_const = a.view;
  const Kokkos::View<const T**, typename SB::layout, typename ExecutionSpace::memory_space,
                     Kokkos::MemoryUnmanaged>
      b_const = b.view;
  const ExecutionSpace space;
  ordo::detail::portable_gemm<Shape>(space, static_cast<T>(g.alpha), a_const, b_const,
                                     static_cast<T>(g.beta), c.view);
  space.fence();
  c.to_host();
  if (result != nullptr) {
    result->clear();
    for (std::size_t i = 0; i < g.m; ++i) {
      for (std::size_t j = 0; j < g.n; ++j) result->push_back(c(i, j));
    }
  }

  const auto c0_at = [&](std::size_t i, std::size_t j) { return c0[i * g.n + j]; };
  const oracle o = reference(g, a, b, c0_at, unit_roundoff<T>());
  const bool exact = std::is_integral_v<T> || kind == values::integers;
  std::string first;
  const std::size_t bad = mismatches(g, c, o, exact, &first);
  std::ostringstream description;
  description << "m = " << g.m << ", n = " << g.n << ", k = " << g.k << ", alpha = " << g.alpha
              << ", beta = " << g.beta << ", layouts A " << SA::name << ", B " << SB::name << ", C "
              << SC::name << ", "
              << (Shape == ordo::detail::launch_shape::host ? "host" : "device") << " shape"
              << (g.nan_in_c ? ", NaN in C" : "")
              << (g.nan_in_ab ? ", NaN in A and B" : "") << ": " << first;
  INFO(description.str());
  CHECK(bad == 0);
  CHECK(c.padding_is(c_padding));
  return bad;
}

template <class SA, class SB, class SC>
struct layouts {
  using a = SA;
  using b = SB;
  using c = SC;
};
using layout_combinations = boost::mp11::mp_list<
    layouts<left, left, left>, layouts<right, right, right>, layouts<left, right, left>,
    layouts<right, left, right>, layouts<strided_left, strided_right, left>,
    layouts<right, strided_left, strided_right>, layouts<strided_right, left, strided_left>>;

// Odd and rectangular shapes, plus shapes one past the tile sizes of this space: more than one
// block of rows (mc), of columns (nc) and more than one kc-deep slice, alone and in pairs.
// Every type runs all of them in some layout combination and the core ones in every combination
// (layouts matter only where the kernel reads A and B and writes C; edges and blocks do not
// depend on them).
enum class coverage { all, core };

template <class ExecutionSpace, class T>
std::vector<gemm_case> shapes(double alpha, double beta, coverage which = coverage::all) {
  using tiling = ordo::detail::gemm_tiling<ExecutionSpace, T>;
  const auto mc = static_cast<std::size_t>(tiling::mc);
  const auto nc = static_cast<std::size_t>(tiling::nc);
  const auto kc = static_cast<std::size_t>(tiling::kc);
  const std::size_t core[][3] = {{1, 1, 1},           {7, 130, 31},        {65, 33, 129},
                                 {mc + 1, nc + 1, 3}, {mc + 1, 3, kc + 2}, {3, nc + 1, kc + 2}};
  const std::size_t more[][3] = {{2, 2, 2},      {7, 7, 7},      {31, 31, 31},    {33, 33, 33},
                                 {64, 64, 64},   {65, 65, 65},   {130, 130, 130}, {1, 300, 1},
                                 {300, 1, 2},    {2, 3, 300},    {130, 7, 33},    {33, 65, 1},
                                 {mc + 1, 5, 7}, {5, nc + 3, 7}, {7, 5, kc + 2}};
  std::vector<gemm_case> cases;
  for (const auto& d : core) cases.push_back({d[0], d[1], d[2], alpha, beta});
  if (which == coverage::all) {
    for (const auto& d : more) cases.push_back({d[0], d[1], d[2], alpha, beta});
  }
  return cases;
}

// Runs `run(case)` on the shapes of T: all of them for the combination numbered `full`, the core
// ones for the others.
template <class ExecutionSpace, class T, class F>
void for_each_shape(std::size_t combination, std::size_t full, double alpha, double beta, F&& run) {
  for (const gemm_case& g : shapes<ExecutionSpace, T>(
           alpha, beta, combination == full ? coverage::all : coverage::core)) {
    run(g);
  }
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE(
    "portable_gemm matches a long double triple loop within the dot-product "
    "error bound, for odd shapes and every layout combination",
    ExecutionSpace, gemm_floating_id) {
  std::uint64_t seed = 1;
  std::size_t index = 0;
  boost::mp11::mp_for_each<layout_combinations>([&](auto combination) {
    using combo = decltype(combination);
    using sa = typename combo::a;
    using sb = typename combo::b;
    using sc = typename combo::c;
    for_each_shape<ExecutionSpace, double>(index, 0, 1.5, -0.75, [&](const gemm_case& g) {
      run_case<ExecutionSpace, double, sa, sb, sc>(g, values::uniform, ++seed);
    });
    for_each_shape<ExecutionSpace, float>(index, 1, -0.5, 2.0, [&](const gemm_case& g) {
      run_case<ExecutionSpace, float, sa, sb, sc>(g, values::uniform, ++seed);
    });
    ++index;
  });
}
ORDO_TEST_ALL_SPACES(gemm_floating_id);

TEST_CASE_TEMPLATE_DEFINE("portable_gemm is exact on integers and integer-valued floating point",
                          ExecutionSpace, gemm_exact_id) {
  std::uint64_t seed = 1000;
  std::size_t index = 0;
  boost::mp11::mp_for_each<layout_combinations>([&](auto combination) {
    using combo = decltype(combination);
    using sa = typename combo::a;
    using sb = typename combo::b;
    using sc = typename combo::c;
    for_each_shape<ExecutionSpace, std::int64_t>(index, 2, 2, -3, [&](const gemm_case& g) {
      run_case<ExecutionSpace, std::int64_t, sa, sb, sc>(g, values::integers, ++seed);
    });
    for_each_shape<ExecutionSpace, int>(index, 3, -1, 1, [&](const gemm_case& g) {
      run_case<ExecutionSpace, int, sa, sb, sc>(g, values::integers, ++seed);
    });
    for_each_shape<ExecutionSpace, double>(index, 4, 1, 0, [&](const gemm_case& g) {
      run_case<ExecutionSpace, double, sa, sb, sc>(g, values::integers, ++seed);
    });
    ++index;
  });
  // Integer sums of up to 300 products of [-4, 4] stay far below 2^24: exact in float too.
  for (const gemm_case& g : shapes<ExecutionSpace, float>(3, 2)) {
    run_case<ExecutionSpace, float, left, right, left>(g, values::integers, ++seed);
  }
  // long double exists only on the host.
  if constexpr (ordo::is_host_space_v<ExecutionSpace>) {
    for (const gemm_case& g : shapes<ExecutionSpace, long double>(-2, 0.5)) {
      run_case<ExecutionSpace, long double, right, left, right>(g, values::integers, ++seed);
    }
  }
}
ORDO_TEST_ALL_SPACES(gemm_exact_id);

TEST_CASE_TEMPLATE_DEFINE("portable_gemm on every shape with m, n, k in {0, 1, 2, 3, 7}",
                          ExecutionSpace, gemm_small_id) {
  const std::size_t sizes[] = {0, 1, 2, 3, 7};
  std::uint64_t seed = 5000;
  for (const std::size_t m : sizes) {
    for (const std::size_t n : sizes) {
      for (const std::size_t k : sizes) {
        run_case<ExecutionSpace, double, left, right, left>({m, n, k, 1.25, -2.0}, values::uniform,
                                                            ++seed);
        run_case<ExecutionSpace, std::int64_t, right, left, strided_right>(
            {m, n, k, 3, 5}, values::integers, ++seed);
        // beta == 0 over NaN: C is written, never read.
        run_case<ExecutionSpace, double, right, right, right>({m, n, k, -1.0, 0.0, true},
                                                              values::uniform, ++seed);
      }
    }
  }
}
ORDO_TEST_ALL_SPACES(gemm_small_id);

TEST_CASE_TEMPLATE_DEFINE("portable_gemm follows BLAS for alpha == 0, beta == 0 and k == 0",
                          ExecutionSpace, gemm_blas_id) {
  std::uint64_t seed = 9000;
  const std::size_t square[] = {1, 7, 65, 130};
  SUBCASE("beta == 0: NaN in C does not propagate") {
    for (const std::size_t s : square) {
      run_case<ExecutionSpace, double, left, left, left>({s, s, s, 1.0, 0.0, true}, values::uniform,
                                                         ++seed);
      run_case<ExecutionSpace, float, right, left, strided_left>({s, s + 2, s, 2.5, 0.0, true},
                                                                 values::uniform, ++seed);
    }
  }
  SUBCASE("alpha == 0: A and B are not read, C = beta * C") {
    for (const std::size_t s : square) {
      run_case<ExecutionSpace, double, left, right, left>({s, s, s, 0.0, -1.5, false, true},
                                                          values::uniform, ++seed);
      run_case<ExecutionSpace, float, left, left, right>({s, 3, s, 0.0, 0.5, false, true},
                                                         values::uniform, ++seed);
    }
  }
  SUBCASE("alpha == 0 and beta == 0: C = 0 even over NaN in A, B and C") {
    for (const std::size_t s : square) {
      run_case<ExecutionSpace, double, left, left, left>({s, s, s, 0.0, 0.0, true, true},
                                                         values::uniform, ++seed);
    }
  }
  SUBCASE("alpha == 0 and beta == 1: C is left as it is") {
    for (const std::size_t s : square) {
      run_case<ExecutionSpace, double, right, right, left>({s, s, s, 0.0, 1.0, false, true},
                                                           values::uniform, ++seed);
    }
  }
  SUBCASE("k == 0: C = beta * C, and C = 0 when beta == 0 even over NaN") {
    for (const std::size_t s : square) {
      run_case<ExecutionSpace, double, left, left, left>({s, s, 0, 2.0, -0.5}, values::uniform,
                                                         ++seed);
      run_case<ExecutionSpace, double, left, left, right>({s, s + 1, 0, 2.0, 0.0, true},
                                                          values::uniform, ++seed);
      run_case<ExecutionSpace, std::int64_t, right, left, left>({s, s, 0, 4, 3}, values::integers,
                                                                ++seed);
    }
  }
  SUBCASE("m == 0 or n == 0: nothing to compute") {
    for (const std::size_t s : square) {
      run_case<ExecutionSpace, double, left, left, left>({0, s, s, 1.0, 1.0}, values::uniform,
                                                         ++seed);
      run_case<ExecutionSpace, double, right, right, right>({s, 0, s, 1.0, 0.0}, values::uniform,
                                                            ++seed);
    }
  }
}
ORDO_TEST_ALL_SPACES(gemm_blas_id);

TEST_CASE_TEMPLATE_DEFINE(
    "portable_gemm with several blocks of rows and columns and several "
    "slices of k at once",
    ExecutionSpace, gemm_blocks_id) {
  using tiling = ordo::detail::gemm_tiling<ExecutionSpace, double>;
  const gemm_case g{static_cast<std::size_t>(tiling::mc + 1),
                    static_cast<std::size_t>(tiling::nc + 3),
                    static_cast<std::size_t>(tiling::kc + 2), 0.75, 1.25};
  run_case<ExecutionSpace, double, left, left, left>(g, values::uniform, 77);
  gemm_case integer = g;
  integer.alpha = 3;
  integer.beta = -2;
  run_case<ExecutionSpace, std::int64_t, right, strided_left, right>(integer, values::integers, 78);
}
ORDO_TEST_ALL_SPACES(gemm_blocks_id);

TEST_CASE("the oracle's comparison detects one missing product and an off-by-one integer") {
  // A check that cannot fail proves nothing: drop one term of one element and the comparison
  // must report exactly that element.
  const gemm_case g{33, 31, 300, 1.0, 0.5};
  random_stream random{42};
  std::vector<double> a(g.m * g.k), b(g.k * g.n), c0(g.m * g.n);
  for (double& x : a) x = random.uniform();
  for (double& x : b) x = random.uniform();
  for (double& x : c0) x = random.uniform();
  const auto at = [](const std::vector<double>& v, std::size_t columns) {
    return [&v, columns](std::size_t i, std::size_t j) { return v[i * columns + j]; };
  };
  const oracle o = reference(g, at(a, g.k), at(b, g.n), at(c0, g.n), unit_roundoff<double>());
  std::vector<double> c(g.m * g.n);
  for (std::size_t e = 0; e < c.size(); ++e) c[e] = static_cast<double>(o.expected[e]);
  CHECK(mismatches(g, at(c, g.n), o, false, nullptr) == 0);

  std::vector<double> dropped = c;
  dropped[5 * g.n + 7] -= g.alpha * a[5 * g.k + 123] * b[123 * g.n + 7];
  CHECK(mismatches(g, at(dropped, g.n), o, false, nullptr) == 1);

  std::vector<double> off_by_one = c;
  for (double& x : off_by_one) x = std::round(x * 8);  // integer-valued
  oracle exact = o;
  for (std::size_t e = 0; e < c.size(); ++e)
    exact.expected[e] = static_cast<long double>(off_by_one[e]);
  CHECK(mismatches(g, at(off_by_one, g.n), exact, true, nullptr) == 0);
  off_by_one[3] += 1;
  CHECK(mismatches(g, at(off_by_one, g.n), exact, true, nullptr) == 1);
}

TEST_CASE_TEMPLATE_DEFINE("portable_gemm's tiles divide into micro-tiles, and whole tiles compute exactly",
                          ExecutionSpace, tiling_id) {
  const auto check_type = [](auto zero) {
    using T = decltype(zero);
    using tiling = ordo::detail::gemm_tiling<ExecutionSpace, T>;
    static_assert(tiling::mc % tiling::mr == 0 && tiling::nc % tiling::nr == 0);
    static_assert(tiling::team_size >= 1 && tiling::kc >= 1 && tiling::mr >= 1 && tiling::nr >= 1);
    // At run time, on sizes the compiler cannot see: exactly one block of mc x nc with one
    // kc-deep slice, where every micro-tile is full, then two blocks each way and two slices,
    // integer-valued so that any misplaced or missing micro-tile shows exactly.
    volatile std::size_t mc = tiling::mc, nc = tiling::nc, kc = tiling::kc;
    CAPTURE(mc);
    CAPTURE(nc);
    CAPTURE(kc);
    CHECK(run_case<ExecutionSpace, T, left, right, left>({mc, nc, kc, 1, 0}, values::integers, 31) == 0);
    CHECK(run_case<ExecutionSpace, T, right, left, right>({2 * mc, 2 * nc, 2 * kc, -2, 1}, values::integers, 32) == 0);
  };
  check_type(0.0);
  check_type(0.0f);
  check_type(std::int64_t{0});
}
ORDO_TEST_ALL_SPACES(tiling_id);

namespace {

// Bitwise equality of two results, read as values: long double has padding bytes, and every NaN
// counts as the same (the kernels only propagate them).
template <class T>
bool same_bits(const T& x, const T& y) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
    return x == y && std::signbit(x) == std::signbit(y);
  } else {
    return x == y;
  }
}

// Runs one case in both launch shapes on the same inputs; each must pass the oracle, and the two
// C must be bitwise equal (both shapes add the products of each element in k order and update C
// once per gemm_slice_depth; see portable_gemm.hpp).
template <class ExecutionSpace, class T, class SA, class SB, class SC>
void check_shapes_agree(const gemm_case& g, values kind, std::uint64_t seed) {
  using ordo::detail::launch_shape;
  std::vector<T> host, device;
  run_case<ExecutionSpace, T, SA, SB, SC, launch_shape::host>(g, kind, seed, &host);
  run_case<ExecutionSpace, T, SA, SB, SC, launch_shape::device>(g, kind, seed, &device);
  REQUIRE(host.size() == device.size());
  std::size_t different = 0, first = 0;
  for (std::size_t e = 0; e < host.size(); ++e) {
    if (!same_bits(host[e], device[e]) && different++ == 0) first = e;
  }
  std::ostringstream description;
  description << "m = " << g.m << ", n = " << g.n << ", k = " << g.k << ", layouts A " << SA::name
              << ", B " << SB::name << ", C " << SC::name
              << ": first difference at row-major element " << first;
  INFO(description.str());
  CHECK(different == 0);
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE(
    "portable_gemm's device launch shape gives the host shape's bits, in every layout",
    ExecutionSpace, gemm_shapes_id) {
  if constexpr (!ordo::is_host_space_v<ExecutionSpace>) {
    // On a device the device shape is the default one, which every other test here runs; the
    // host shape is for host spaces only (one thread per team, 1 MiB of scratch).
    MESSAGE("launch-shape comparison runs on host spaces only");
  } else {
    using device_tiling = ordo::detail::gemm_tiling<ExecutionSpace, double, ordo::detail::launch_shape::device>;
    using host_tiling = ordo::detail::gemm_tiling<ExecutionSpace, double, ordo::detail::launch_shape::host>;
    const auto dm = static_cast<std::size_t>(device_tiling::mc);
    const auto dk = static_cast<std::size_t>(device_tiling::kc);
    const auto slice = static_cast<std::size_t>(ordo::detail::gemm_slice_depth<double>);
    const auto hm = static_cast<std::size_t>(host_tiling::mc);
    const auto hn = static_cast<std::size_t>(host_tiling::nc);
    // Non-multiples of both shapes' tiles, whole device tiles, 1 x K times K x 1, several slices
    // of k (one past a slice, and a partial last stage), and empty products.
    const std::size_t sizes[][3] = {
        {1, 1, 1},          {1, 1, 2 * slice + 3}, {2 * slice + 1, 3, 1},   {3, 2 * slice + 1, 1},
        {dm, dm, dk},       {dm + 1, dm - 1, dk + 1}, {2 * dm, dm + 3, slice + 1},
        {7, 130, 31},       {65, 33, 129},          {hm + 1, 5, slice},       {5, hn + 1, dk - 1},
        {0, 5, 3},          {5, 0, 3},              {4, 6, 0},                {0, 0, 0}};
    std::uint64_t seed = 20000;
    for (const auto& d : sizes) {
      const gemm_case g{d[0], d[1], d[2], 1.5, -0.75};
      check_shapes_agree<ExecutionSpace, double, right, right, right>(g, values::uniform, ++seed);
      check_shapes_agree<ExecutionSpace, double, left, left, left>(g, values::uniform, ++seed);
      check_shapes_agree<ExecutionSpace, float, right, left, strided_left>(
          {d[0], d[1], d[2], -0.5, 2.0}, values::uniform, ++seed);
      check_shapes_agree<ExecutionSpace, float, strided_left, strided_right, strided_right>(
          {d[0], d[1], d[2], 1.0, 0.0}, values::uniform, ++seed);
      check_shapes_agree<ExecutionSpace, std::int64_t, left, strided_left, right>(
          {d[0], d[1], d[2], 3, -2}, values::integers, ++seed);
    }
    // BLAS's special cases: beta == 0 over NaN in C, alpha == 0 over NaN in A and B, and k == 0.
    const std::size_t special[] = {1, dm + 1, 2 * slice + 1};
    for (const std::size_t s : special) {
      check_shapes_agree<ExecutionSpace, double, left, right, left>({s, 9, s, -1.0, 0.0, true},
                                                                   values::uniform, ++seed);
      check_shapes_agree<ExecutionSpace, double, right, left, right>(
          {s, 9, s, 0.0, 0.5, false, true}, values::uniform, ++seed);
      check_shapes_agree<ExecutionSpace, double, right, right, strided_left>(
          {s, 9, 0, 2.0, 0.0, true}, values::uniform, ++seed);
    }
    // long double exists only on the host.
    check_shapes_agree<ExecutionSpace, long double, right, left, right>(
        {dm + 1, 2 * dm + 1, slice + dk + 1, 1.25, 0.5}, values::uniform, ++seed);
  }
}
ORDO_TEST_ALL_SPACES(gemm_shapes_id);

TEST_CASE("portable_gemm's device shape stages fit a GPU team's default shared memory") {
  using exec = Kokkos::DefaultHostExecutionSpace;
  const auto staged = [](auto zero) {
    using T = decltype(zero);
    using view = Kokkos::View<T**, Kokkos::LayoutLeft, exec::memory_space>;
    using kernel = ordo::detail::portable_gemm_device_kernel<exec, view, view, view>;
    return kernel::scratch_bytes();
  };
  // 48 KiB is what a CUDA block may use without opting in; HIP offers 64 KiB.
  CHECK(staged(0.0) <= static_cast<std::size_t>(48 * 1024));
  CHECK(staged(0.0f) <= static_cast<std::size_t>(48 * 1024));
  CHECK(staged(std::int64_t{0}) <= static_cast<std::size_t>(48 * 1024));
  // The stages are the padded kc x mc and kc x nc tiles, nothing more.
  using tiling = ordo::detail::gemm_tiling<exec, double, ordo::detail::launch_shape::device>;
  CHECK(staged(0.0) >= static_cast<std::size_t>(tiling::kc * (tiling::mc + tiling::nc)) * sizeof(double));
  CHECK(tiling::team_size == 256);
}

// ---- 16-bit storage: A, B and C of ordo::half or ordo::bfloat16, multiply-add in float, each
// element of C rounded once. The bits must be those of the float GEMM of the widened operands in
// the same launch shape (the same products in the same k order) rounded to the 16-bit type, and
// every element within half a 16-bit spacing plus the float dot-product bound of the long double
// result:
//   |C - C_exact| <= spacing(C) / 2 + (k + 8) u_float (|alpha| (|A||B|)_ij + |beta| |C0_ij|).
// precision<float, double> does the same for float data accumulated in double.

namespace {

template <class S>
long double spacing_at(long double v) {
  int e = 0;
  (void)std::frexp(v, &e);
  return std::ldexp(1.0L, std::max(e, std::numeric_limits<S>::min_exponent) - std::numeric_limits<S>::digits);
}

template <class Storage, class Compute, class ExecutionSpace, class CLayout, ordo::detail::launch_shape Shape,
          class ALayout = Kokkos::LayoutLeft, class BLayout = Kokkos::LayoutRight>
void check_narrow_storage(std::size_t m, std::size_t k, std::size_t n, Compute alpha, Compute beta, std::uint64_t seed) {
  CAPTURE(m);
  CAPTURE(k);
  CAPTURE(n);
  CAPTURE(static_cast<double>(alpha));
  CAPTURE(static_cast<double>(beta));
  using memory = typename ExecutionSpace::memory_space;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  Kokkos::View<Storage**, ALayout, memory> a("a", m, k);
  Kokkos::View<Storage**, BLayout, memory> b("b", k, n);
  Kokkos::View<Storage**, CLayout, memory> c("c", m, n);
  Kokkos::View<Compute**, ALayout, memory> wa("wa", m, k);
  Kokkos::View<Compute**, BLayout, memory> wb("wb", k, n);
  Kokkos::View<Compute**, CLayout, memory> wc("wc", m, n);
  const auto ha = Kokkos::create_mirror_view(a);
  const auto hb = Kokkos::create_mirror_view(b);
  const auto hc = Kokkos::create_mirror_view(c);
  const auto hwa = Kokkos::create_mirror_view(wa);
  const auto hwb = Kokkos::create_mirror_view(wb);
  const auto hwc = Kokkos::create_mirror_view(wc);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t p = 0; p < k; ++p) {
      ha(i, p) = Storage(d(rng));
      hwa(i, p) = static_cast<Compute>(ha(i, p));
    }
  }
  for (std::size_t p = 0; p < k; ++p) {
    for (std::size_t j = 0; j < n; ++j) {
      hb(p, j) = Storage(d(rng));
      hwb(p, j) = static_cast<Compute>(hb(p, j));
    }
  }
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      hc(i, j) = Storage(d(rng));
      hwc(i, j) = static_cast<Compute>(hc(i, j));
    }
  }
  const auto c0 = Kokkos::create_mirror(c);
  Kokkos::deep_copy(c0, hc);
  Kokkos::deep_copy(a, ha);
  Kokkos::deep_copy(b, hb);
  Kokkos::deep_copy(c, hc);
  Kokkos::deep_copy(wa, hwa);
  Kokkos::deep_copy(wb, hwb);
  Kokkos::deep_copy(wc, hwc);
  ordo::detail::portable_gemm<Shape, Compute>(ExecutionSpace(), alpha, a, b, beta, c);
  ordo::detail::portable_gemm<Shape>(ExecutionSpace(), alpha, wa, wb, beta, wc);
  ExecutionSpace().fence();
  Kokkos::deep_copy(hc, c);
  Kokkos::deep_copy(hwc, wc);
  const long double u = std::ldexp(1.0L, -std::numeric_limits<Compute>::digits);
  std::size_t rounded_once = 0, within = 0;
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      long double exact = 0, magnitude = 0;
      for (std::size_t p = 0; p < k; ++p) {
        const long double product = static_cast<long double>(static_cast<float>(ha(i, p))) *
                                    static_cast<long double>(static_cast<float>(hb(p, j)));
        exact += product;
        magnitude += std::fabs(product);
      }
      const long double initial = static_cast<float>(c0(i, j));
      const long double reference = static_cast<long double>(alpha) * exact + static_cast<long double>(beta) * initial;
      const long double got = static_cast<float>(hc(i, j));
      const long double bound =
          spacing_at<Storage>(std::max(std::fabs(got), std::fabs(reference))) / 2 +
          static_cast<long double>(k + 8) * u *
              (std::fabs(static_cast<long double>(alpha)) * magnitude + std::fabs(static_cast<long double>(beta) * initial));
      if (std::fabs(got - reference) <= bound) ++within;
      const auto once = static_cast<Storage>(hwc(i, j));
      if (std::memcmp(&once, &hc(i, j), sizeof once) == 0) ++rounded_once;
    }
  }
  CHECK(rounded_once == m * n);
  CHECK(within == m * n);
}

template <class Storage, class Compute, class ExecutionSpace>
void check_narrow_storage_cases() {
  using ordo::detail::launch_shape;
  const auto slice = static_cast<std::size_t>(ordo::detail::gemm_slice_depth<Compute>);
  // Several slices of k, blocks of both shapes with short edges, a single element, k == 0.
  const std::size_t sizes[][3] = {{37, 2 * slice + 5, 29}, {70, 17, 130}, {1, 1, 1}, {5, 0, 3}, {65, slice, 3}};
  std::uint64_t seed = 40000;
  const std::pair<Compute, Compute> scalings[] = {{Compute(1), Compute(0)}, {Compute(0.75), Compute(-0.5)}};
  for (const auto& s : sizes) {
    for (const auto& [alpha, beta] : scalings) {
      if constexpr (ordo::is_host_space_v<ExecutionSpace>) {  // one thread per team, 1 MiB of scratch
        // 16-bit GEMMs run the host kernel compiled and tiled for the instruction set chosen at
        // run time (portable_gemm.hpp); each level must give the bits of the float GEMM, which
        // runs the build's own code.
        using ordo::detail::cpu_capability;
        const cpu_capability before = ordo::detail::host_capability();
        for (const cpu_capability level : {cpu_capability::baseline, cpu_capability::avx2, cpu_capability::avx512}) {
          const std::string level_name = ordo::detail::to_string(level);
          CAPTURE(level_name);
          if (ordo::detail::set_host_capability(level) != level) continue;  // not in this build or CPU
          // Operands read along rows of B and columns of A, and along rows of A and columns of B.
          check_narrow_storage<Storage, Compute, ExecutionSpace, Kokkos::LayoutRight, launch_shape::host>(
              s[0], s[1], s[2], alpha, beta, seed + 1);
          check_narrow_storage<Storage, Compute, ExecutionSpace, Kokkos::LayoutLeft, launch_shape::host,
                               Kokkos::LayoutRight, Kokkos::LayoutLeft>(s[0], s[1], s[2], alpha, beta, seed + 1);
        }
        ordo::detail::set_host_capability(before);
        ++seed;
      }
      check_narrow_storage<Storage, Compute, ExecutionSpace, Kokkos::LayoutLeft, launch_shape::device>(s[0], s[1], s[2], alpha,
                                                                                                        beta, ++seed);
    }
  }
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("16-bit storage: float multiply-adds, one rounding on store, in both launch shapes",
                          ExecutionSpace, gemm_narrow_id) {
  check_narrow_storage_cases<ordo::half, float, ExecutionSpace>();
  check_narrow_storage_cases<ordo::bfloat16, float, ExecutionSpace>();
  // Float data accumulated in double: precision<float, double>.
  check_narrow_storage_cases<float, double, ExecutionSpace>();
  static_assert(std::is_same_v<ordo::detail::gemm_scalar_t<ordo::half>, float>);
  static_assert(std::is_same_v<ordo::detail::gemm_scalar_t<ordo::bfloat16>, float>);
  static_assert(std::is_same_v<ordo::detail::gemm_scalar_t<double>, double>);
}
ORDO_TEST_ALL_SPACES(gemm_narrow_id);
