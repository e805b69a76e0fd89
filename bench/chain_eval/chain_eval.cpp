// Matrix-chain evaluation against peers, double precision, on the same inputs:
//   openblas       hand-ordered OpenBLAS dgemm_ calls in the optimal order (the floor); the order
//                  comes from ordo::plan_chain(dims) before timing, the intermediates and the
//                  result are allocated (uninitialized) inside the timed region, as a user would;
//   ordo           ordo::multiply(A1, ..., An) on ordo::matrix<double, dynamic, dynamic,
//                  Kokkos::OpenMP> (plans at run time, gemm_backend::automatic = OpenBLAS);
//   ordo_portable  ordo::evaluate(ordo::chain(A1, ..., An), r, gemm_backend::portable) into a new r;
//   ordo_uninitialized  (diagnostic) ordo::evaluate(ordo::chain(A1, ..., An), r) into a new r whose
//                  View the benchmark allocates with Kokkos::WithoutInitializing: the path
//                  ordo::multiply takes too (it allocates its result uninitialized), by hand;
//   eigen          Eigen 3.4 `A1 * ... * An` (left to right, Eigen's own kernels, OpenMP);
//   armadillo      Armadillo `A1 * ... * An` (reorders 3-4 operands, OpenBLAS).
// numpy.linalg.multi_dot is timed by numpy_chain_eval.py on the same chains; bench/chain_eval/run
// runs both and writes the table.
//
//   bench_chain_eval [--seed S] [--chains a,b] [--contenders a,b] [--rounds 3] [--rotate 0]
//                    [--block-seconds 0.25] [--settle-seconds 0.3] [--min-reps 3] [--max-reps 2000]
//                    [--out-dir DIR]
//
// Prints one JSON document on stdout; with --out-dir it also writes each chain's reference result
// (the floor's, row-major float64) as DIR/<chain>.f64 for numpy_chain_eval.py. Threads come from
// the environment (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS); run sets both to 2, and Eigen gets
// Eigen::setNbThreads(2).
//
// Timing: every contender runs once to check its result, then for each of --rounds rounds (the
// contenders in an order rotated by one each round, starting at --rotate) a block: a pause of
// --settle-seconds, then ordo_bench::time_calls: one warm-up run (kept when it alone takes
// --block-seconds) and timed runs until both --min-reps runs and --block-seconds have passed (at
// most --max-reps). The report gives the median over all rounds and every sample, so that run can
// merge several invocations.

#include "bench_support.hpp"
#include "chain_eval.hpp"

#include <ordo/ordo.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#if !defined(ORDO_HAS_BLAS)
#error "bench_chain_eval needs ordo built with BLAS (ORDO_HAS_BLAS); install libopenblas-dev"
#endif

// dgemm_ comes from <ordo/kernels/detail/blas.hpp>; these two are OpenBLAS extensions, for the report.
extern "C" int openblas_get_num_threads(void);
extern "C" char* openblas_get_config(void);

namespace chain_eval {
namespace {

using ordo_bench::split;

using ordo_matrix = ordo::matrix<double, ordo::dynamic, ordo::dynamic, Kokkos::OpenMP>;

struct options {
  std::uint64_t seed = 20240601;
  std::vector<std::string> chains;      // empty: all
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
  std::fprintf(stderr, "bench_chain_eval: %s\n", what.c_str());
  std::exit(2);
}

options parse(int argc, char** argv) {
  options opt;
  try {
    ordo_bench::for_each_option(argc, argv, [&](std::string_view arg, const std::string& value) {
      if (arg == "--seed") opt.seed = std::stoull(value);
      else if (arg == "--chains") opt.chains = split(value);
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

// d0 .. dn uniform in [lo, hi] from splitmix64 seeded by (seed, chain).
std::vector<std::size_t> random_dims(std::uint64_t seed, std::uint64_t chain, std::size_t matrices, std::size_t lo,
                                     std::size_t hi) {
  splitmix64 rng{splitmix64::mix(seed ^ (chain << 32) ^ 0xd1b54a32d192ed03ULL)};
  std::vector<std::size_t> dims(matrices + 1);
  for (auto& d : dims) d = lo + static_cast<std::size_t>(rng.next() % (hi - lo + 1));
  return dims;
}

struct chain_spec {
  std::string name;
  std::vector<std::size_t> dims;
};

std::vector<chain_spec> chain_specs(std::uint64_t seed) {
  return {
      {"seed", {100, 5, 200, 20}},
      {"clrs_x10", {300, 350, 150, 50, 100, 200, 250}},
      {"six_1000", random_dims(seed, 2, 6, 800, 1200)},
      {"random_8", random_dims(seed, 3, 8, 16, 2048)},
      {"random_16", random_dims(seed, 4, 16, 16, 2048)},
  };
}

chain_data make_chain(const chain_spec& spec, std::uint64_t seed, std::uint64_t chain_index) {
  chain_data c{spec.name, spec.dims, {}};
  for (std::size_t k = 0; k + 1 < spec.dims.size(); ++k) {
    const std::size_t rows = spec.dims[k], cols = spec.dims[k + 1];
    const std::uint64_t stream = matrix_stream(seed, chain_index, k);
    std::vector<double> m(rows * cols);
    for (std::size_t e = 0; e < m.size(); ++e) m[e] = input_value(stream, e, cols);
    c.inputs.push_back(std::move(m));
  }
  return c;
}

// Order-independent fingerprint of a matrix's bits, which numpy_chain_eval.py recomputes to
// prove it regenerated exactly the same inputs: sum mod 2^64 of mix(bits ^ (index * gamma)).
std::uint64_t fingerprint(const std::vector<double>& m) {
  std::uint64_t sum = 0;
  for (std::size_t e = 0; e < m.size(); ++e) {
    std::uint64_t bits;
    std::memcpy(&bits, &m[e], sizeof bits);
    sum += splitmix64::mix(bits ^ (static_cast<std::uint64_t>(e) * splitmix64::gamma));
  }
  return sum;
}

// ---- hand-ordered OpenBLAS: the floor ----------------------------------------------------------

contender make_openblas(const chain_data& chain, const ordo::chain_plan<ordo::dynamic>& plan) {
  struct state {
    const chain_data* chain;
    std::vector<ordo::planned_product> products;
    std::unique_ptr<double[]> result;
    std::size_t rows, cols;
  };
  auto s = std::make_shared<state>(
      state{&chain, {plan.products().begin(), plan.products().end()}, nullptr, plan.rows(), plan.cols()});
  contender c;
  c.name = "openblas";
  c.run = [s] {
    const std::size_t n = s->chain->inputs.size();
    std::vector<const double*> node(2 * n - 1, nullptr);
    std::vector<std::unique_ptr<double[]>> owned(2 * n - 1);
    for (std::size_t k = 0; k < n; ++k) node[k] = s->chain->inputs[k].data();
    for (std::size_t p = 0; p < s->products.size(); ++p) {
      const ordo::planned_product& step = s->products[p];
      auto out = std::make_unique_for_overwrite<double[]>(step.rows * step.cols);
      // Row-major C = A B is column-major C^T = B^T A^T.
      const int m = static_cast<int>(step.cols), nn = static_cast<int>(step.rows), k = static_cast<int>(step.inner);
      const double one = 1.0, zero = 0.0;
      dgemm_("N", "N", &m, &nn, &k, &one, node[step.right], &m, node[step.left], &k, &zero, out.get(), &m);
      owned[step.left].reset();
      owned[step.right].reset();
      node[n + p] = out.get();
      owned[n + p] = std::move(out);
    }
    s->result = std::move(owned[2 * n - 2]);
  };
  c.values = [s] { return std::vector<double>(s->result.get(), s->result.get() + s->rows * s->cols); };
  return c;
}

// ---- ordo ------------------------------------------------------------------------------------

ordo_matrix to_ordo(const chain_data& chain, std::size_t k) {
  const std::size_t rows = chain.dims[k], cols = chain.dims[k + 1];
  ordo_matrix m(rows, cols);
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) m(i, j) = chain.inputs[k][i * cols + j];
  }
  return m;
}

enum class ordo_mode {
  multiply,              // ordo::multiply(A1, ..., An)
  portable,              // ordo::evaluate(chain, r, gemm_backend::portable), r from make_result()
  evaluate_uninitialized // ordo::evaluate(chain, r), r allocated here with Kokkos::WithoutInitializing
};

template <std::size_t N>
contender make_ordo_n(const chain_data& chain, ordo_mode mode) {
  struct state {
    std::array<ordo_matrix, N> operands;
    std::optional<ordo_matrix> result;
  };
  auto s = std::make_shared<state>(state{
      [&]<std::size_t... I>(std::index_sequence<I...>) { return std::array<ordo_matrix, N>{to_ordo(chain, I)...}; }(
          std::make_index_sequence<N>{}),
      std::nullopt});
  contender c;
  switch (mode) {
    case ordo_mode::multiply:
      c.name = "ordo";
      c.run = [s] { s->result = std::apply([](const auto&... m) { return ordo::multiply(m...); }, s->operands); };
      break;
    case ordo_mode::portable:
      c.name = "ordo_portable";
      c.run = [s] {
        s->result = std::apply(
            [](const auto&... m) {
              auto expression = ordo::chain(m...);
              auto r = expression.make_result();
              ordo::evaluate(expression, r, ordo::gemm_backend::portable);
              return r;
            },
            s->operands);
      };
      break;
    case ordo_mode::evaluate_uninitialized:
      // Diagnostic: ordo::multiply's BLAS path with the result allocated by hand, through the
      // public API.
      c.name = "ordo_uninitialized";
      c.run = [s] {
        const std::size_t rows = std::get<0>(s->operands).rows(), cols = std::get<N - 1>(s->operands).cols();
        s->result = std::apply(
            [&](const auto&... m) {
              auto expression = ordo::chain(m...);
              ordo_matrix r(ordo_matrix::view_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, "result"), rows, cols));
              ordo::evaluate(expression, r);
              return r;
            },
            s->operands);
      };
      break;
  }
  c.values = [s] {
    const ordo_matrix& r = *s->result;
    return row_major_copy(r.rows(), r.cols(), [&](std::size_t i, std::size_t j) { return r(i, j); });
  };
  return c;
}

contender make_ordo(const chain_data& chain, ordo_mode mode) {
  return with_length(chain.dims.size() - 1, [&](auto n) { return make_ordo_n<decltype(n)::value>(chain, mode); });
}

// ---- timing ----------------------------------------------------------------------------------

// OpenBLAS's idle workers spin for up to about 0.1 s after a call, and libgomp's (Eigen's, Kokkos's)
// for a few milliseconds after a parallel region; a pause before each block lets the previous
// contender's threads fall asleep so that they do not compete with the next one.
void settle(const options& opt) {
  std::this_thread::sleep_for(std::chrono::duration<double>(opt.settle_seconds));
}

void time_block(const contender& c, const options& opt, std::vector<double>& samples) {
  settle(opt);
  ordo_bench::time_calls(c.run, {opt.min_reps, opt.max_reps, opt.block_seconds}, samples, true);
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
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, x);
  return buffer;
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
}  // namespace chain_eval

int main(int argc, char** argv) {
  using namespace chain_eval;
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
       << ", \"openblas\": " << json_string(openblas_get_config()) << "},\n \"chains\": [";

  const std::vector<chain_spec> specs = chain_specs(opt.seed);
  bool first_chain = true, all_agree = true;
  for (std::size_t index = 0; index < specs.size(); ++index) {
    if (!selected(opt.chains, specs[index].name)) continue;
    const chain_data chain = make_chain(specs[index], opt.seed, index);
    const auto plan = ordo::plan_chain(std::span<const std::size_t>(chain.dims));
    std::fprintf(stderr, "chain %s: %zu matrices, optimal %llu, left to right %llu multiplications, %s\n",
                 chain.name.c_str(), chain.inputs.size(), static_cast<unsigned long long>(plan.cost()),
                 static_cast<unsigned long long>(plan.left_to_right_cost()), std::string(plan.order()).c_str());

    std::vector<contender> contenders;
    contenders.push_back(make_openblas(chain, plan));
    contenders.push_back(make_ordo(chain, ordo_mode::multiply));
    contenders.push_back(make_ordo(chain, ordo_mode::portable));
    contenders.push_back(make_ordo(chain, ordo_mode::evaluate_uninitialized));
    contenders.push_back(make_eigen(chain));
    contenders.push_back(make_armadillo(chain));
    std::erase_if(contenders, [&](const contender& c) { return c.name != "openblas" && !selected(opt.contenders, c.name); });

    // The reference is the floor's result (hand-ordered OpenBLAS).
    contenders[0].run();
    const std::vector<double> reference = contenders[0].values();
    if (!opt.out_dir.empty()) write_binary(opt.out_dir + "/" + chain.name + ".f64", reference);

    std::vector<double> differences;
    for (const contender& c : contenders) {
      settle(opt);
      c.run();
      differences.push_back(relative_difference(c.values(), reference));
      std::fprintf(stderr, "  %-14s relative difference %.3e\n", c.name.c_str(), differences.back());
      if (!(differences.back() < 1e-10)) all_agree = false;
    }

    std::vector<std::vector<double>> samples(contenders.size());
    for (int round = 0; round < opt.rounds; ++round) {
      for (std::size_t slot = 0; slot < contenders.size(); ++slot) {
        const std::size_t which = (slot + static_cast<std::size_t>(round + opt.rotate)) % contenders.size();
        time_block(contenders[which], opt, samples[which]);
      }
      std::fprintf(stderr, "  round %d done\n", round + 1);
    }

    json << (first_chain ? "\n" : ",\n") << "  {\"name\": " << json_string(chain.name) << ", \"index\": " << index
         << ", \"dims\": [";
    first_chain = false;
    for (std::size_t i = 0; i < chain.dims.size(); ++i) json << (i ? ", " : "") << chain.dims[i];
    json << "], \"fingerprints\": [";
    for (std::size_t k = 0; k < chain.inputs.size(); ++k) json << (k ? ", " : "") << '"' << fingerprint(chain.inputs[k]) << '"';
    json << "], \"cost\": " << plan.cost() << ", \"left_to_right_cost\": " << plan.left_to_right_cost()
         << ", \"order\": " << json_string(plan.order()) << ", \"reference\": "
         << json_string(opt.out_dir.empty() ? "" : chain.name + ".f64") << ", \"contenders\": {";
    for (std::size_t i = 0; i < contenders.size(); ++i) {
      const std::vector<double>& t = samples[i];
      const ordo_bench::summary s = ordo_bench::summarize(t);
      json << (i ? ",\n" : "\n") << "   " << json_string(contenders[i].name) << ": {\"median\": " << number(s.median)
           << ", \"q1\": " << number(s.q1) << ", \"q3\": " << number(s.q3)
           << ", \"min\": " << number(s.min) << ", \"reps\": " << s.reps
           << ", \"relative_difference\": " << number(differences[i], "%.3e") << ", \"samples\": [";
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
