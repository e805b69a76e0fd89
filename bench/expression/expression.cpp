// Products written with `*` (issue 17) against peers, double precision, on the same inputs:
//   blas           hand-ordered OpenBLAS: dgemv_/dger_/dgemm_ calls in the best order, written by hand
//                  for each case (for the two chains: in the order of ordo::plan_chain(dims), the
//                  CLRS optimum), transposes as BLAS flags; intermediates and the result allocated
//                  (uninitialized) inside the timed region, as a user would (the floor);
//   blas_into      the same into a result allocated once beforehand;
//   blas_hugepages (diagnostic) blas with buffers of 4 MiB and more advised MADV_HUGEPAGE;
//   ordo           `auto r = ordo::evaluate(ordo::transpose(h) * h * x);` on ordo::matrix<double,
//                  dynamic, dynamic, Kokkos::OpenMP> and ordo::vector<double, dynamic, ...>: planned
//                  at evaluation, OpenBLAS calls (gemm_backend::automatic);
//   ordo_static    the same expression on matrices whose every extent is static: planned at
//                  compile time;
//   ordo_into      `ordo::evaluate(expression, r)` (dynamic extents) into r allocated beforehand;
//   eigen          Eigen 3.4 `MatrixXd r = ...;` (left to right, Eigen's own kernels, OpenMP);
//   eigen_noalias  Eigen 3.4 `r.noalias() = ...;` into r allocated beforehand;
//   armadillo      Armadillo `mat r = ...;` (reorders 3 and 4 operands, OpenBLAS).
// numpy (`@` chained and numpy.linalg.multi_dot) is timed by numpy_expression.py on the same
// cases; bench/expression/run runs both and writes the table.
//
//   bench_expression [--seed S] [--cases a,b] [--contenders a,b] [--rounds 3] [--rotate 0]
//                    [--block-seconds 0.25] [--settle-seconds 0.3] [--min-reps 3] [--max-reps 2000]
//                    [--out-dir DIR]
//
// Prints one JSON document on stdout; with --out-dir it also writes each case's reference result
// (blas's, row-major float64) as DIR/<case>.f64 for numpy_expression.py. Threads come from the
// environment (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS); run sets both to 2, and Eigen gets
// Eigen::setNbThreads(2). Timing is bench/chain_eval's: per round and contender a pause, a
// warm-up, then timed runs until --min-reps runs and --block-seconds.

#include "bench_support.hpp"
#include "expression_bench.hpp"

#include <ordo/expression.hpp>

#include <Kokkos_Core.hpp>

#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#if !defined(ORDO_HAS_BLAS)
#error "bench_expression needs ordo built with BLAS (ORDO_HAS_BLAS); install libopenblas-dev"
#endif

// dgemm_ and dgemv_ come with ordo's BLAS adapters; these two are OpenBLAS extensions, for the report.
extern "C" int openblas_get_num_threads(void);
extern "C" char* openblas_get_config(void);

namespace expression_bench {

const operand& case_data::at(std::string_view wanted) const {
  for (const operand& o : operands) {
    if (o.name == wanted) return o;
  }
  throw std::invalid_argument("bench_expression: case " + name + " has no operand " + std::string(wanted));
}

namespace {

// ---- the cases -------------------------------------------------------------------------------

struct operand_spec {
  const char* name;
  std::size_t rows, cols;
};

struct case_spec {
  const char* formula;
  std::vector<operand_spec> operands;
  std::vector<std::size_t> dims;
};

case_spec spec_of(const std::string& name) {
  if (name == "hth_x") return {"Hᵀ·H·x", {{"H", n, n}, {"x", n, 1}}, {n, n, n, 1}};
  if (name == "hty_xth") return {"Hᵀ·y·xᵀ·H", {{"H", n, n}, {"y", n, 1}, {"x", n, 1}}, {n, n, 1, n, n}};
  if (name == "m_a_b") return {"M·A·B", {{"M", n, m}, {"A", m, n}, {"B", n, m}}, {n, m, n, m}};
  if (name == "a_b_m") return {"A·B·M", {{"A", n, n}, {"B", n, n}, {"M", n, m}}, {n, n, n, m}};
  if (name == "a_m1_m2_b") {
    return {"A·M1·M2·B", {{"A", n, n}, {"M1", n, m}, {"M2", m, n}, {"B", n, n}}, {n, n, m, n, n}};
  }
  static const std::array<const char*, 16> names{"A1", "A2",  "A3",  "A4",  "A5",  "A6",  "A7",  "A8",
                                                 "A9", "A10", "A11", "A12", "A13", "A14", "A15", "A16"};
  const auto chain = [&](const char* formula, std::span<const std::size_t> d) {
    case_spec s{formula, {}, {d.begin(), d.end()}};
    for (std::size_t k = 0; k + 1 < d.size(); ++k) s.operands.push_back({names[k], d[k], d[k + 1]});
    return s;
  };
  if (name == "clrs_x10") return chain("A1·A2·…·A6", clrs_dims);
  if (name == "random_16") return chain("A1·A2·…·A16", random_dims);
  throw std::invalid_argument("bench_expression: unknown case " + name);
}

}  // namespace

case_data make_case(const std::string& name, std::uint64_t seed) {
  const auto index = static_cast<std::uint64_t>(std::find(case_names.begin(), case_names.end(), name) - case_names.begin());
  const case_spec spec = spec_of(name);
  case_data c{name, spec.formula, {}, spec.dims};
  for (std::size_t k = 0; k < spec.operands.size(); ++k) {
    const operand_spec& o = spec.operands[k];
    const std::uint64_t stream = operand_stream(seed, index, k);
    std::vector<double> values(o.rows * o.cols);
    for (std::size_t e = 0; e < values.size(); ++e) values[e] = input_value(stream, e, o.cols);
    c.operands.push_back({o.name, o.rows, o.cols, std::move(values)});
  }
  return c;
}

namespace {

using ordo_bench::split;

struct options {
  std::uint64_t seed = 20240601;
  std::vector<std::string> cases;       // empty: all
  std::vector<std::string> contenders;  // empty: all
  int rounds = 3;
  int rotate = 0;
  double block_seconds = 0.25;
  double settle_seconds = 0.3;
  int min_reps = 3;
  int max_reps = 2000;
  std::string out_dir;
};

[[noreturn]] void usage(const std::string& what) {
  std::fprintf(stderr, "bench_expression: %s\n", what.c_str());
  std::exit(2);
}

options parse(int argc, char** argv) {
  options opt;
  try {
    ordo_bench::for_each_option(argc, argv, [&](std::string_view arg, const std::string& value) {
      if (arg == "--seed") opt.seed = std::stoull(value);
      else if (arg == "--cases") opt.cases = split(value);
      else if (arg == "--contenders") opt.contenders = split(value);
      else if (arg == "--rounds") opt.rounds = std::stoi(value);
      else if (arg == "--rotate") opt.rotate = std::stoi(value);
      else if (arg == "--block-seconds") opt.block_seconds = std::stod(value);
      else if (arg == "--settle-seconds") opt.settle_seconds = std::stod(value);
      else if (arg == "--min-reps") opt.min_reps = std::stoi(value);
      else if (arg == "--max-reps") opt.max_reps = std::stoi(value);
      else if (arg == "--out-dir") opt.out_dir = value;
      else throw std::invalid_argument("unknown option " + std::string(arg));
    });
  } catch (const std::exception& e) {
    usage(e.what());
  }
  if (opt.rounds < 1 || opt.min_reps < 1 || opt.max_reps < opt.min_reps) usage("need rounds >= 1, 1 <= min-reps <= max-reps");
  return opt;
}

bool selected(const std::vector<std::string>& list, const std::string& name) {
  return list.empty() || std::find(list.begin(), list.end(), name) != list.end();
}

// ---- hand-ordered OpenBLAS: the floor --------------------------------------------------------

// Row-major C (rows x cols) = op(A) op(B), inner extent k, leading dimensions as stored. A
// row-major matrix is its column-major transpose: C^T = op(B)^T op(A)^T.
void gemm_rm(bool ta, bool tb, std::size_t rows, std::size_t cols, std::size_t k, const double* a, std::size_t lda,
             const double* b, std::size_t ldb, double* c, std::size_t ldc) {
  const int m_ = static_cast<int>(cols), n_ = static_cast<int>(rows), k_ = static_cast<int>(k);
  const int la = static_cast<int>(lda), lb = static_cast<int>(ldb), lc = static_cast<int>(ldc);
  const double one = 1.0, zero = 0.0;
  dgemm_(tb ? "T" : "N", ta ? "T" : "N", &m_, &n_, &k_, &one, b, &lb, a, &la, &zero, c, &lc);
}

// y = op(A) x for A stored row-major rows x cols.
void gemv_rm(bool t, std::size_t rows, std::size_t cols, const double* a, const double* x, double* y) {
  const int r = static_cast<int>(cols), c = static_cast<int>(rows), inc = 1;
  const double one = 1.0, zero = 0.0;
  dgemv_(t ? "N" : "T", &r, &c, &one, a, &r, x, &inc, &zero, y, &inc);
}

struct free_deleter {
  void operator()(double* p) const noexcept { std::free(p); }
};
using buffer = std::unique_ptr<double[], free_deleter>;

// Uninitialized elements from malloc, as `new double[n]` or std::make_unique_for_overwrite gives
// them; with huge_pages (the diagnostic contender), buffers of 4 MiB and more are 2 MiB-aligned
// and advised MADV_HUGEPAGE, as numpy's allocator does: on this machine a first touch costs about
// 20 us per 4 KiB page.
buffer uninitialized_buffer(std::size_t elements, bool huge_pages = false) {
  const std::size_t bytes = std::max<std::size_t>(elements, 1) * sizeof(double);
  constexpr std::size_t huge = std::size_t{2} << 20;
  if (!huge_pages || bytes < 2 * huge) return buffer(static_cast<double*>(std::malloc(bytes)));
  const std::size_t rounded = (bytes + huge - 1) / huge * huge;
  auto* p = static_cast<double*>(std::aligned_alloc(huge, rounded));
  if (p != nullptr) madvise(p, rounded, MADV_HUGEPAGE);
  return buffer(p);
}

// The hand-written order of each case, into `result` (rows x cols of the case's product, row-major);
// the intermediates are allocated here.
void blas_product(const case_data& c, const std::vector<ordo::planned_product>& plan, double* result,
                  bool huge_pages = false) {
  const auto uninitialized_buffer = [huge_pages](std::size_t elements) {
    return expression_bench::uninitialized_buffer(elements, huge_pages);
  };
  const auto data = [&](const char* name) { return c.at(name).values.data(); };
  if (c.name == "hth_x") {
    // H^T (H x): two GEMVs.
    buffer t = uninitialized_buffer(n);
    gemv_rm(false, n, n, data("H"), data("x"), t.get());
    gemv_rm(true, n, n, data("H"), t.get(), result);
  } else if (c.name == "hty_xth") {
    // (H^T y)(x^T H) = u v^T with u = H^T y and v = H^T x: two GEMVs, then the outer product as
    // a cleared result and GER (faster here than DGEMM with k = 1); row-major r is column-major
    // r^T = v u^T.
    buffer u = uninitialized_buffer(n), v = uninitialized_buffer(n);
    gemv_rm(true, n, n, data("H"), data("y"), u.get());
    gemv_rm(true, n, n, data("H"), data("x"), v.get());
    std::memset(result, 0, n * n * sizeof(double));
    const int nn = static_cast<int>(n), inc = 1;
    const double one = 1.0;
    dger_(&nn, &nn, &one, v.get(), &inc, u.get(), &inc, result, &nn);
  } else if (c.name == "m_a_b") {
    // M (A B): A B is m x m.
    buffer t = uninitialized_buffer(m * m);
    gemm_rm(false, false, m, m, n, data("A"), n, data("B"), m, t.get(), m);
    gemm_rm(false, false, n, m, m, data("M"), m, t.get(), m, result, m);
  } else if (c.name == "a_b_m") {
    // A (B M): B M is n x m.
    buffer t = uninitialized_buffer(n * m);
    gemm_rm(false, false, n, m, n, data("B"), n, data("M"), m, t.get(), m);
    gemm_rm(false, false, n, m, n, data("A"), n, t.get(), m, result, m);
  } else if (c.name == "a_m1_m2_b") {
    // (A M1)(M2 B): n x m times m x n.
    buffer t1 = uninitialized_buffer(n * m), t2 = uninitialized_buffer(m * n);
    gemm_rm(false, false, n, m, n, data("A"), n, data("M1"), m, t1.get(), m);
    gemm_rm(false, false, m, n, n, data("M2"), n, data("B"), n, t2.get(), n);
    gemm_rm(false, false, n, n, m, t1.get(), m, t2.get(), n, result, n);
  } else {
    // A chain: the planned products in order, each into its own buffer (the root into result).
    const std::size_t k = c.operands.size();
    std::vector<const double*> node(2 * k - 1, nullptr);
    std::vector<buffer> owned(2 * k - 1);
    for (std::size_t i = 0; i < k; ++i) node[i] = c.operands[i].values.data();
    for (std::size_t p = 0; p < plan.size(); ++p) {
      const ordo::planned_product& step = plan[p];
      double* out = result;
      if (p + 1 < plan.size()) {
        owned[k + p] = uninitialized_buffer(step.rows * step.cols);
        out = owned[k + p].get();
      }
      gemm_rm(false, false, step.rows, step.cols, step.inner, node[step.left], step.inner, node[step.right], step.cols,
              out, step.cols);
      owned[step.left].reset();
      owned[step.right].reset();
      node[k + p] = out;
    }
  }
}

std::vector<contender> make_blas(const case_data& c, const ordo::chain_plan<ordo::dynamic>& plan) {
  struct state {
    const case_data* c;
    std::vector<ordo::planned_product> plan;
    std::size_t elements;
    buffer result, preallocated, huge;
  };
  const std::size_t elements = c.dims.front() * c.dims.back();
  auto s = std::make_shared<state>(
      state{&c, {plan.products().begin(), plan.products().end()}, elements, nullptr, uninitialized_buffer(elements), nullptr});
  std::fill_n(s->preallocated.get(), elements, 0.0);
  const auto values = [s](const buffer& b) { return std::vector<double>(b.get(), b.get() + s->elements); };
  contender fresh{"blas",
                  [s] {
                    buffer r = uninitialized_buffer(s->elements);
                    blas_product(*s->c, s->plan, r.get());
                    s->result = std::move(r);
                  },
                  [s, values] { return values(s->result); }};
  contender into{"blas_into", [s] { blas_product(*s->c, s->plan, s->preallocated.get()); },
                 [s, values] { return values(s->preallocated); }};
  contender huge{"blas_hugepages",
                 [s] {
                   buffer r = uninitialized_buffer(s->elements, true);
                   blas_product(*s->c, s->plan, r.get(), true);
                   s->huge = std::move(r);
                 },
                 [s, values] { return values(s->huge); }};
  return {std::move(fresh), std::move(into), std::move(huge)};
}

// ---- ordo ------------------------------------------------------------------------------------

using space = Kokkos::OpenMP;

// A Rows x Cols matrix, with static extents when Static.
template <bool Static, std::size_t Rows, std::size_t Cols>
using matrix_t = ordo::matrix<double, Static ? Rows : ordo::dynamic, Static ? Cols : ordo::dynamic, space>;
template <bool Static, std::size_t N>
using vector_t = ordo::vector<double, Static ? N : ordo::dynamic, space>;

template <class M>
M to_ordo(const operand& o) {
  using shape = ordo::shape_of_t<M>;
  M mat = [&] {
    if constexpr (shape::is_static) {
      return M(ordo::uninitialized);
    } else if constexpr (shape::dynamic_extent_count == 2) {
      return M(ordo::uninitialized, o.rows, o.cols);
    } else {
      return M(ordo::uninitialized, o.rows);
    }
  }();
  if (mat.rows() != o.rows || mat.cols() != o.cols) throw std::logic_error("bench_expression: " + o.name + " mis-sized");
  for (std::size_t i = 0; i < o.rows; ++i) {
    for (std::size_t j = 0; j < o.cols; ++j) mat(i, j) = o.values[i * o.cols + j];
  }
  return mat;
}

template <class M>
std::vector<double> values_of(const M& r) {
  return row_major_copy(r.rows(), r.cols(), [&](std::size_t i, std::size_t j) { return r(i, j); });
}

// The contenders of one spelling: product(operands) is the ordo expression (built inside the
// timed region, as a user's `auto r = ordo::evaluate(a * b * c);` builds it).
template <bool Static, class Operands, class Product>
std::vector<contender> ordo_contenders(Operands operands, Product product, std::string& order) {
  using expression_type = decltype(product(operands));
  using result_type = typename expression_type::result_type;
  if constexpr (Static) {
    static_assert(expression_type::is_static, "bench_expression: the static spelling must plan at compile time");
    order = std::string(expression_type::order());
  }
  struct state {
    Operands operands;
    std::optional<result_type> result;
    std::optional<result_type> preallocated;
  };
  auto s = std::make_shared<state>(state{std::move(operands), std::nullopt, std::nullopt});
  s->preallocated.emplace(product(s->operands).make_result());
  Kokkos::deep_copy(s->preallocated->view(), 0.0);
  std::vector<contender> out;
  out.push_back({Static ? "ordo_static" : "ordo", [s, product] { s->result = ordo::evaluate(product(s->operands)); },
                 [s] { return values_of(*s->result); }});
  if constexpr (!Static) {
    out.push_back({"ordo_into", [s, product] { ordo::evaluate(product(s->operands), *s->preallocated); },
                   [s] { return values_of(*s->preallocated); }});
  }
  return out;
}

template <bool Static, std::size_t K, std::array<std::size_t, K + 1> Dims>
std::vector<contender> ordo_chain(const case_data& c, std::string& order) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return ordo_contenders<Static>(
        std::make_tuple(to_ordo<matrix_t<Static, Dims[I], Dims[I + 1]>>(c.operands[I])...),
        [](const auto& ops) { return std::apply([](const auto&... a) { return (... * a); }, ops); }, order);
  }(std::make_index_sequence<K>{});
}

template <bool Static>
std::vector<contender> make_ordo(const case_data& c, std::string& order) {
  if (c.name == "hth_x") {
    return ordo_contenders<Static>(
        std::make_tuple(to_ordo<matrix_t<Static, n, n>>(c.at("H")), to_ordo<vector_t<Static, n>>(c.at("x"))),
        [](const auto& o) {
          const auto& [h, x] = o;
          return ordo::transpose(h) * h * x;
        },
        order);
  }
  if (c.name == "hty_xth") {
    return ordo_contenders<Static>(
        std::make_tuple(to_ordo<matrix_t<Static, n, n>>(c.at("H")), to_ordo<vector_t<Static, n>>(c.at("y")),
                        to_ordo<vector_t<Static, n>>(c.at("x"))),
        [](const auto& o) {
          const auto& [h, y, x] = o;
          return ordo::transpose(h) * y * ordo::transpose(x) * h;
        },
        order);
  }
  if (c.name == "m_a_b") {
    return ordo_contenders<Static>(
        std::make_tuple(to_ordo<matrix_t<Static, n, m>>(c.at("M")), to_ordo<matrix_t<Static, m, n>>(c.at("A")),
                        to_ordo<matrix_t<Static, n, m>>(c.at("B"))),
        [](const auto& o) {
          const auto& [mm, a, b] = o;
          return mm * a * b;
        },
        order);
  }
  if (c.name == "a_b_m") {
    return ordo_contenders<Static>(
        std::make_tuple(to_ordo<matrix_t<Static, n, n>>(c.at("A")), to_ordo<matrix_t<Static, n, n>>(c.at("B")),
                        to_ordo<matrix_t<Static, n, m>>(c.at("M"))),
        [](const auto& o) {
          const auto& [a, b, mm] = o;
          return a * b * mm;
        },
        order);
  }
  if (c.name == "a_m1_m2_b") {
    return ordo_contenders<Static>(
        std::make_tuple(to_ordo<matrix_t<Static, n, n>>(c.at("A")), to_ordo<matrix_t<Static, n, m>>(c.at("M1")),
                        to_ordo<matrix_t<Static, m, n>>(c.at("M2")), to_ordo<matrix_t<Static, n, n>>(c.at("B"))),
        [](const auto& o) {
          const auto& [a, m1, m2, b] = o;
          return a * m1 * m2 * b;
        },
        order);
  }
  if (c.name == "clrs_x10") return ordo_chain<Static, 6, clrs_dims>(c, order);
  if (c.name == "random_16") return ordo_chain<Static, 16, random_dims>(c, order);
  throw std::invalid_argument("bench_expression: no ordo spelling of case " + c.name);
}

// ---- timing ----------------------------------------------------------------------------------

// OpenBLAS's idle workers spin for up to about 0.1 s after a call, libgomp's for a few ms after a
// parallel region; the pause lets them fall asleep before the next contender.
void settle(const options& opt) { std::this_thread::sleep_for(std::chrono::duration<double>(opt.settle_seconds)); }

long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// Times one block of c into samples; adds the block's minor page faults (first touches of newly
// mapped memory) and calls, warm-up included, to faults.
void time_block(const contender& c, const options& opt, std::vector<double>& samples, std::array<long, 2>& faults) {
  settle(opt);
  long calls = 0;
  const long before = minor_faults();
  ordo_bench::time_calls([&] { ++calls, c.run(); }, {opt.min_reps, opt.max_reps, opt.block_seconds}, samples, true);
  faults[0] += minor_faults() - before;
  faults[1] += calls;
}

// ||x - reference||_F / ||reference||_F.
double relative_difference(const std::vector<double>& x, const std::vector<double>& reference) {
  if (x.size() != reference.size()) return std::numeric_limits<double>::infinity();
  double diff = 0.0, norm = 0.0;
  for (std::size_t e = 0; e < x.size(); ++e) {
    const double d = x[e] - reference[e];
    diff += d * d;
    norm += reference[e] * reference[e];
  }
  return norm > 0.0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

// Order-independent fingerprint of an operand's bits, which numpy_expression.py recomputes to
// prove it regenerated the same inputs: sum mod 2^64 of mix(bits ^ (index * gamma)).
std::uint64_t fingerprint(const std::vector<double>& v) {
  std::uint64_t sum = 0;
  for (std::size_t e = 0; e < v.size(); ++e) {
    std::uint64_t bits;
    std::memcpy(&bits, &v[e], sizeof bits);
    sum += splitmix64::mix(bits ^ (static_cast<std::uint64_t>(e) * splitmix64::gamma));
  }
  return sum;
}

// ---- output ----------------------------------------------------------------------------------

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (ch == '\n') {
      out += "\\n";
      continue;
    }
    out += ch;
  }
  return out + "\"";
}

std::string number(double x, const char* format = "%.9g") {
  char text[64];
  std::snprintf(text, sizeof text, format, x);
  return text;
}

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

void write_binary(const std::string& path, const std::vector<double>& values) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(double)));
  if (!out) usage("cannot write " + path);
}

}  // namespace
}  // namespace expression_bench

int main(int argc, char** argv) {
  using namespace expression_bench;
  Kokkos::ScopeGuard guard(argc, argv);
  const options opt = parse(argc, argv);
  const int eigen_nb_threads = eigen_threads(2);

  std::ostringstream json;
  json << "{\n \"seed\": " << opt.seed << ",\n \"rounds\": " << opt.rounds
       << ",\n \"block_seconds\": " << number(opt.block_seconds)
       << ",\n \"settle_seconds\": " << number(opt.settle_seconds) << ",\n \"min_reps\": " << opt.min_reps
       << ",\n \"max_reps\": " << opt.max_reps << ",\n \"threads\": {\"kokkos_openmp\": " << Kokkos::OpenMP::concurrency()
       << ", \"openblas\": " << openblas_get_num_threads() << ", \"eigen\": " << eigen_nb_threads
       << ", \"OMP_NUM_THREADS\": " << json_string(env_or("OMP_NUM_THREADS", "unset"))
       << ", \"OPENBLAS_NUM_THREADS\": " << json_string(env_or("OPENBLAS_NUM_THREADS", "unset"))
       << ", \"OMP_PROC_BIND\": " << json_string(env_or("OMP_PROC_BIND", "unset")) << "},\n \"versions\": {\"kokkos\": "
       << KOKKOS_VERSION << ", \"eigen\": " << json_string(eigen_version())
       << ", \"armadillo\": " << json_string(armadillo_version())
       << ", \"openblas\": " << json_string(openblas_get_config()) << "},\n \"random_16\": {\"seed\": " << random_seed
       << ", \"lo\": " << random_lo << ", \"hi\": " << random_hi << "},\n \"cases\": [";

  bool first_case = true, all_agree = true;
  for (std::size_t index = 0; index < case_names.size(); ++index) {
    if (!selected(opt.cases, case_names[index])) continue;
    const case_data c = make_case(case_names[index], opt.seed);
    const auto plan = ordo::plan_chain(std::span<const std::size_t>(c.dims));
    std::fprintf(stderr, "case %s (%s): optimal %llu, left to right %llu multiplications, %s\n", c.name.c_str(),
                 c.formula.c_str(), static_cast<unsigned long long>(plan.cost()),
                 static_cast<unsigned long long>(plan.left_to_right_cost()), std::string(plan.order()).c_str());

    std::string static_order, unused;
    std::vector<contender> contenders = make_blas(c, plan);
    for (auto&& more : {make_ordo<false>(c, unused), make_ordo<true>(c, static_order), make_eigen(c), make_armadillo(c)}) {
      for (auto& one : more) contenders.push_back(one);
    }
    std::erase_if(contenders, [&](const contender& k) { return k.name != "blas" && !selected(opt.contenders, k.name); });

    // The reference is the floor's result.
    contenders[0].run();
    const std::vector<double> reference = contenders[0].values();
    if (!opt.out_dir.empty()) write_binary(opt.out_dir + "/" + c.name + ".f64", reference);

    std::vector<double> differences;
    for (const contender& k : contenders) {
      settle(opt);
      k.run();
      differences.push_back(relative_difference(k.values(), reference));
      std::fprintf(stderr, "  %-14s relative difference %.3e\n", k.name.c_str(), differences.back());
      if (!(differences.back() < 1e-10)) all_agree = false;
    }

    std::vector<std::vector<double>> samples(contenders.size());
    std::vector<std::array<long, 2>> faults(contenders.size(), {0, 0});
    for (int round = 0; round < opt.rounds; ++round) {
      for (std::size_t slot = 0; slot < contenders.size(); ++slot) {
        const std::size_t which = (slot + static_cast<std::size_t>(round + opt.rotate)) % contenders.size();
        time_block(contenders[which], opt, samples[which], faults[which]);
      }
      std::fprintf(stderr, "  round %d done\n", round + 1);
    }

    json << (first_case ? "\n" : ",\n") << "  {\"name\": " << json_string(c.name) << ", \"index\": " << index
         << ", \"formula\": " << json_string(c.formula) << ", \"dims\": [";
    first_case = false;
    for (std::size_t i = 0; i < c.dims.size(); ++i) json << (i ? ", " : "") << c.dims[i];
    json << "], \"operands\": [";
    for (std::size_t k = 0; k < c.operands.size(); ++k) {
      const operand& o = c.operands[k];
      json << (k ? ", " : "") << "{\"name\": " << json_string(o.name) << ", \"rows\": " << o.rows
           << ", \"cols\": " << o.cols << ", \"fingerprint\": \"" << fingerprint(o.values) << "\"}";
    }
    json << "], \"cost\": " << plan.cost() << ", \"left_to_right_cost\": " << plan.left_to_right_cost()
         << ", \"order\": " << json_string(plan.order()) << ", \"static_order\": " << json_string(static_order)
         << ", \"reference\": " << json_string(opt.out_dir.empty() ? "" : c.name + ".f64") << ", \"contenders\": {";
    for (std::size_t i = 0; i < contenders.size(); ++i) {
      const std::vector<double>& t = samples[i];
      const ordo_bench::summary s = ordo_bench::summarize(t);
      json << (i ? ",\n" : "\n") << "   " << json_string(contenders[i].name) << ": {\"median\": " << number(s.median)
           << ", \"q1\": " << number(s.q1) << ", \"q3\": " << number(s.q3) << ", \"min\": " << number(s.min)
           << ", \"reps\": " << s.reps << ", \"faults_per_run\": " << number(double(faults[i][0]) / double(faults[i][1]), "%.1f")
           << ", \"relative_difference\": " << number(differences[i], "%.3e")
           << ", \"samples\": [";
      for (std::size_t r = 0; r < t.size(); ++r) json << (r ? ", " : "") << number(t[r]);
      json << "]}";
      std::fprintf(stderr, "  %-14s median %.4g s over %zu runs\n", contenders[i].name.c_str(), s.median, s.reps);
    }
    json << "}}";
  }
  json << "\n ],\n \"all_agree\": " << (all_agree ? "true" : "false") << "\n}\n";
  std::fputs(json.str().c_str(), stdout);
  return all_agree ? 0 : 1;
}
