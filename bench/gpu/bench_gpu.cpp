// bench_gpu: ordo's kernels on Kokkos' default execution space (Kokkos::Cuda in the cuda preset),
// each beside the floor it should approach on the same device, in one run:
//   copy       Kokkos::deep_copy between two device Views (bytes read + written): the bandwidth
//              the memory-bound kernels are measured against;
//   batch_norm ordo::nn::batch_norm_forward_training + batch_norm_backward, float and bfloat16,
//              (32, 64, 56, 56) channels first and last, (256, 1024);
//   softmax    ordo::nn::softmax (4096, 32000), float and bfloat16;
//   sum        ordo::sum (exact) of 2^28 floats and doubles, beside a plain Kokkos::parallel_reduce,
//              and whether the device's exact sum has the host's bits;
//   mask       ordo::fill_sphere_mask 512^3, beside Kokkos::deep_copy(view, 0) (a device memset);
//   chain      ordo::multiply and ordo::evaluate (into a preallocated result) of bench_chain_eval's
//              clrs_x10 chain and a six-matrix chain of about 1000, beside the same products called
//              by hand in the planned order through ordo::gemm (cuBLAS on a GPU) into preallocated
//              temporaries; and H^T H x.
// bench/gpu/peers.py times PyTorch on the same shapes and writes the tables with ratios.
//
// Timing: each item runs `--warmup` times, then rounds of `--batch` back-to-back calls, each
// round fenced once and timed by the wall clock, until `--min-seconds` and `--min-rounds`; the
// time per call is the median round's time over the batch.
//
// Output: one JSON object per line (--out FILE, else stdout):
//   {"group": ..., "case": ..., "contender": ..., "seconds": median, "q1": ..., "q3": ...,
//    "bytes": bytes the call must move at least (0 where not a bandwidth case), "note": ...}
//
// Usage: bench_gpu [--out FILE] [--scale S] [--min-seconds T] [--min-rounds R] [--batch B]
//                  [--warmup W] [--groups copy,batch_norm,softmax,sum,mask,chain]
//   --scale S divides the big sizes by S (a quick run on a CPU).

#include "bench_support.hpp"

#include <ordo/expression.hpp>
#include <ordo/kernels/mask.hpp>
#include <ordo/kernels/multiply.hpp>
#include <ordo/kernels/reduce.hpp>
#include <ordo/nn/batch_norm.hpp>
#include <ordo/nn/softmax.hpp>
#include <ordo/core/float16.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using space = Kokkos::DefaultExecutionSpace;
using memory = space::memory_space;
using index_policy = Kokkos::RangePolicy<space, Kokkos::IndexType<std::int64_t>>;

struct options {
  std::string out;
  std::int64_t scale = 1;
  double min_seconds = 0.4;
  int min_rounds = 10, batch = 10, warmup = 3;
  std::vector<std::string> groups{"copy", "batch_norm", "softmax", "sum", "mask", "chain"};
  bool wants(const std::string& g) const { return std::find(groups.begin(), groups.end(), g) != groups.end(); }
};

std::ostream* output = &std::cout;

// Median seconds per call of f (which need not fence), with quartiles.
template <class F>
ordo_bench::summary time_per_call(const options& opt, F&& f) {
  for (int i = 0; i < opt.warmup; ++i) f();
  space().fence();
  std::vector<double> rounds;
  double total = 0.0;
  while (static_cast<int>(rounds.size()) < opt.min_rounds || total < opt.min_seconds) {
    const double s = ordo_bench::seconds_of([&] {
      for (int i = 0; i < opt.batch; ++i) f();
      space().fence();
    });
    rounds.push_back(s / opt.batch);
    total += s;
    if (rounds.size() >= 2000) break;
  }
  return ordo_bench::summarize(rounds);
}

void emit(const std::string& group, const std::string& name, const std::string& contender,
          const ordo_bench::summary& t, double bytes, const std::string& note = "") {
  std::ostringstream line;
  line.precision(6);
  line << "{\"group\":\"" << group << "\",\"case\":\"" << name << "\",\"contender\":\"" << contender
       << "\",\"seconds\":" << t.median << ",\"q1\":" << t.q1 << ",\"q3\":" << t.q3 << ",\"bytes\":" << bytes
       << ",\"note\":\"" << note << "\"}";
  *output << line.str() << std::endl;
  std::fprintf(stderr, "  %-10s %-28s %-22s %10.1f us%s\n", group.c_str(), name.c_str(), contender.c_str(),
               t.median * 1e6, bytes > 0 ? (" " + std::to_string(static_cast<int>(bytes / t.median / 1e9)) + " GB/s").c_str() : "");
}

// x(i) = uniform[-1, 1) + offset * (i / stride % channels), from splitmix64 (bench_support.hpp).
template <class View>
void fill_uniform(const View& v, std::uint64_t seed, double channel_step = 0.0, std::int64_t stride = 1,
                  std::int64_t channels = 1) {
  using T = typename View::value_type;
  T* const data = v.data();
  Kokkos::parallel_for("bench_gpu fill", index_policy(0, static_cast<std::int64_t>(v.size())),
                       KOKKOS_LAMBDA(std::int64_t i) {
                         const double u = 2.0 * ordo_bench::unit_double(ordo_bench::splitmix64::at(seed, i)) - 1.0;
                         const double c = static_cast<double>((i / stride) % channels);
                         data[i] = T(static_cast<float>(u + channel_step * c));
                       });
}

// ---- copy --------------------------------------------------------------------------------------

void bench_copy(const options& opt) {
  const std::int64_t n = (std::int64_t{1} << 28) / opt.scale;
  Kokkos::View<float*, memory> a(Kokkos::view_alloc("a", Kokkos::WithoutInitializing), n);
  Kokkos::View<float*, memory> b(Kokkos::view_alloc("b", Kokkos::WithoutInitializing), n);
  fill_uniform(a, 1);
  emit("copy", "2^28 float", "kokkos_deep_copy", time_per_call(opt, [&] { Kokkos::deep_copy(space(), b, a); }),
       2.0 * static_cast<double>(n) * sizeof(float));
}

// ---- batch norm --------------------------------------------------------------------------------

template <class T, class XView>
void bench_batch_norm_case(const options& opt, const std::string& name, const XView& x, ordo::nn::memory_format format,
                           std::int64_t channels, std::int64_t channel_stride) {
  const XView y("y", x.layout()), dy("dy", x.layout()), dx("dx", x.layout());
  const auto flat = [](const XView& v) {
    return Kokkos::View<T*, memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(v.data(), v.size());
  };
  fill_uniform(flat(x), 11, 0.01, channel_stride, channels);
  fill_uniform(flat(dy), 12);
  Kokkos::View<float*, memory> gamma("gamma", channels), beta("beta", channels), running_mean("rm", channels),
      running_var("rv", channels), dgamma("dgamma", channels), dbeta("dbeta", channels);
  Kokkos::deep_copy(gamma, 1.0f);
  Kokkos::deep_copy(running_var, 1.0f);
  const ordo::nn::batch_norm_options o{.eps = 1e-5, .momentum = 0.1, .layout = format};
  auto saved = ordo::nn::batch_norm_forward_training(x, gamma, beta, running_mean, running_var, y, o);
  const double n = static_cast<double>(x.size());
  // At least: the forward reads x twice (statistics, normalize) and writes y; the backward reads
  // x and dy twice (sums, input gradient) and writes dx. 8 passes over the elements.
  const double bytes = 8.0 * n * sizeof(T);
  const std::string type = std::is_same_v<T, float> ? "float" : "bfloat16";
  emit("batch_norm", name + " " + type, "ordo_forward_backward", time_per_call(opt, [&] {
         saved = ordo::nn::batch_norm_forward_training(x, gamma, beta, running_mean, running_var, y, o);
         ordo::nn::batch_norm_backward(dy, x, gamma, saved, dx, dgamma, dbeta, o);
       }),
       bytes);
}

template <class T>
void bench_batch_norm(const options& opt) {
  using view4 = Kokkos::View<T****, Kokkos::LayoutRight, memory>;
  using view2 = Kokkos::View<T**, Kokkos::LayoutRight, memory>;
  const std::int64_t batch = std::max<std::int64_t>(1, 32 / opt.scale);
  bench_batch_norm_case<T>(opt, "(32,64,56,56) NCHW", view4("x", batch, 64, 56, 56), ordo::nn::channels_first, 64,
                           56 * 56);
  bench_batch_norm_case<T>(opt, "(32,64,56,56) NHWC", view4("x", batch, 56, 56, 64), ordo::nn::channels_last, 64, 1);
  bench_batch_norm_case<T>(opt, "(256,1024)", view2("x", 256, 1024), ordo::nn::channels_first, 1024, 1);
}

// ---- softmax -----------------------------------------------------------------------------------

template <class T>
void bench_softmax(const options& opt) {
  const std::int64_t rows = std::max<std::int64_t>(1, 4096 / opt.scale), cols = 32000;
  Kokkos::View<T**, Kokkos::LayoutRight, memory> x("x", rows, cols), y("y", rows, cols);
  fill_uniform(Kokkos::View<T*, memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(x.data(), x.size()), 21);
  const std::string type = std::is_same_v<T, float> ? "float" : "bfloat16";
  emit("softmax", "(4096,32000) " + type, "ordo_softmax", time_per_call(opt, [&] { ordo::nn::softmax(space(), x, y); }),
       2.0 * static_cast<double>(x.size()) * sizeof(T));
}

// ---- exact sum ---------------------------------------------------------------------------------

template <class T>
void bench_sum(const options& opt) {
  const std::int64_t n = (std::int64_t{1} << 28) / opt.scale;
  Kokkos::View<T*, memory> x(Kokkos::view_alloc("x", Kokkos::WithoutInitializing), n);
  fill_uniform(x, 31);
  const std::string type = std::is_same_v<T, float> ? "float" : "double";
  const double bytes = static_cast<double>(n) * sizeof(T);
  T device_sum{};
  emit("sum", "2^28 " + type, "ordo_exact", time_per_call(opt, [&] { device_sum = ordo::sum(space(), x); }), bytes);
  T plain{};
  emit("sum", "2^28 " + type, "kokkos_parallel_reduce", time_per_call(opt, [&] {
         Kokkos::parallel_reduce("bench_gpu plain sum", index_policy(0, n),
                                 KOKKOS_LAMBDA(std::int64_t i, T & s) { s += x(i); }, plain);
       }),
       bytes);
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  const T host_sum = ordo::sum(Kokkos::DefaultHostExecutionSpace(), host);
  const bool same = std::bit_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>(host_sum) ==
                    std::bit_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>(device_sum);
  std::ostringstream note;
  note.precision(17);
  note << "device " << device_sum << ", host " << host_sum << (same ? ": same bits" : ": DIFFERENT BITS");
  emit("sum", "2^28 " + type, "host_bits_check", {0, 0, 0, 0, 0}, 0, note.str());
}

// ---- sphere mask -------------------------------------------------------------------------------

void bench_mask(const options& opt) {
  const std::int64_t n = 512, slow = std::max<std::int64_t>(1, n / opt.scale);
  Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, memory> mask("mask", slow, n, n);
  const double bytes = static_cast<double>(mask.size());
  emit("mask", "512^3 sphere", "ordo_fill_sphere_mask", time_per_call(opt, [&] {
         ordo::fill_sphere_mask(space(), mask, {255.5, 255.5, 255.5}, 200.0);
       }),
       bytes);
  emit("mask", "512^3 sphere", "device_memset", time_per_call(opt, [&] { Kokkos::deep_copy(space(), mask, 0); }),
       bytes);
}

// ---- chains ------------------------------------------------------------------------------------

using dmatrix = ordo::matrix<double, ordo::dynamic, ordo::dynamic, space>;
using dview = dmatrix::view_type;

template <std::size_t N>
void bench_chain(const options& opt, const std::string& name, const std::array<std::size_t, N + 1>& dims) {
  std::vector<dmatrix> m;
  for (std::size_t k = 0; k < N; ++k) {
    m.emplace_back(dims[k], dims[k + 1]);
    const auto v = m.back().view();
    fill_uniform(Kokkos::View<double*, memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(v.data(), v.size()), 40 + k);
  }
  const auto plan = ordo::plan_chain(std::span<const std::size_t>(dims));
  const std::string label = name + " " + std::string(plan.order());
  const auto all = [&](const auto& f) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) { return f(m[I]...); }(std::make_index_sequence<N>{});
  };
  std::vector<dmatrix> last;
  emit("chain", label, "ordo_multiply", time_per_call(opt, [&] {
         last.clear();
         last.push_back(all([](const auto&... a) { return ordo::multiply(a...); }));
       }),
       0);
  const dmatrix result(plan.rows(), plan.cols());
  emit("chain", label, "ordo_evaluate_preallocated", time_per_call(opt, [&] {
         all([&](const auto&... a) {
           ordo::evaluate(space(), ordo::chain(a...), result);
           return 0;
         });
       }),
       0);
  // By hand: the planned products, in order, through ordo::gemm (cuBLAS on Kokkos::Cuda), into
  // temporaries allocated before timing.
  std::vector<dview> node(2 * N - 1);
  for (std::size_t k = 0; k < N; ++k) node[k] = m[k].view();
  std::vector<dmatrix> temporaries;
  for (const auto& p : plan.products()) temporaries.emplace_back(p.rows, p.cols);
  emit("chain", label, "hand_ordered_gemm", time_per_call(opt, [&] {
         for (std::size_t p = 0; p < plan.products().size(); ++p) {
           const auto& step = plan.products()[p];
           ordo::gemm(space(), 1.0, node[step.left], node[step.right], 0.0, temporaries[p].view());
           node[N + p] = temporaries[p].view();
         }
       }),
       0);
}

void bench_normal_equations(const options& opt) {
  const std::size_t rows = 20000 / static_cast<std::size_t>(opt.scale), cols = 300;
  const dmatrix h(rows, cols), x(cols, 1);
  fill_uniform(Kokkos::View<double*, memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(h.view().data(), h.view().size()), 51);
  fill_uniform(Kokkos::View<double*, memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(x.view().data(), x.view().size()), 52);
  const dmatrix r(cols, 1), hx(rows, 1);
  const std::string label = "H^T H x, H " + std::to_string(rows) + "x300";
  emit("chain", label, "ordo_evaluate_preallocated",
       time_per_call(opt, [&] { ordo::evaluate(space(), ordo::transpose(h) * h * x, r); }), 0);
  emit("chain", label, "hand_ordered_gemm", time_per_call(opt, [&] {
         ordo::gemm(space(), 1.0, h.view(), x.view(), 0.0, hx.view());
         ordo::gemm(space(), 1.0, ordo::transpose(h).view(), hx.view(), 0.0, r.view());
       }),
       0);
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  options opt;
  try {
    ordo_bench::for_each_option(argc, argv, [&](std::string_view a, const std::string& v) {
      if (a == "--out") opt.out = v;
      else if (a == "--scale") opt.scale = std::stoll(v);
      else if (a == "--min-seconds") opt.min_seconds = std::stod(v);
      else if (a == "--min-rounds") opt.min_rounds = std::stoi(v);
      else if (a == "--batch") opt.batch = std::stoi(v);
      else if (a == "--warmup") opt.warmup = std::stoi(v);
      else if (a == "--groups") opt.groups = ordo_bench::split(v);
      else throw std::invalid_argument("unknown option " + std::string(a));
    });
    if (opt.scale < 1) throw std::invalid_argument("--scale must be at least 1");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gpu: %s\n", e.what());
    return 2;
  }
  std::ofstream file;
  if (!opt.out.empty()) {
    file.open(opt.out);
    if (!file) {
      std::fprintf(stderr, "bench_gpu: cannot write %s\n", opt.out.c_str());
      return 1;
    }
    output = &file;
  }
  std::fprintf(stderr, "bench_gpu on %s (concurrency %d)\n", space::name(), space().concurrency());
  if (opt.wants("copy")) bench_copy(opt);
  if (opt.wants("batch_norm")) {
    bench_batch_norm<float>(opt);
    bench_batch_norm<ordo::bfloat16>(opt);
  }
  if (opt.wants("softmax")) {
    bench_softmax<float>(opt);
    bench_softmax<ordo::bfloat16>(opt);
  }
  if (opt.wants("sum")) {
    bench_sum<float>(opt);
    bench_sum<double>(opt);
  }
  if (opt.wants("mask")) bench_mask(opt);
  if (opt.wants("chain")) {
    bench_chain<6>(opt, "clrs_x10", {300, 350, 150, 50, 100, 200, 250});
    bench_chain<6>(opt, "six_1000", {1000, 900, 1100, 800, 1200, 950, 1050});
    bench_normal_equations(opt);
  }
  return 0;
}
