// bench_batch_norm: diagnostics of ordo::nn::batch_norm_forward_training + batch_norm_backward on
// Kokkos::OpenMP (run with OMP_NUM_THREADS=2 OMP_PROC_BIND=false), float, on the cases of
// cases.hpp: ordo's two calls, each of their four kernels timed alone, and a STREAM-like copy
// (Kokkos parallel_for y(i) = x(i)) at the case's size and on a large array.
// The comparison with PyTorch is timed by paired.py (ordo and PyTorch in one process); both are
// driven by bench/batch_norm/run.
//
// Timing: ordo_bench::time_rounds, --warmup untimed rounds, then rounds in which every timed item
// runs once, in turn, until --min-rounds and --min-seconds (or --max-rounds); every call fences
// before returning. Medians and quartiles.
//
// Output: one JSON object per line on stdout (cases, then the large copy), with every timed
// sample in seconds (samples[i] of every item of a case come from the same round i).
//
// Usage: bench_batch_norm [--cases nchw,nhwc,bn1d] [--min-rounds R] [--max-rounds R]
//                         [--min-seconds T] [--warmup W] [--copy-elements N]

#include "cases.hpp"
#include "bench_support.hpp"

#include <ordo/nn/batch_norm.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
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

using ordo_bench::split;
using ordo_bench::timed_item;

using namespace bench_bn;

// ------------------------------------------------------------------------------------------------
// Diagnostics: each of ordo's kernels alone, launched exactly as batch_norm_forward_training and
// batch_norm_backward launch them (the same functors from ordo::nn::detail, the same work
// partition), on the case's arrays.

struct kernel_timer {
  ordo::nn::detail::work_partition p;
  std::int64_t cs;
  vec_d partial_a, partial_b;
  vec_f coefficients;
  flat_f x, y, dy, dx;
  vec_d mean;

  kernel_timer(const case_base& bc)
      : p(ordo::nn::detail::partition_of(bc.g)),
        cs(bc.channels),
        partial_a("partial a", p.row_items * bc.channels),
        partial_b("partial b", p.row_items * bc.channels),
        coefficients("coefficients", 5 * bc.channels),
        x(bc.x),
        y(bc.y),
        dy(bc.dy),
        dx(bc.dx),
        mean(bc.saved.mean) {
    Kokkos::deep_copy(coefficients, 0.5f);
  }
  ordo::nn::detail::item_policy<space> items() const { return {0, p.items()}; }
  void statistics() const {
    Kokkos::parallel_for("bench statistics", items(),
                         ordo::nn::detail::dispatched(
                             ordo::nn::detail::item_moments_kernel<float>{p, x.data(), partial_a.data(), partial_b.data()}));
    space().fence();
  }
  void normalize() const {
    const float* k = coefficients.data();
    Kokkos::parallel_for("bench normalize", items(),
                         ordo::nn::detail::dispatched(ordo::nn::detail::normalize_kernel<float>{
                             p, x.data(), y.data(), {k, k + cs, k + 2 * cs, k + 3 * cs}}));
    space().fence();
  }
  void backward_sums() const {
    Kokkos::parallel_for("bench backward sums", items(),
                         ordo::nn::detail::dispatched(ordo::nn::detail::item_backward_sums_kernel<float>{
                             p, x.data(), dy.data(), mean.data(), partial_a.data(), partial_b.data()}));
    space().fence();
  }
  void input_gradient() const {
    const float* k = coefficients.data();
    Kokkos::parallel_for("bench input gradient", items(),
                         ordo::nn::detail::dispatched(ordo::nn::detail::input_gradient_kernel<float>{
                             p, x.data(), dy.data(), dx.data(), {k, k + cs, k + 2 * cs, k + 3 * cs, k + 4 * cs}}));
    space().fence();
  }
};

// ------------------------------------------------------------------------------------------------
// Cases

struct options {
  std::vector<std::string> cases{"nchw", "nhwc", "bn1d"};
  int min_rounds = 15, max_rounds = 400, warmup = 3;
  double min_seconds = 4.0;
  std::int64_t copy_elements = std::int64_t{1} << 26;
};

void time_rounds(std::vector<timed_item>& items, const options& opt) {
  ordo_bench::time_rounds(items, {opt.min_rounds, opt.max_rounds, opt.min_seconds}, opt.warmup);
}

std::string json_items(const std::vector<timed_item>& items) {
  std::ostringstream s;
  s.precision(9);
  s << "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto& v = items[i].samples;
    const ordo_bench::summary t = ordo_bench::summarize(v);
    s << (i ? "," : "") << "\"" << items[i].name << "\":{\"median_s\":" << t.median << ",\"q1_s\":" << t.q1
      << ",\"q3_s\":" << t.q3 << ",\"min_s\":" << t.min << ",\"reps\":" << t.reps << ",\"samples\":[";
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

  bc.reset_running();
  bc.forward();
  bc.backward();
  const kernel_timer k(bc);
  std::vector<timed_item> items;
  items.push_back({"ordo_forward", [&] { bc.forward(); }, {}});
  items.push_back({"ordo_backward", [&] { bc.backward(); }, {}});
  items.push_back({"statistics_kernel", [&] { k.statistics(); }, {}});
  items.push_back({"normalize_kernel", [&] { k.normalize(); }, {}});
  items.push_back({"backward_sums_kernel", [&] { k.backward_sums(); }, {}});
  items.push_back({"input_gradient_kernel", [&] { k.input_gradient(); }, {}});
  items.push_back({"copy", [&] { bc.copy_x(); }, {}});
  time_rounds(items, opt);

  std::printf(
      "{\"kind\":\"case\",\"case\":\"%s\",\"shape\":\"%s\",\"layout\":\"%s\",\"elements\":%lld,\"channels\":%lld,"
      "\"outer\":%lld,\"inner\":%lld,\"threads\":%d,\"work_items\":%lld,\"capability\":\"%s\",\"items\":%s}\n",
      name.c_str(), bc.shape.c_str(), bc.layout.c_str(), static_cast<long long>(n), static_cast<long long>(cs),
      static_cast<long long>(g.outer), static_cast<long long>(g.inner), space().concurrency(),
      static_cast<long long>(k.p.items()),
      ordo::detail::host_capability() == ordo::detail::cpu_capability::avx2 ? "avx2" : "baseline",
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

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  options opt;
  try {
    ordo_bench::for_each_option(argc, argv, [&](std::string_view a, const std::string& v) {
      if (a == "--cases") opt.cases = split(v);
      else if (a == "--min-rounds") opt.min_rounds = std::stoi(v);
      else if (a == "--max-rounds") opt.max_rounds = std::stoi(v);
      else if (a == "--min-seconds") opt.min_seconds = std::stod(v);
      else if (a == "--warmup") opt.warmup = std::stoi(v);
      else if (a == "--copy-elements") opt.copy_elements = std::stoll(v);
      else throw std::invalid_argument("unknown option " + std::string(a));
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_batch_norm: %s\n", e.what());
    return 2;
  }
  for (const auto& c : opt.cases) run_case(c, opt);
  if (opt.copy_elements > 0) run_large_copy(opt);
  return 0;
}
