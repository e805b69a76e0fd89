// bench_batch_norm: diagnostics of ordo::nn::batch_norm_forward_training + batch_norm_backward on
// Kokkos::OpenMP (run with OMP_NUM_THREADS=2 OMP_PROC_BIND=false), float, on the cases of
// cases.hpp: ordo's two calls, each of their passes timed alone, a blocked reference
// implementation ("blocked") of the same arithmetic that shows what the passes can cost, and a
// STREAM-like copy (Kokkos parallel_for y(i) = x(i)) at the case's size and on a large array.
// The comparison with PyTorch is timed by paired.py (ordo and PyTorch in one process); both are
// driven by bench/batch_norm/run.
//
// Timing: untimed warm-up rounds, then rounds in which every timed item runs once, in turn
// (so load from other jobs spreads over all items alike), until --min-rounds and --min-seconds.
// steady_clock around each call; every call fences before returning. Medians and quartiles.
//
// Output: one JSON object per line on stdout (cases, then the large copy), with every timed
// sample in seconds (samples[i] of every item of a case come from the same round i).
//
// Usage: bench_batch_norm [--cases nchw,nhwc,bn1d] [--min-rounds R] [--max-rounds R]
//                         [--min-seconds T] [--warmup W] [--copy-elements N]

#include "cases.hpp"

#include <ordo/nn/batch_norm.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace bench_bn;

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double quantile(std::vector<double> v, double q) {  // linear interpolation, as numpy's default
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

// ------------------------------------------------------------------------------------------------
// Diagnostics: ordo's passes one at a time, with ordo's own code where it is reachable.

// One statistics pass of the forward (the mean pass): ordo's detail::sum_per_channel.
void ordo_stats_pass(const ordo::nn::detail::channel_geometry& g, const flat_f& x) {
  auto sums = ordo::nn::detail::sum_per_channel<space>(g, static_cast<unsigned>(g.channels),
                                                       ordo::nn::detail::sum_of_values<flat_f>{x});
  if (!(sums(0) == sums(0))) std::abort();
}

// The forward's second statistics pass (sum of squared deviations from the mean): ordo's detail code.
void ordo_deviation_pass(const ordo::nn::detail::channel_geometry& g, const flat_f& x, const vec_d& mean) {
  auto sums = ordo::nn::detail::sum_per_channel<space>(
      g, static_cast<unsigned>(g.channels), ordo::nn::detail::sum_of_squared_deviations<flat_f, vec_d>{x, mean});
  if (!(sums(0) == sums(0))) std::abort();
}

// The backward's sums pass (sum dy and sum (x - mean) dy per channel): ordo's detail code.
void ordo_backward_sums_pass(const ordo::nn::detail::channel_geometry& g, const flat_f& x, const flat_f& dy,
                             const vec_d& mean) {
  auto sums = ordo::nn::detail::sum_per_channel<space>(
      g, 2 * static_cast<unsigned>(g.channels),
      ordo::nn::detail::backward_sums<flat_f, flat_f, vec_d>{x, dy, mean, g.channels});
  if (!(sums(0) == sums(0))) std::abort();
}

// ordo's normalize pass, copied from batch_norm_forward_training (flat index, channel from
// (k / inner) % C per element).
void ordo_normalize_pass(const ordo::nn::detail::channel_geometry& g, const flat_f& x, const flat_f& y,
                         const vec_d& mean, const vec_d& invstd, const vec_f& gamma, const vec_f& beta) {
  const std::int64_t inner = g.inner, cs = g.channels;
  Kokkos::parallel_for(
      "bench ordo normalize pass", policy(0, static_cast<std::int64_t>(x.size())), KOKKOS_LAMBDA(std::int64_t k) {
        const std::int64_t c = (k / inner) % cs;
        y(k) = static_cast<float>((static_cast<double>(x(k)) - mean(c)) * invstd(c) * static_cast<double>(gamma(c)) +
                                  static_cast<double>(beta(c)));
      });
  space().fence();
}

// ordo's dx pass, copied from batch_norm_backward.
void ordo_dx_pass(const ordo::nn::detail::channel_geometry& g, const flat_f& x, const flat_f& dy, const flat_f& dx,
                  const vec_d& mean, const vec_d& invstd, const vec_d& coefficients, const vec_f& gamma) {
  const std::int64_t inner = g.inner, cs = g.channels;
  Kokkos::parallel_for(
      "bench ordo dx pass", policy(0, static_cast<std::int64_t>(x.size())), KOKKOS_LAMBDA(std::int64_t k) {
        const std::int64_t c = (k / inner) % cs;
        const double centered = static_cast<double>(x(k)) - mean(c);
        dx(k) = static_cast<float>((static_cast<double>(dy(k)) - coefficients(c) - centered * coefficients(cs + c)) *
                                   invstd(c) * static_cast<double>(gamma(c)));
      });
  space().fence();
}

// ------------------------------------------------------------------------------------------------
// "blocked": the same arithmetic as ordo (two statistics passes in double, the same per-element
// expressions), organized by (outer, channel) blocks so that no per-element division is needed
// and the inner loops are contiguous:
//   inner > 1 (channels first): statistics parallel over channels, each a private double sum
//     with 8 independent accumulators (so the adds do not wait on each other); element passes
//     parallel over (o, c) blocks, channel computed once per block;
//   inner == 1 (channels last, BatchNorm1d): statistics as a Kokkos array reduction over rows
//     with the channel loop innermost (contiguous, vectorizable); element passes over rows.
// Not part of ordo: a measured suggestion.
namespace blocked {

struct geometry {
  std::int64_t outer, channels, inner;
};

// sums(c) = sum over the channel of term(k) (one value per channel) or, with two terms, sums(c)
// and sums(C + c).
template <int Terms, class Term>
void channel_sums(const geometry& g, const vec_d& sums, Term term) {
  const std::int64_t outer = g.outer, cs = g.channels, inner = g.inner;
  if (inner > 1) {
    Kokkos::parallel_for(
        "blocked channel sums", policy(0, cs), KOKKOS_LAMBDA(std::int64_t c) {
          double acc[Terms][8] = {};
          for (std::int64_t o = 0; o < outer; ++o) {
            const std::int64_t base = (o * cs + c) * inner;
            std::int64_t i = 0;
            for (; i + 8 <= inner; i += 8) {
              for (int l = 0; l < 8; ++l) {
                double t[Terms];
                term(c, base + i + l, t);
                for (int s = 0; s < Terms; ++s) acc[s][l] += t[s];
              }
            }
            for (; i < inner; ++i) {
              double t[Terms];
              term(c, base + i, t);
              for (int s = 0; s < Terms; ++s) acc[s][0] += t[s];
            }
          }
          for (int s = 0; s < Terms; ++s) {
            double total = 0;
            for (int l = 0; l < 8; ++l) total += acc[s][l];
            sums(s * cs + c) = total;
          }
        });
  } else {
    struct reducer {
      using value_type = double[];
      using size_type = std::int64_t;
      unsigned value_count;
      std::int64_t cs;
      Term term;
      KOKKOS_INLINE_FUNCTION void operator()(std::int64_t o, double* __restrict__ s) const {
        const std::int64_t base = o * cs;
        for (std::int64_t c = 0; c < cs; ++c) {
          double t[Terms];
          term(c, base + c, t);
          for (int q = 0; q < Terms; ++q) s[q * cs + c] += t[q];
        }
      }
      KOKKOS_INLINE_FUNCTION void init(double* s) const {
        for (unsigned k = 0; k < value_count; ++k) s[k] = 0;
      }
      KOKKOS_INLINE_FUNCTION void join(volatile double* d, const volatile double* s) const {
        for (unsigned k = 0; k < value_count; ++k) d[k] = d[k] + s[k];
      }
    };
    auto host = Kokkos::create_mirror_view(sums);
    Kokkos::parallel_reduce("blocked channel sums (rows)", policy(0, outer),
                            reducer{static_cast<unsigned>(Terms * cs), cs, term}, host);
    Kokkos::deep_copy(sums, host);
  }
  space().fence();
}

// Applies f(c, k) to every element, with the channel known per block.
template <class F>
void for_each_element(const geometry& g, F f) {
  const std::int64_t cs = g.channels, inner = g.inner;
  if (inner > 1) {
    Kokkos::parallel_for(
        "blocked elements", policy(0, g.outer * cs), KOKKOS_LAMBDA(std::int64_t b) {
          const std::int64_t c = b % cs, base = b * inner;
          for (std::int64_t i = 0; i < inner; ++i) f(c, base + i);
        });
  } else {
    Kokkos::parallel_for(
        "blocked elements (rows)", policy(0, g.outer), KOKKOS_LAMBDA(std::int64_t o) {
          const std::int64_t base = o * cs;
          for (std::int64_t c = 0; c < cs; ++c) f(c, base + c);
        });
  }
  space().fence();
}

struct saved {
  vec_d mean, invstd;
};

void normalize(const geometry& g, const flat_f& x, const flat_f& y, const vec_d& mean, const vec_d& invstd,
               const vec_f& gamma, const vec_f& beta) {
  for_each_element(g, KOKKOS_LAMBDA(std::int64_t c, std::int64_t k) {
    y(k) = static_cast<float>((static_cast<double>(x(k)) - mean(c)) * invstd(c) * static_cast<double>(gamma(c)) +
                              static_cast<double>(beta(c)));
  });
}

saved forward_training(const geometry& g, const flat_f& x, const vec_f& gamma, const vec_f& beta,
                       const vec_f& running_mean, const vec_f& running_var, const flat_f& y, double eps,
                       double momentum) {
  const std::int64_t cs = g.channels;
  const double m = static_cast<double>(g.outer * g.inner);
  saved s{vec_d("mean", cs), vec_d("invstd", cs)};
  vec_d sums("sums", cs);
  channel_sums<1>(g, sums, KOKKOS_LAMBDA(std::int64_t, std::int64_t k, double* t) { t[0] = static_cast<double>(x(k)); });
  const auto mean = s.mean, invstd = s.invstd;
  Kokkos::parallel_for(
      "blocked mean", policy(0, cs), KOKKOS_LAMBDA(std::int64_t c) { mean(c) = sums(c) / m; });
  channel_sums<1>(g, sums, KOKKOS_LAMBDA(std::int64_t c, std::int64_t k, double* t) {
    const double d = static_cast<double>(x(k)) - mean(c);
    t[0] = d * d;
  });
  Kokkos::parallel_for(
      "blocked invstd", policy(0, cs), KOKKOS_LAMBDA(std::int64_t c) {
        invstd(c) = 1.0 / ordo::detail::math::sqrt(sums(c) / m + eps);
        running_mean(c) = static_cast<float>((1 - momentum) * static_cast<double>(running_mean(c)) + momentum * mean(c));
        running_var(c) =
            static_cast<float>((1 - momentum) * static_cast<double>(running_var(c)) + momentum * (sums(c) / (m - 1)));
      });
  space().fence();
  normalize(g, x, y, mean, invstd, gamma, beta);
  return s;
}

void backward(const geometry& g, const flat_f& dy, const flat_f& x, const vec_f& gamma, const saved& s,
              const flat_f& dx, const vec_f& dgamma, const vec_f& dbeta) {
  const std::int64_t cs = g.channels;
  const double m = static_cast<double>(g.outer * g.inner);
  const auto mean = s.mean, invstd = s.invstd;
  vec_d sums("sums", 2 * cs), coefficients("coefficients", 2 * cs);
  channel_sums<2>(g, sums, KOKKOS_LAMBDA(std::int64_t c, std::int64_t k, double* t) {
    const double d = static_cast<double>(dy(k));
    t[0] = d;
    t[1] = (static_cast<double>(x(k)) - mean(c)) * d;
  });
  Kokkos::parallel_for(
      "blocked coefficients", policy(0, cs), KOKKOS_LAMBDA(std::int64_t c) {
        const double sum_dy = sums(c), dotp = sums(cs + c), is = invstd(c);
        coefficients(c) = sum_dy / m;
        coefficients(cs + c) = is * is * dotp / m;
        dgamma(c) = static_cast<float>(dotp * is);
        dbeta(c) = static_cast<float>(sum_dy);
      });
  space().fence();
  for_each_element(g, KOKKOS_LAMBDA(std::int64_t c, std::int64_t k) {
    const double centered = static_cast<double>(x(k)) - mean(c);
    dx(k) = static_cast<float>((static_cast<double>(dy(k)) - coefficients(c) - centered * coefficients(cs + c)) *
                               invstd(c) * static_cast<double>(gamma(c)));
  });
}

}  // namespace blocked

// ------------------------------------------------------------------------------------------------
// Cases

struct timed_item {
  std::string name;
  std::function<void()> run;
  std::vector<double> seconds;
};

struct options {
  std::vector<std::string> cases{"nchw", "nhwc", "bn1d"};
  int min_rounds = 15, max_rounds = 400, warmup = 3;
  double min_seconds = 4.0;
  std::int64_t copy_elements = std::int64_t{1} << 26;
};

void time_rounds(std::vector<timed_item>& items, const options& opt) {
  using clock = std::chrono::steady_clock;
  for (int w = 0; w < opt.warmup; ++w)
    for (auto& it : items) it.run();
  const auto start = clock::now();
  for (int r = 0; r < opt.max_rounds; ++r) {
    for (auto& it : items) {
      const auto t0 = clock::now();
      it.run();
      const auto t1 = clock::now();
      it.seconds.push_back(std::chrono::duration<double>(t1 - t0).count());
    }
    if (r + 1 >= opt.min_rounds && std::chrono::duration<double>(clock::now() - start).count() >= opt.min_seconds) break;
  }
}

std::string json_items(const std::vector<timed_item>& items) {
  std::ostringstream s;
  s.precision(9);
  s << "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto& v = items[i].seconds;
    s << (i ? "," : "") << "\"" << items[i].name << "\":{\"median_s\":" << median_of(v)
      << ",\"q1_s\":" << quantile(v, 0.25) << ",\"q3_s\":" << quantile(v, 0.75)
      << ",\"min_s\":" << *std::min_element(v.begin(), v.end()) << ",\"reps\":" << v.size() << ",\"samples\":[";
    for (std::size_t k = 0; k < v.size(); ++k) s << (k ? "," : "") << v[k];
    s << "]}";
  }
  s << "}";
  return s.str();
}

void run_case(const std::string& name, const options& opt) {
  auto cp = make_case(name);
  case_base& bc = *cp;
  const auto g = bc.g;
  const std::int64_t n = bc.n, cs = bc.channels;
  const flat_f xf = bc.x, yf = bc.y, dyf = bc.dy, dxf = bc.dx;
  const vec_f gamma = bc.gamma, beta = bc.beta, rm = bc.running_mean, rv = bc.running_var, dgamma = bc.dgamma,
              dbeta = bc.dbeta;

  // One training step from fresh running statistics by ordo and by the blocked reference: the
  // blocked reference must give the same results (same arithmetic; only the order of the double
  // additions differs), else its timings would not mean anything.
  bc.reset_running();
  bc.forward();
  bc.backward();
  const blocked::geometry bg{g.outer, g.channels, g.inner};
  double blocked_max_diff = 0;
  {
    vec_f rm2("rm2", cs), rv2("rv2", cs), dgamma2("dgamma2", cs), dbeta2("dbeta2", cs);
    vec_f y2("y2", n), dx2("dx2", n);
    Kokkos::deep_copy(rv2, 1.0f);
    const flat_f y2f(y2.data(), n), dx2f(dx2.data(), n);
    auto s2 = blocked::forward_training(bg, xf, gamma, beta, rm2, rv2, y2f, 1e-5, 0.1);
    blocked::backward(bg, dyf, xf, gamma, s2, dx2f, dgamma2, dbeta2);
    auto cmp = [&](auto a, auto b) {
      auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
      auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
      for (std::size_t i = 0; i < ha.size(); ++i) {
        const double scale = std::max(1.0, std::fabs(static_cast<double>(ha(i))));
        blocked_max_diff =
            std::max(blocked_max_diff, std::fabs(static_cast<double>(ha(i)) - static_cast<double>(hb(i))) / scale);
      }
    };
    cmp(yf, y2f);
    cmp(dxf, dx2f);
    cmp(dgamma, dgamma2);
    cmp(dbeta, dbeta2);
    cmp(rm, rm2);
    cmp(rv, rv2);
    cmp(bc.saved.mean, s2.mean);
    cmp(bc.saved.invstd, s2.invstd);
  }

  vec_d sums("sums", 2 * cs), coefficients("coefficients", 2 * cs);
  Kokkos::deep_copy(coefficients, 0.01);
  blocked::saved bsaved;
  std::vector<timed_item> items;
  items.push_back({"ordo_forward", [&] { bc.forward(); }, {}});
  items.push_back({"ordo_backward", [&] { bc.backward(); }, {}});
  items.push_back({"ordo_stats_pass", [&] { ordo_stats_pass(g, xf); }, {}});
  items.push_back({"ordo_normalize_pass", [&] { ordo_normalize_pass(g, xf, yf, bc.saved.mean, bc.saved.invstd, gamma, beta); }, {}});
  items.push_back({"ordo_deviation_pass", [&] { ordo_deviation_pass(g, xf, bc.saved.mean); }, {}});
  items.push_back({"ordo_backward_sums_pass", [&] { ordo_backward_sums_pass(g, xf, dyf, bc.saved.mean); }, {}});
  items.push_back({"ordo_dx_pass", [&] { ordo_dx_pass(g, xf, dyf, dxf, bc.saved.mean, bc.saved.invstd, coefficients, gamma); }, {}});
  items.push_back({"blocked_forward", [&] { bsaved = blocked::forward_training(bg, xf, gamma, beta, rm, rv, yf, 1e-5, 0.1); }, {}});
  items.push_back({"blocked_backward", [&] { blocked::backward(bg, dyf, xf, gamma, bsaved, dxf, dgamma, dbeta); }, {}});
  items.push_back({"blocked_stats_pass",
                   [&] { blocked::channel_sums<1>(bg, sums, KOKKOS_LAMBDA(std::int64_t, std::int64_t k, double* t) { t[0] = static_cast<double>(xf(k)); }); },
                   {}});
  items.push_back({"blocked_normalize_pass", [&] { blocked::normalize(bg, xf, yf, bc.saved.mean, bc.saved.invstd, gamma, beta); }, {}});
  items.push_back({"copy", [&] { bc.copy_x(); }, {}});
  time_rounds(items, opt);

  std::printf(
      "{\"kind\":\"case\",\"case\":\"%s\",\"shape\":\"%s\",\"layout\":\"%s\",\"elements\":%lld,\"channels\":%lld,"
      "\"outer\":%lld,\"inner\":%lld,\"threads\":%d,\"blocked_max_rel_diff\":%.3g,\"items\":%s}\n",
      name.c_str(), bc.shape.c_str(), bc.layout.c_str(), static_cast<long long>(n), static_cast<long long>(cs),
      static_cast<long long>(g.outer), static_cast<long long>(g.inner), space().concurrency(), blocked_max_diff,
      json_items(items).c_str());
  std::fflush(stdout);
}

void run_large_copy(const options& opt) {
  const std::int64_t n = opt.copy_elements;
  vec_f a("a", n), b("b", n);
  Kokkos::deep_copy(a, 1.0f);
  const flat_f af(a.data(), n), bf(b.data(), n);
  std::vector<timed_item> items{{"copy", [&] { copy(bf, af); }, {}}};
  options o = opt;
  o.min_seconds = std::min(opt.min_seconds, 2.0);
  time_rounds(items, o);
  std::printf("{\"kind\":\"large_copy\",\"elements\":%lld,\"threads\":%d,\"items\":%s}\n", static_cast<long long>(n),
              space().concurrency(), json_items(items).c_str());
  std::fflush(stdout);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--cases") opt.cases = split(next());
    else if (a == "--min-rounds") opt.min_rounds = std::stoi(next());
    else if (a == "--max-rounds") opt.max_rounds = std::stoi(next());
    else if (a == "--min-seconds") opt.min_seconds = std::stod(next());
    else if (a == "--warmup") opt.warmup = std::stoi(next());
    else if (a == "--copy-elements") opt.copy_elements = std::stoll(next());
    else if (a.rfind("--kokkos", 0) == 0) continue;
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  for (const auto& c : opt.cases) run_case(c, opt);
  if (opt.copy_elements > 0) run_large_copy(opt);
  return 0;
}
