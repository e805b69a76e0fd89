#include <ordo/kernels/gemm.hpp>

#include "support/execution_spaces.hpp"
#include "support/kokkos_tools_recorder.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// ordo::gemm's choice between BLAS, cuBLAS and the portable kernel (docs/evaluation.md, "ordo::gemm"):
// how ordo::detail::describe_for_blas sees a View, what gemm computes on column-major, row-major,
// strided and subview operands, and the errors of a forced backend that cannot serve a call.
// portable_gemm_test.cpp tests the portable kernel itself.

namespace {

// ---- describe_for_blas against the column-major definition ----
//
// Column-major BLAS reads an m x n matrix M with leading dimension ld >= max(1, m) at
// M(i, j) = data[i + j * ld]. A View is usable as M itself (transposed == false) or as the
// transpose of an n x m column-major matrix (transposed == true, View(i, j) = data[i * ld + j]).
// The expectations below are written from that definition, one View at a time.

struct expected_operand {
  bool usable;
  bool transposed;
  int ld;
};

// Every element of a usable View lies where BLAS will read it.
template <class View>
bool addresses_follow(const View& v, const ordo::detail::blas_operand& d) {
  const auto ld = static_cast<std::size_t>(d.ld);
  for (std::size_t i = 0; i < v.extent(0); ++i) {
    for (std::size_t j = 0; j < v.extent(1); ++j) {
      const auto* expected = v.data() + (d.transposed ? i * ld + j : i + j * ld);
      if (&v(i, j) != expected) return false;
    }
  }
  return true;
}

template <class View>
void check_description(const char* what, const View& v, expected_operand expected) {
  const std::string view = what;
  CAPTURE(view);
  const ordo::detail::blas_operand d = ordo::detail::describe_for_blas(v);
  CHECK(d.usable == expected.usable);
  if (expected.usable && d.usable) {
    CHECK(d.transposed == expected.transposed);
    CHECK(d.ld == expected.ld);
    CHECK(d.ld >= std::max<std::size_t>(1, d.transposed ? v.extent(1) : v.extent(0)));
    CHECK(addresses_follow(v, d));
  }
}

template <class Layout>
using host_view = Kokkos::View<double**, Layout, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;

}  // namespace

TEST_CASE("describe_for_blas: LayoutLeft, LayoutRight, LayoutStride and subviews as column-major BLAS reads them") {
  std::vector<double> storage(1000);
  double* const p = storage.data();
  using Kokkos::LayoutLeft;
  using Kokkos::LayoutRight;
  using Kokkos::LayoutStride;

  check_description("LayoutLeft 3x4", host_view<LayoutLeft>(p, 3, 4), {true, false, 3});
  check_description("LayoutRight 3x4", host_view<LayoutRight>(p, 3, 4), {true, true, 4});
  check_description("LayoutLeft 1x5", host_view<LayoutLeft>(p, 1, 5), {true, false, 1});
  // One column: column-major with ld = rows. (Read as the transpose of a 1x5 it would serve too;
  // where both readings serve, the expected one is the untransposed.)
  check_description("LayoutRight 5x1", host_view<LayoutRight>(p, 5, 1), {true, false, 5});
  check_description("LayoutStride 3x4, strides 1 and 7: column-major, ld 7",
                    host_view<LayoutStride>(p, LayoutStride(3, 1, 4, 7)), {true, false, 7});
  check_description("LayoutStride 3x4, strides 9 and 1: row-major, ld 9",
                    host_view<LayoutStride>(p, LayoutStride(3, 9, 4, 1)), {true, true, 9});
  check_description("LayoutStride 3x4, strides 2 and 6: no unit stride",
                    host_view<LayoutStride>(p, LayoutStride(3, 2, 4, 6)), {false, false, 0});
  check_description("LayoutStride 4x3, strides 1 and 2: columns overlap (ld 2 < 4 rows)",
                    host_view<LayoutStride>(p, LayoutStride(4, 1, 3, 2)), {false, false, 0});
  check_description("LayoutStride 3x4, strides 2 and 1: rows overlap (ld 2 < 4 columns)",
                    host_view<LayoutStride>(p, LayoutStride(3, 2, 4, 1)), {false, false, 0});
  check_description("LayoutStride 1x1, strides 5 and 7: a single element",
                    host_view<LayoutStride>(p, LayoutStride(1, 5, 1, 7)), {true, false, 1});

  const host_view<LayoutLeft> left(p, 10, 8);
  const host_view<LayoutRight> right(p, 10, 8);
  check_description("rows 2..5, columns 1..4 of a LayoutLeft 10x8",
                    Kokkos::subview(left, std::pair(2, 6), std::pair(1, 5)), {true, false, 10});
  check_description("rows 2..5, columns 3..7 of a LayoutRight 10x8",
                    Kokkos::subview(right, std::pair(2, 6), std::pair(3, 8)), {true, true, 8});
  check_description("column 2 of a LayoutRight 10x8 (10x1, strides 8 and 1)",
                    Kokkos::subview(right, Kokkos::ALL, std::pair(2, 3)), {true, true, 8});
  check_description("row 3 of a LayoutLeft 10x8 (1x8, strides 1 and 10)",
                    Kokkos::subview(left, std::pair(3, 4), Kokkos::ALL), {true, false, 10});
  check_description("every second row of a LayoutRight 10x8 as a LayoutStride 5x8 (strides 16 and 1)",
                    host_view<LayoutStride>(p, LayoutStride(5, 16, 8, 1)), {true, true, 16});

  // Beyond BLAS' int: more than INT_MAX rows, or a leading dimension beyond INT_MAX. The Views
  // point at nothing: only their extents and strides are read.
  const auto beyond = static_cast<std::size_t>(INT_MAX) + 1;
  check_description("LayoutLeft with INT_MAX + 1 rows", host_view<LayoutLeft>(nullptr, beyond, 1), {false, false, 0});
  check_description("LayoutStride 2x2 with ld INT_MAX + 1", host_view<LayoutStride>(nullptr, LayoutStride(2, 1, 2, beyond)),
                    {false, false, 0});
}

namespace {

// ---- gemm on operands of many layouts ----

// Storage of a rows x columns operand in a 1-D buffer: where element (i, j) lives, how many
// elements the buffer needs, the View ordo::gemm is given, and whether BLAS can read it (from
// the table above: each kind is one of the layouts checked there).
struct column_major {
  static constexpr const char* name = "LayoutLeft";
  static constexpr bool blas_usable = true;
  static std::size_t span(std::size_t r, std::size_t c) { return r * c; }
  static std::size_t offset(std::size_t i, std::size_t j, std::size_t r, std::size_t) { return i + j * r; }
  template <class T, class Memory>
  static auto view(T* data, std::size_t r, std::size_t c) {
    return Kokkos::View<T**, Kokkos::LayoutLeft, Memory, Kokkos::MemoryUnmanaged>(data, r, c);
  }
};
struct row_major {
  static constexpr const char* name = "LayoutRight";
  static constexpr bool blas_usable = true;
  static std::size_t span(std::size_t r, std::size_t c) { return r * c; }
  static std::size_t offset(std::size_t i, std::size_t j, std::size_t, std::size_t c) { return i * c + j; }
  template <class T, class Memory>
  static auto view(T* data, std::size_t r, std::size_t c) {
    return Kokkos::View<T**, Kokkos::LayoutRight, Memory, Kokkos::MemoryUnmanaged>(data, r, c);
  }
};
// Rows 1.. and columns 2.. of a LayoutLeft (r + 3) x (c + 2).
struct left_subview {
  static constexpr const char* name = "subview of LayoutLeft";
  static constexpr bool blas_usable = true;
  static std::size_t span(std::size_t r, std::size_t c) { return (r + 3) * (c + 2); }
  static std::size_t offset(std::size_t i, std::size_t j, std::size_t r, std::size_t) { return (i + 1) + (j + 2) * (r + 3); }
  template <class T, class Memory>
  static auto view(T* data, std::size_t r, std::size_t c) {
    const Kokkos::View<T**, Kokkos::LayoutLeft, Memory, Kokkos::MemoryUnmanaged> parent(data, r + 3, c + 2);
    return Kokkos::subview(parent, std::pair<std::size_t, std::size_t>(1, r + 1),
                           std::pair<std::size_t, std::size_t>(2, c + 2));
  }
};
// Rows 2.. and columns 1.. of a LayoutRight (r + 2) x (c + 5).
struct right_subview {
  static constexpr const char* name = "subview of LayoutRight";
  static constexpr bool blas_usable = true;
  static std::size_t span(std::size_t r, std::size_t c) { return (r + 2) * (c + 5); }
  static std::size_t offset(std::size_t i, std::size_t j, std::size_t, std::size_t c) { return (i + 2) * (c + 5) + j + 1; }
  template <class T, class Memory>
  static auto view(T* data, std::size_t r, std::size_t c) {
    const Kokkos::View<T**, Kokkos::LayoutRight, Memory, Kokkos::MemoryUnmanaged> parent(data, r + 2, c + 5);
    return Kokkos::subview(parent, std::pair<std::size_t, std::size_t>(2, r + 2),
                           std::pair<std::size_t, std::size_t>(1, c + 1));
  }
};
// Row-major with padded rows, as a LayoutStride.
struct padded_rows {
  static constexpr const char* name = "LayoutStride, row-major, ld = columns + 3";
  static constexpr bool blas_usable = true;
  static std::size_t span(std::size_t r, std::size_t c) { return r * (c + 3); }
  static std::size_t offset(std::size_t i, std::size_t j, std::size_t, std::size_t c) { return i * (c + 3) + j; }
  template <class T, class Memory>
  static auto view(T* data, std::size_t r, std::size_t c) {
    return Kokkos::View<T**, Kokkos::LayoutStride, Memory, Kokkos::MemoryUnmanaged>(data, Kokkos::LayoutStride(r, c + 3, c, 1));
  }
};
// Every second element in both directions: no unit stride, BLAS cannot read it as a matrix; a row
// or a column with stride 2 is a BLAS vector (increment 2), or a matrix with ld 2.
struct no_unit_stride {
  static constexpr const char* name = "LayoutStride, strides 2 and 2 * rows";
  static bool blas_usable_for(std::size_t r, std::size_t c) { return r <= 1 || c <= 1; }
  static std::size_t span(std::size_t r, std::size_t c) { return 2 * r * c; }
  static std::size_t offset(std::size_t i, std::size_t j, std::size_t r, std::size_t) { return 2 * i + 2 * r * j; }
  template <class T, class Memory>
  static auto view(T* data, std::size_t r, std::size_t c) {
    return Kokkos::View<T**, Kokkos::LayoutStride, Memory, Kokkos::MemoryUnmanaged>(data, Kokkos::LayoutStride(r, 2, c, 2 * r));
  }
};

// A rows x columns operand of kind Storage in ExecutionSpace's memory, filled on the host.
template <class ExecutionSpace, class T, class Storage>
struct operand {
  using memory = typename ExecutionSpace::memory_space;
  std::size_t rows, columns;
  Kokkos::View<T*, memory> buffer;
  typename Kokkos::View<T*, memory>::HostMirror host;
  operand(std::size_t r, std::size_t c, std::mt19937_64& rng)
      : rows(r), columns(c), buffer("operand", Storage::span(r, c)), host(Kokkos::create_mirror_view(buffer)) {
    std::uniform_int_distribution<int> small(-4, 4);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    for (std::size_t e = 0; e < host.extent(0); ++e) {
      host(e) = std::is_integral_v<T> ? static_cast<T>(small(rng)) : static_cast<T>(uniform(rng));
    }
    Kokkos::deep_copy(buffer, host);
  }
  auto view() const { return Storage::template view<T, memory>(buffer.data(), rows, columns); }
  T at(std::size_t i, std::size_t j) const { return host(Storage::offset(i, j, rows, columns)); }
  void to_host() { Kokkos::deep_copy(host, buffer); }
};

template <class T>
long double unit_roundoff() {
  return std::is_integral_v<T> ? 0.0L : static_cast<long double>(std::numeric_limits<T>::epsilon()) / 2;
}

// The backend of the last product announced to Kokkos Tools ("ordo::gemm MxKxN backend").
std::string last_backend(const std::vector<std::string>& regions) {
  for (auto it = regions.rbegin(); it != regions.rend(); ++it) {
    if (it->rfind("ordo::gemm ", 0) == 0) return it->substr(it->rfind(' ') + 1);
  }
  return "none";
}

// One gemm call is one product: exactly one region, even when a backend declines the layouts.
std::size_t gemm_region_count(const std::vector<std::string>& regions) {
  std::size_t count = 0;
  for (const std::string& r : regions) count += r.rfind("ordo::gemm ", 0) == 0 ? 1 : 0;
  return count;
}

constexpr bool blas_build =
#if defined(ORDO_HAS_BLAS)
    true;
#else
    false;
#endif
constexpr bool automatic_is_portable =
#if defined(ORDO_FORCE_PORTABLE_GEMM)
    true;
#else
    false;
#endif
constexpr bool cublas_build =
#if defined(ORDO_HAS_CUBLAS)
    true;
#else
    false;
#endif

template <class ExecutionSpace>
constexpr bool is_cuda() {
#if defined(KOKKOS_ENABLE_CUDA)
  return std::is_same_v<ExecutionSpace, Kokkos::Cuda>;
#else
  return false;
#endif
}

// C = alpha A B + beta C on operands of the given kinds, against a long double triple loop within
// (k + 8) u (|alpha| |A| |B| + |beta| |C|) elementwise (exact for integers); returns the backend
// gemm announced last.
// The vector routine gemm announced inside its product region ("ordo::gemv", "ordo::dot"), or "".
std::string vector_routine(const std::vector<std::string>& regions) {
  std::string routine;
  for (const std::string& r : regions) {
    if (r == "ordo::gemv" || r == "ordo::dot" || r == "ordo::ger") routine = r;
  }
  return routine;
}

template <class ExecutionSpace, class T, class SA, class SB, class SC>
std::string run_gemm(ordo::gemm_backend backend, std::uint64_t seed, std::size_t m = 37, std::size_t k = 29,
                     std::size_t n = 23, T beta = T(-2)) {
  const std::string layouts = std::string("A ") + SA::name + ", B " + SB::name + ", C " + SC::name;
  CAPTURE(layouts);
  const std::string requested_backend(ordo::to_string(backend));
  CAPTURE(requested_backend);
  CAPTURE(m);
  CAPTURE(k);
  CAPTURE(n);
  const T alpha = T(3);
  CAPTURE(beta);
  std::mt19937_64 rng(seed);
  operand<ExecutionSpace, T, SA> a(m, k, rng);
  operand<ExecutionSpace, T, SB> b(k, n, rng);
  operand<ExecutionSpace, T, SC> c(m, n, rng);
  std::vector<T> before(c.host.extent(0));  // the whole buffer, padding included, before the call
  for (std::size_t e = 0; e < before.size(); ++e) before[e] = c.host(e);
  std::string announced;
  {
    ordo_test::kokkos_tools_recorder recorder;
    ordo::gemm(ExecutionSpace(), alpha, a.view(), b.view(), beta, c.view(), backend);
    ExecutionSpace().fence();
    announced = last_backend(recorder.regions());
    CHECK(gemm_region_count(recorder.regions()) == 1);
    // A C with one row or one column is a matrix-vector product on every backend; a 1 x 1 C of
    // doubles is BLAS's DOT.
    const bool vector_shape = (m == 1 || n == 1) && m > 0 && n > 0 && k > 0;
    const bool dot = m == 1 && n == 1 && announced == "blas" && std::is_same_v<T, double>;
    // An outer product (k = 1) with beta 0 or 1 is BLAS's GER.
    const bool ger = k == 1 && m > 1 && n > 1 && announced == "blas" && (beta == T(0) || beta == T(1));
    CHECK(vector_routine(recorder.regions()) ==
          (ger ? "ordo::ger" : !vector_shape ? "" : dot ? "ordo::dot" : "ordo::gemv"));
  }
  c.to_host();
  std::vector<bool> inside(before.size(), false);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t at = SC::offset(i, j, m, n);
      inside[at] = true;
      long double sum = 0, scale = 0;
      for (std::size_t p = 0; p < k; ++p) {
        const long double x = static_cast<long double>(a.at(i, p)) * static_cast<long double>(b.at(p, j));
        sum += x;
        scale += std::fabs(x);
      }
      const long double c_before = static_cast<long double>(before[at]);
      const long double want = static_cast<long double>(alpha) * sum + static_cast<long double>(beta) * c_before;
      const long double bound = static_cast<long double>(k + 8) * unit_roundoff<T>() *
                                (std::fabs(static_cast<long double>(alpha)) * scale +
                                 std::fabs(static_cast<long double>(beta)) * std::fabs(c_before));
      if (!(std::fabs(static_cast<long double>(c.at(i, j)) - want) <= bound)) ++wrong;
    }
  }
  CAPTURE(announced);
  CHECK(wrong == 0);
  // Outside C the buffer is untouched.
  std::size_t touched = 0;
  for (std::size_t e = 0; e < before.size(); ++e) touched += !inside[e] && !(c.host(e) == before[e]);
  CHECK(touched == 0);
  return announced;
}

// The backend gemm(automatic) must run for these operands (docs/evaluation.md): BLAS on a host
// space for float or double when all three operands have a unit stride and BLAS was found,
// cuBLAS likewise on Kokkos::Cuda, the portable kernel otherwise.
template <class Storage>
bool blas_readable(std::size_t r, std::size_t c) {
  if constexpr (requires { Storage::blas_usable_for(r, c); }) {
    return Storage::blas_usable_for(r, c);
  } else {
    return Storage::blas_usable;
  }
}

template <class ExecutionSpace, class T, class SA, class SB, class SC>
std::string expected_automatic(std::size_t m = 37, std::size_t k = 29, std::size_t n = 23) {
  const bool blas_scalar = std::is_same_v<T, float> || std::is_same_v<T, double>;
  const bool readable = blas_readable<SA>(m, k) && blas_readable<SB>(k, n) && blas_readable<SC>(m, n);
  if (automatic_is_portable || !blas_scalar || !readable) return "portable";
  if (ordo::is_host_space_v<ExecutionSpace> && blas_build) return "blas";
  if (is_cuda<ExecutionSpace>() && cublas_build) return "cublas";
  return "portable";
}

template <class ExecutionSpace, class T, class SA, class SB, class SC>
void check_layouts(std::uint64_t seed) {
  CHECK(run_gemm<ExecutionSpace, T, SA, SB, SC>(ordo::gemm_backend::automatic, seed) ==
        expected_automatic<ExecutionSpace, T, SA, SB, SC>());
  CHECK(run_gemm<ExecutionSpace, T, SA, SB, SC>(ordo::gemm_backend::portable, seed + 1) == "portable");
  // Matrix-vector (C a column or a row), dot (1 x 1) and outer products (k = 1), long enough that
  // the 16 lanes of the portable GEMV wrap several times.
  for (const auto& [m, k, n] : {std::array<std::size_t, 3>{37, 290, 1}, std::array<std::size_t, 3>{1, 290, 23},
                                std::array<std::size_t, 3>{1, 290, 1}, std::array<std::size_t, 3>{37, 1, 23},
                                std::array<std::size_t, 3>{1, 7, 1}}) {
    CHECK(run_gemm<ExecutionSpace, T, SA, SB, SC>(ordo::gemm_backend::automatic, seed + 2, m, k, n) ==
          expected_automatic<ExecutionSpace, T, SA, SB, SC>(m, k, n));
    CHECK(run_gemm<ExecutionSpace, T, SA, SB, SC>(ordo::gemm_backend::portable, seed + 3, m, k, n) == "portable");
  }
  // Outer products with beta 0 (C is cleared, not read) and 1 (C is added to).
  for (const T beta : {T(0), T(1)}) {
    CHECK(run_gemm<ExecutionSpace, T, SA, SB, SC>(ordo::gemm_backend::automatic, seed + 4, 37, 1, 23, beta) ==
          expected_automatic<ExecutionSpace, T, SA, SB, SC>(37, 1, 23));
  }
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("gemm on column-major, row-major, strided and subview operands matches a long double "
                          "triple loop, through BLAS exactly where BLAS can read all three",
                          ExecutionSpace, layouts_id) {
  std::uint64_t seed = 1;
  const auto all_kinds = [&](auto zero) {
    using T = decltype(zero);
    check_layouts<ExecutionSpace, T, column_major, column_major, column_major>(seed += 2);
    check_layouts<ExecutionSpace, T, row_major, column_major, row_major>(seed += 2);
    check_layouts<ExecutionSpace, T, left_subview, right_subview, column_major>(seed += 2);
    check_layouts<ExecutionSpace, T, padded_rows, left_subview, right_subview>(seed += 2);
    check_layouts<ExecutionSpace, T, right_subview, padded_rows, left_subview>(seed += 2);
    check_layouts<ExecutionSpace, T, no_unit_stride, column_major, row_major>(seed += 2);
    check_layouts<ExecutionSpace, T, column_major, row_major, no_unit_stride>(seed += 2);
  };
  all_kinds(0.0);
  all_kinds(0.0f);
  all_kinds(std::int64_t{0});
}
ORDO_TEST_ALL_SPACES(layouts_id);

namespace {
// The messages of a forced backend that cannot serve the call (include/ordo/kernels/gemm.hpp).
const char* const blas_refused =
    "ordo::gemm: the BLAS backend needs a host space, float or double, layouts with a unit stride, and a build "
    "that found BLAS (ORDO_HAS_BLAS)";
const char* const cublas_refused =
    "ordo::gemm: the cuBLAS backend needs Kokkos::Cuda, float or double, and a build with ORDO_HAS_CUBLAS";
}  // namespace

TEST_CASE_TEMPLATE_DEFINE("a forced BLAS or cuBLAS backend that cannot serve the call throws std::invalid_argument",
                          ExecutionSpace, forced_id) {
  using memory = typename ExecutionSpace::memory_space;
  std::mt19937_64 rng(5);
  const std::size_t m = 6, k = 5, n = 4;
  operand<ExecutionSpace, double, column_major> a(m, k, rng);
  operand<ExecutionSpace, double, column_major> b(k, n, rng);
  operand<ExecutionSpace, double, column_major> c(m, n, rng);
  operand<ExecutionSpace, std::int64_t, column_major> ia(m, k, rng), ib(k, n, rng), ic(m, n, rng);
  const Kokkos::View<double*, memory> strided_buffer("strided", no_unit_stride::span(m, k));
  const auto a_strided = no_unit_stride::view<double, memory>(strided_buffer.data(), m, k);
  const ExecutionSpace space;

  // Layouts BLAS cannot read and scalars it has no routine for are refused in every build.
  for (const auto backend : {ordo::gemm_backend::blas, ordo::gemm_backend::cublas}) {
    const char* message = backend == ordo::gemm_backend::blas ? blas_refused : cublas_refused;
    const std::string requested(ordo::to_string(backend));
    CAPTURE(requested);
    CHECK_THROWS_WITH_AS(ordo::gemm(space, 1.0, a_strided, b.view(), 0.0, c.view(), backend), message,
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(ordo::gemm(space, std::int64_t{1}, ia.view(), ib.view(), std::int64_t{0}, ic.view(), backend),
                         message, std::invalid_argument);
  }

  // Readable double operands: BLAS serves them on a host space of a build with BLAS, cuBLAS on
  // Kokkos::Cuda in a build with cuBLAS; everything else is refused.
  if (ordo::is_host_space_v<ExecutionSpace> && blas_build) {
    CHECK(run_gemm<ExecutionSpace, double, column_major, row_major, left_subview>(ordo::gemm_backend::blas, 7) == "blas");
  } else {
    CHECK_THROWS_WITH_AS(ordo::gemm(space, 1.0, a.view(), b.view(), 0.0, c.view(), ordo::gemm_backend::blas),
                         blas_refused, std::invalid_argument);
  }
  if (is_cuda<ExecutionSpace>() && cublas_build) {
    CHECK(run_gemm<ExecutionSpace, double, column_major, row_major, left_subview>(ordo::gemm_backend::cublas, 8) ==
          "cublas");
  } else {
    CHECK_THROWS_WITH_AS(ordo::gemm(space, 1.0, a.view(), b.view(), 0.0, c.view(), ordo::gemm_backend::cublas),
                         cublas_refused, std::invalid_argument);
  }
}
ORDO_TEST_ALL_SPACES(forced_id);

namespace {

// The portable GEMV's summation order, written out: term l of a dot product goes to lane l mod 16,
// each lane adds its terms in order in Compute, the lanes are added in lane order, and
// alpha * dot + beta * y is rounded once to T.
template <class T, class Compute>
std::vector<T> gemv_in_lane_order(const std::vector<T>& m, const std::vector<T>& x, const std::vector<T>& y,
                                  std::size_t rows, std::size_t depth, Compute alpha, Compute beta) {
  std::vector<T> out(rows);
  for (std::size_t i = 0; i < rows; ++i) {
    Compute lanes[16] = {};
    for (std::size_t l = 0; l < depth; ++l) {
      lanes[l % 16] += static_cast<Compute>(m[i * depth + l]) * static_cast<Compute>(x[l]);
    }
    Compute dot = lanes[0];
    for (int lane = 1; lane < 16; ++lane) dot += lanes[lane];
    out[i] = static_cast<T>(beta == Compute(0) ? alpha * dot : alpha * dot + beta * static_cast<Compute>(y[i]));
  }
  return out;
}

template <ordo::detail::launch_shape Shape, bool Transpose, class ExecutionSpace, class T>
std::vector<T> run_portable_gemv(const std::vector<T>& m, const std::vector<T>& x, const std::vector<T>& y,
                                 std::size_t rows, std::size_t depth, T alpha, T beta) {
  using memory = typename ExecutionSpace::memory_space;
  // Transpose: the matrix is stored depth x rows and read by columns.
  const std::size_t r = Transpose ? depth : rows, c = Transpose ? rows : depth;
  Kokkos::View<T**, Kokkos::LayoutRight, memory> mv("m", r, c);
  Kokkos::View<T*, memory> xv("x", depth), yv("y", rows);
  auto mh = Kokkos::create_mirror_view(mv);
  auto xh = Kokkos::create_mirror_view(xv);
  auto yh = Kokkos::create_mirror_view(yv);
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t l = 0; l < depth; ++l) {
      if (Transpose) {
        mh(l, i) = m[i * depth + l];
      } else {
        mh(i, l) = m[i * depth + l];
      }
    }
    yh(i) = y[i];
  }
  for (std::size_t l = 0; l < depth; ++l) xh(l) = x[l];
  Kokkos::deep_copy(mv, mh);
  Kokkos::deep_copy(xv, xh);
  Kokkos::deep_copy(yv, yh);
  ordo::detail::portable_gemv<Shape, T, Transpose>(ExecutionSpace(), alpha, mv, xv, beta, yv);
  Kokkos::deep_copy(yh, yv);
  std::vector<T> out(rows);
  for (std::size_t i = 0; i < rows; ++i) out[i] = yh(i);
  return out;
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("portable GEMV: both launch shapes sum in the documented lane order, bit for bit",
                          ExecutionSpace, gemv_shapes_id) {
  using ordo::detail::launch_shape;
  std::mt19937_64 rng(41);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (const auto& shape : {std::pair<std::size_t, std::size_t>{1, 1}, {3, 15}, {17, 16}, {33, 17}, {40, 300},
                             {1, 1000}, {5, 0}}) {
    // Named copies, not structured bindings: clang 14 cannot capture those in CAPTURE's lambda.
    const std::size_t rows = shape.first, depth = shape.second;
    CAPTURE(rows);
    CAPTURE(depth);
    std::vector<float> m(rows * depth), x(depth), y(rows);
    for (auto& v : m) v = d(rng);
    for (auto& v : x) v = d(rng);
    for (auto& v : y) v = d(rng);
    for (const float beta : {0.0f, -0.75f}) {
      CAPTURE(beta);
      const auto expected = gemv_in_lane_order<float, float>(m, x, y, rows, depth, 1.5f, beta);
      const std::vector<float> results[] = {
          run_portable_gemv<launch_shape::host, false, ExecutionSpace>(m, x, y, rows, depth, 1.5f, beta),
          run_portable_gemv<launch_shape::device, false, ExecutionSpace>(m, x, y, rows, depth, 1.5f, beta),
          run_portable_gemv<launch_shape::host, true, ExecutionSpace>(m, x, y, rows, depth, 1.5f, beta),
          run_portable_gemv<launch_shape::device, true, ExecutionSpace>(m, x, y, rows, depth, 1.5f, beta)};
      if constexpr (ordo::is_host_space_v<ExecutionSpace>) {
        for (const auto& result : results) CHECK(result == expected);
      } else {
        // nvcc contracts lane += m * x into fused multiply-adds (its default, docs/gpu.md): the
        // lane order holds, each term's rounding does not. Within a depth-term dot product's
        // bound of the long double value instead (Higham, Lemma 3.4), both shapes alike.
        const long double u = std::numeric_limits<float>::epsilon() / 2.0L;
        for (const auto& result : results) {
          std::size_t outside = 0;
          for (std::size_t i = 0; i < rows; ++i) {
            long double exact = 0, magnitude = 0;
            for (std::size_t l = 0; l < depth; ++l) {
              const long double term = static_cast<long double>(m[i * depth + l]) * x[l];
              exact += term;
              magnitude += std::fabs(term);
            }
            const long double want = 1.5L * exact + static_cast<long double>(beta) * y[i];
            const long double bound =
                static_cast<long double>(depth + 3) * u * (1.5L * magnitude + std::fabs(beta * y[i])) + u * std::fabs(want);
            if (std::fabs(static_cast<long double>(result[i]) - want) > bound) ++outside;
          }
          CHECK(outside == 0);
        }
      }
    }
  }
}
ORDO_TEST_ALL_SPACES(gemv_shapes_id);
