// bench_chains: products of several matrices in double precision, every contender on the same inputs. blas (the
// floor): hand-ordered OpenBLAS, dgemm_ in ordo::plan_chain's order (GEMVs and GER for hth_x, hty_xth), buffers
// allocated in the timed region; blas_into: into a result allocated beforehand; blas_hugepages: buffers of 4 MiB
// and more MADV_HUGEPAGE. ordo: `auto r = ordo::evaluate(ordo::transpose(h) * h * x);`, ordo_static (static
// extents), ordo_into; on chains ordo_multiply, ordo_portable (gemm_backend::portable), ordo_uninitialized
// (ordo::chain into r allocated WithoutInitializing). eigen, eigen_noalias, armadillo: peers.cpp. Prints JSON
// lines: versions; per case its chain, operands and plan; per contender its relative difference from blas and
// the samples of one block (a pause, then time_calls), the contenders in turn from the --rotate-th.

#include "chains.hpp"

#include <ordo/ordo.hpp>

#include <Kokkos_Core.hpp>

#include <sys/mman.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <span>
#include <thread>

// dgemm_, dgemv_ and dger_ come with ordo's BLAS adapters; these are OpenBLAS's, for the report.
extern "C" int openblas_get_num_threads(void);
extern "C" char* openblas_get_config(void);

namespace chains {
namespace {

constexpr double one = 1.0, zero = 0.0;

// Row-major C (rows x cols) = A B, inner extent k: column-major C^T = B^T A^T.
void gemm_rm(std::size_t rows, std::size_t cols, std::size_t k, const double* a, const double* b, double* c) {
  const int m_ = static_cast<int>(cols), n_ = static_cast<int>(rows), k_ = static_cast<int>(k);
  dgemm_("N", "N", &m_, &n_, &k_, &one, b, &m_, a, &k_, &zero, c, &m_);
}

// y = op(A) x for A stored row-major, n x n.
void gemv_rm(bool t, std::size_t n, const double* a, const double* x, double* y) {
  const int r = static_cast<int>(n), inc = 1;
  dgemv_(t ? "N" : "T", &r, &r, &one, a, &r, x, &inc, &zero, y, &inc);
}

using buffer = std::unique_ptr<double[], decltype([](double* p) { std::free(p); })>;

// From malloc; with huge_pages, buffers of 4 MiB and more 2 MiB-aligned and MADV_HUGEPAGE, as numpy's.
buffer uninitialized_buffer(std::size_t elements, bool huge_pages = false) {
  const std::size_t bytes = std::max<std::size_t>(elements, 1) * sizeof(double), huge = std::size_t{2} << 20;
  if (!huge_pages || bytes < 2 * huge) return buffer(static_cast<double*>(std::malloc(bytes)));
  const std::size_t rounded = (bytes + huge - 1) / huge * huge;
  auto* p = static_cast<double*>(std::aligned_alloc(huge, rounded));
  if (p != nullptr) madvise(p, rounded, MADV_HUGEPAGE);
  return buffer(p);
}

// The case's product into result, the intermediates allocated here.
void blas_product(const case_data& c, std::span<const ordo::planned_product> plan, double* result, bool huge) {
  const auto data = [&](std::size_t k) { return c.operands[k].values.data(); };
  const std::size_t n = c.operands[0].rows;
  if (c.name == "hth_x") {  // H^T (H x): two GEMVs
    buffer t = uninitialized_buffer(n, huge);
    gemv_rm(false, n, data(0), data(1), t.get());
    gemv_rm(true, n, data(0), t.get(), result);
  } else if (c.name == "hty_xth") {
    // (H^T y)(x^T H) = u v^T, u = H^T y, v = H^T x: two GEMVs, then GER into the cleared result
    // (faster here than DGEMM with k = 1); row-major r is column-major r^T = v u^T.
    buffer u = uninitialized_buffer(n, huge), v = uninitialized_buffer(n, huge);
    gemv_rm(true, n, data(0), data(1), u.get());
    gemv_rm(true, n, data(0), data(2), v.get());
    std::memset(result, 0, n * n * sizeof(double));
    const int nn = static_cast<int>(n), inc = 1;
    dger_(&nn, &nn, &one, v.get(), &inc, u.get(), &inc, result, &nn);
  } else {  // a chain: the planned products in turn, the root into result
    const std::size_t k = c.operands.size();
    std::vector<const double*> node(2 * k - 1, nullptr);
    std::vector<buffer> owned(2 * k - 1);
    for (std::size_t i = 0; i < k; ++i) node[i] = data(i);
    for (std::size_t p = 0; p < plan.size(); ++p) {
      const ordo::planned_product& step = plan[p];
      if (p + 1 < plan.size()) owned[k + p] = uninitialized_buffer(step.rows * step.cols, huge);
      double* r = p + 1 < plan.size() ? owned[k + p].get() : result;
      gemm_rm(step.rows, step.cols, step.inner, node[step.left], node[step.right], r);
      node[k + p] = r;
      owned[step.left].reset();
      owned[step.right].reset();
    }
  }
}

// blas (a new result each call), blas_into (one allocated beforehand), blas_hugepages.
void blas_contenders(const case_data& c, const ordo::chain_plan<ordo::dynamic>& p, const names& selected,
                     contenders& out) {
  auto plan = std::make_shared<const std::vector<ordo::planned_product>>(p.products().begin(), p.products().end());
  const std::size_t size = c.dims.front() * c.dims.back();
  const auto make = [&](const char* name, bool fresh, bool huge) {
    auto r = std::make_shared<buffer>(fresh ? nullptr : uninitialized_buffer(size));
    if (!fresh) std::fill_n(r->get(), size, 0.0);
    return contender{name,
                     [&c, plan, r, size, fresh, huge] {
                       buffer b = fresh ? uninitialized_buffer(size, huge) : nullptr;
                       blas_product(c, *plan, (fresh ? b : *r).get(), huge);
                       if (fresh) *r = std::move(b);
                     },
                     [r, size] { return std::vector<double>(r->get(), r->get() + size); }};
  };
  out.push_back(make("blas", true, false));
  if (wanted(selected, "blas_into")) out.push_back(make("blas_into", false, false));
  if (wanted(selected, "blas_hugepages")) out.push_back(make("blas_hugepages", true, true));
}

using space = Kokkos::OpenMP;

template <bool Static>
constexpr auto ordo_load = []<class S>(S, const operand& o) {
  constexpr std::size_t rows = Static ? S::rows : ordo::dynamic, cols = Static || S::vector ? S::cols : ordo::dynamic;
  using M = ordo::matrix<double, rows, cols, space>;
  M a = [&] {
    if constexpr (Static) return M(ordo::uninitialized);
    else if constexpr (S::vector) return M(ordo::uninitialized, o.rows);
    else return M(ordo::uninitialized, o.rows, o.cols);
  }();
  for (std::size_t e = 0; e < o.values.size(); ++e) a(e / o.cols, e % o.cols) = o.values[e];
  return a;
};

template <class M>
std::vector<double> values_of(const M& r) {
  std::vector<double> out;
  for (std::size_t e = 0; e < r.rows() * r.cols(); ++e) out.push_back(r(e / r.cols(), e % r.cols()));
  return out;
}

// ordo's contenders; the expression is built inside the timed region, as a user's code builds it.
template <class Case, bool Static>
void ordo_contenders(const case_data& c, const names& selected, contenders& out, std::string& order) {
  if (Static && !wanted(selected, "ordo_static")) return;
  const auto ops = std::make_shared<const decltype(load_operands<Case>(c, ordo_load<Static>))>(
      load_operands<Case>(c, ordo_load<Static>));
  const auto product = [ops] {
    return with_product<Case>(*ops, [](const auto& a) { return ordo::transpose(a); }, [](auto&& e) { return e; });
  };
  const auto add = [&](const char* name, auto f) {  // a contender that keeps f()'s result, a new one each call
    auto r = std::make_shared<std::optional<decltype(f())>>();
    if (wanted(selected, name)) out.push_back({name, [r, f] { *r = f(); }, [r] { return values_of(**r); }});
  };
  using expression = decltype(product());
  if constexpr (Static) {
    static_assert(expression::is_static, "bench_chains: the static spelling must plan at compile time");
    order = std::string(expression::order());
    add("ordo_static", [product] { return ordo::evaluate(product()); });
  } else {
    add("ordo", [product] { return ordo::evaluate(product()); });
    if (wanted(selected, "ordo_into")) {
      auto r = std::make_shared<typename expression::result_type>(product().make_result());
      Kokkos::deep_copy(r->view(), 0.0);
      out.push_back({"ordo_into", [product, r] { ordo::evaluate(product(), *r); }, [r] { return values_of(*r); }});
    }
    if constexpr (Case::plain_chain) {
      const auto chain = [ops](auto f) { return [ops, f] { return std::apply(f, *ops); }; };
      add("ordo_multiply", chain([](const auto&... a) { return ordo::multiply(a...); }));
      add("ordo_portable", chain([](const auto&... a) {
            auto e = ordo::chain(a...);
            auto r = e.make_result();
            ordo::evaluate(e, r, ordo::gemm_backend::portable);
            return r;
          }));
      add("ordo_uninitialized", chain([rows = c.dims.front(), cols = c.dims.back()](const auto&... a) {
            using matrix = ordo::matrix<double, ordo::dynamic, ordo::dynamic, space>;
            matrix r(matrix::view_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, "result"), rows, cols));
            ordo::evaluate(ordo::chain(a...), r);
            return r;
          }));
    }
  }
}

std::uint64_t fingerprint(const std::vector<double>& v) {  // sum of mix(bits ^ index * gamma) mod 2^64
  std::uint64_t sum = 0;
  for (std::uint64_t e = 0; e < v.size(); ++e) {
    sum += splitmix64::mix(std::bit_cast<std::uint64_t>(v[e]) ^ (e * splitmix64::gamma));
  }
  return sum;
}

double relative_difference(const std::vector<double>& x, const std::vector<double>& reference) {
  if (x.size() != reference.size()) return 1e300;
  double diff = 0.0, norm = 0.0;
  for (std::size_t e = 0; e < x.size(); ++e) {
    diff += (x[e] - reference[e]) * (x[e] - reference[e]);
    norm += reference[e] * reference[e];
  }
  return std::isfinite(diff) ? std::sqrt(diff / norm) : 1e300;
}

template <class R, class F>
std::string join(const R& range, F f) {
  std::string s;
  for (const auto& x : range) s += (s.empty() ? "" : ", ") + f(x);
  return s;
}

// Builds case `name` with its inputs and contenders; prints its JSON line.
contenders make_case(const std::string& name, const names& selected, case_data& c) {
  const auto index = static_cast<std::uint64_t>(std::ranges::find(case_names, name) - case_names.begin());
  const auto pair = [](auto a, auto b) { return "[" + std::to_string(a) + ", " + std::to_string(b) + "]"; };
  contenders out;
  std::string terms, static_order;
  const auto plan = visit_case(name, [&](auto k) {
    using Case = decltype(k);
    c = {name, {}, {Case::dims.begin(), Case::dims.end()}};
    for (std::size_t i = 0; i < Case::extents.size(); ++i) {
      const auto [rows, cols] = Case::extents[i];
      // Uniform in [-1, 1) times sqrt(3 / cols), so that products keep entries of order one.
      std::vector<double> values(rows * cols);
      const std::uint64_t stream = splitmix64::mix(seed ^ (index << 32) ^ i);
      for (std::size_t e = 0; e < values.size(); ++e) {
        values[e] = (2.0 * ordo_bench::unit_double(splitmix64::at(stream, e)) - 1.0) * std::sqrt(3.0 / double(cols));
      }
      c.operands.push_back({rows, cols, std::move(values)});
    }
    terms = join(Case::terms, [&](term t) { return pair(t.operand, t.transposed); });
    auto p = ordo::plan_chain(std::span<const std::size_t>(c.dims));
    blas_contenders(c, p, selected, out);
    ordo_contenders<Case, false>(c, selected, out, static_order);
    if constexpr (Case::with_static) ordo_contenders<Case, true>(c, selected, out, static_order);
    return p;
  });
  for (contender& p : peers(c, selected)) out.push_back(std::move(p));
  std::printf("{\"case\": \"%s\", \"index\": %llu, \"dims\": [%s], \"shapes\": [%s], \"fingerprints\": [%s], "
              "\"terms\": [%s], \"cost\": %llu, \"left_to_right_cost\": %llu, \"order\": \"%s\", "
              "\"static_order\": \"%s\"}\n",
              name.c_str(), static_cast<unsigned long long>(index),
              join(c.dims, [](std::size_t d) { return std::to_string(d); }).c_str(),
              join(c.operands, [&](const operand& o) { return pair(o.rows, o.cols); }).c_str(),
              join(c.operands, [](const operand& o) { return std::to_string(fingerprint(o.values)); }).c_str(),
              terms.c_str(), static_cast<unsigned long long>(plan.cost()),
              static_cast<unsigned long long>(plan.left_to_right_cost()), std::string(plan.order()).c_str(),
              static_order.c_str());
  return out;
}

}  // namespace
}  // namespace chains

int main(int argc, char** argv) {
  using namespace chains;
  Kokkos::ScopeGuard guard(argc, argv);
  std::vector<std::string> cases = case_names, selected;
  std::string out_dir;
  std::size_t rotate = 0;
  ordo_bench::limits lim{3, 2000, 0.25};
  double settle = 0.3;
  ordo_bench::for_each_option(argc, argv, [&](std::string_view arg, const std::string& value) {
    if (arg == "--cases") cases = ordo_bench::split(value);
    else if (arg == "--contenders") selected = ordo_bench::split(value);
    else if (arg == "--rotate") rotate = std::stoul(value);
    else if (arg == "--block-seconds") lim.min_seconds = std::stod(value);
    else if (arg == "--settle-seconds") settle = std::stod(value);
    else if (arg == "--min-reps") lim.min_reps = std::stoi(value);
    else if (arg == "--out-dir") out_dir = value;
    else throw std::invalid_argument("bench_chains: unknown option " + std::string(arg));
  });
  const auto pause = [settle] { std::this_thread::sleep_for(std::chrono::duration<double>(settle)); };
  std::printf("{\"kokkos\": \"%d.%d.%02d\", %s, \"openblas\": \"%s\", \"openblas_threads\": %d, "
              "\"kokkos_threads\": %d}\n",
              KOKKOS_VERSION / 10000, KOKKOS_VERSION / 100 % 100, KOKKOS_VERSION % 100, setup_peers().c_str(),
              openblas_get_config(), openblas_get_num_threads(), Kokkos::OpenMP::concurrency());
  for (const std::string& name : cases) {
    case_data c;
    const contenders all = make_case(name, selected, c);
    all[0].run();  // blas: the reference
    const std::vector<double> reference = all[0].values();
    if (!out_dir.empty()) {
      std::ofstream(out_dir + "/" + name + ".f64", std::ios::binary)
          .write(reinterpret_cast<const char*>(reference.data()), std::streamsize(reference.size() * sizeof(double)));
    }
    std::vector<double> differences;
    for (const contender& k : all) {
      pause();
      k.run();
      differences.push_back(relative_difference(k.values(), reference));
    }
    std::vector<std::vector<double>> samples(all.size());
    for (std::size_t slot = 0; slot < all.size(); ++slot) {
      const std::size_t which = (slot + rotate) % all.size();
      pause();
      ordo_bench::time_calls(all[which].run, lim, samples[which], true);
    }
    for (std::size_t i = 0; i < all.size(); ++i) {
      std::printf("{\"case\": \"%s\", \"contender\": \"%s\", \"difference\": %.3e, \"samples\": [", name.c_str(),
                  all[i].name.c_str(), differences[i]);
      for (std::size_t r = 0; r < samples[i].size(); ++r) std::printf("%s%.9g", r ? ", " : "", samples[i][r]);
      std::printf("]}\n");
    }
    std::fflush(stdout);
  }
}
