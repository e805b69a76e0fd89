// bench_gpu (scripts/gpu-check; bench/gpu/peers.py adds PyTorch): ordo's kernels on Kokkos' default execution
// space beside the floors they should approach there: a device copy, a plain Kokkos::parallel_reduce, a device
// memset and the planned products by hand through ordo::gemm. Each item: 3 warm-up calls, then rounds of 10 calls
// fenced once until 10 rounds and --min-seconds; its time is the median round over 10. One JSON line per item
// (--out FILE, else stdout): group, case, contender, seconds, q1, q3, bytes (moved at least; 0: none), note.
//   bench_gpu [--out FILE] [--scale S (divides the big sizes)] [--min-seconds T] [--only GROUP,...] [--case TEXT]
// --case times only the cases whose name contains TEXT (scripts/gpu-check profiles one shape at a time).
// --only runs the named groups (copy, batch_norm, softmax, sum, mask, structured, chain): scripts/gpu-check runs
// each group in a process of its own, so that a kernel that faults loses its own group only (a
// CUDA fault ends the process's context).
#include "bench_support.hpp"

#include <ordo/ordo.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>

namespace {

using space = Kokkos::DefaultExecutionSpace;
using memory = space::memory_space;
using index_policy = Kokkos::RangePolicy<space, Kokkos::IndexType<std::int64_t>>;
template <class T>
using view2 = Kokkos::View<T**, Kokkos::LayoutRight, memory>;
using dmatrix = ordo::matrix<double, ordo::dynamic, ordo::dynamic, space>;
std::ostream* output = &std::cout;
std::int64_t scale = 1;
double min_seconds = 0.4;
std::string only;  // empty: every group
std::string case_filter;  // --case: only the cases whose name contains it (a profile of one shape)

bool wanted(const std::string& group) {
  if (only.empty()) return true;
  const std::vector<std::string> groups = ordo_bench::split(only);
  return std::find(groups.begin(), groups.end(), group) != groups.end();
}

void emit(const std::string& group, const std::string& name, const std::string& contender,
          const ordo_bench::summary& t, double bytes, const std::string& note = "") {
  *output << "{\"group\":\"" << group << "\",\"case\":\"" << name << "\",\"contender\":\"" << contender
          << "\",\"seconds\":" << t.median << ",\"q1\":" << t.q1 << ",\"q3\":" << t.q3 << ",\"bytes\":" << bytes
          << ",\"note\":\"" << note << "\"}" << std::endl;
  std::fprintf(stderr, "  %-10s %-28s %-28s %10.1f us\n", group.c_str(), name.c_str(), contender.c_str(), t.median * 1e6);
}

// Times f (which need not fence) and emits its line.
template <class F>
void bench(const std::string& group, const std::string& name, const std::string& contender, double bytes, F&& f) {
  if (!case_filter.empty() && name.find(case_filter) == std::string::npos) return;
  // Warm-up: at least 3 calls and 50 ms, so that the first case of a process does not time the
  // GPU's clocks rising (the sixth GPU session's first rows ran a few percent slow).
  const auto warm_start = std::chrono::steady_clock::now();
  for (int i = 0; i < 3 || std::chrono::steady_clock::now() - warm_start < std::chrono::milliseconds(50); ++i) {
    f();
    space().fence();
  }
  std::vector<double> rounds;
  ordo_bench::repeat({10, 2000, min_seconds}, [&] {
    const double s = ordo_bench::seconds_of([&] {
      for (int i = 0; i < 10; ++i) f();
      space().fence();
    });
    rounds.push_back(s / 10);
    return s;
  });
  emit(group, name, contender, ordo_bench::summarize(rounds), bytes);
}

template <class T>
std::string type_name() {
  return std::is_same_v<T, float> ? "float" : std::is_same_v<T, double> ? "double" : "bfloat16";
}

// v.data()[i] = uniform[-1, 1) + step * (i / stride % channels), from splitmix64 (bench_support.hpp).
template <class View>
void fill(const View& v, std::uint64_t seed, double step = 0.0, std::int64_t stride = 1, std::int64_t channels = 1) {
  using T = typename View::value_type;
  T* const data = v.data();
  Kokkos::parallel_for("bench_gpu fill", index_policy(0, static_cast<std::int64_t>(v.size())),
                       KOKKOS_LAMBDA(std::int64_t i) {
                         const double u = 2.0 * ordo_bench::unit_double(ordo_bench::splitmix64::at(seed, i)) - 1.0;
                         data[i] = T(static_cast<float>(u + step * static_cast<double>((i / stride) % channels)));
                       });
}

template <class T, class View>
void batch_norm(const std::string& name, const View& x, ordo::nn::memory_format format, std::int64_t channels,
                std::int64_t channel_stride) {
  const View y("y", x.layout()), dy("dy", x.layout()), dx("dx", x.layout());
  fill(x, 11, 0.01, channel_stride, channels);
  fill(dy, 12);
  Kokkos::View<float*, memory> gamma("gamma", channels), beta("beta", channels), running_mean("rm", channels),
      running_var("rv", channels), dgamma("dgamma", channels), dbeta("dbeta", channels);
  Kokkos::deep_copy(gamma, 1.0f);
  Kokkos::deep_copy(running_var, 1.0f);
  const ordo::nn::batch_norm_options o{.eps = 1e-5, .momentum = 0.1, .layout = format};
  // At least 8 passes over the elements: the forward reads x twice (statistics, normalize) and
  // writes y; the backward reads x and dy twice (sums, input gradient) and writes dx.
  bench("batch_norm", name + " " + type_name<T>(), "ordo_forward_backward", 8.0 * double(x.size() * sizeof(T)), [&] {
    const auto saved = ordo::nn::batch_norm_forward_training(x, gamma, beta, running_mean, running_var, y, o);
    ordo::nn::batch_norm_backward(dy, x, gamma, saved, dx, dgamma, dbeta, o);
  });
}

template <class T>
void batch_norm() {
  using view4 = Kokkos::View<T****, Kokkos::LayoutRight, memory>;
  const std::int64_t batch = std::max<std::int64_t>(1, 32 / scale);
  batch_norm<T>("(32,64,56,56) NCHW", view4("x", batch, 64, 56, 56), ordo::nn::channels_first, 64, 56 * 56);
  batch_norm<T>("(32,64,56,56) NHWC", view4("x", batch, 56, 56, 64), ordo::nn::channels_last, 64, 1);
  batch_norm<T>("(256,1024)", view2<T>("x", 256, 1024), ordo::nn::channels_first, 1024, 1);
}

template <class T>
void softmax() {
  const view2<T> x("x", std::max<std::int64_t>(1, 4096 / scale), 32000), y("y", x.extent(0), 32000);
  fill(x, 21);
  bench("softmax", "(4096,32000) " + type_name<T>(), "ordo_softmax", 2.0 * double(x.size() * sizeof(T)),
        [&] { ordo::nn::softmax(space(), x, y); });
  // A design sweep: the team-per-row kernel's lanes around the default (softmax_row_lanes = 64).
  const Kokkos::View<ordo::compute_type_t<T>*, memory> no_lse;
  for (const int lanes : {128, 1024}) {
    bench("softmax", "(4096,32000) " + type_name<T>(), "ordo_softmax_lanes_" + std::to_string(lanes),
          2.0 * double(x.size() * sizeof(T)), [&] {
            ordo::nn::detail::forward<ordo::nn::detail::softmax_op::softmax, ordo::detail::launch_shape::device>(
                space(), x, y, no_lse, ordo::nn::detail::softmax_wide_row_min, lanes);
          });
  }
}

template <class T>
void sum() {
  const Kokkos::View<T*, memory> x(Kokkos::view_alloc("x", Kokkos::WithoutInitializing), (1 << 28) / scale);
  fill(x, 31);
  const std::string name = "2^28 " + type_name<T>();
  T device_sum{}, plain{};
  bench("sum", name, "ordo_exact", double(x.size() * sizeof(T)), [&] { device_sum = ordo::sum(space(), x); });
  bench("sum", name, "kokkos_parallel_reduce", double(x.size() * sizeof(T)), [&] {
    Kokkos::parallel_reduce("bench_gpu plain sum", index_policy(0, static_cast<std::int64_t>(x.size())),
                            KOKKOS_LAMBDA(std::int64_t i, T & s) { s += x(i); }, plain);
  });
  const T host_sum =
      ordo::sum(Kokkos::DefaultHostExecutionSpace(), Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x));
  using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  std::ostringstream note;
  note.precision(17);
  note << "device " << device_sum << ", host " << host_sum
       << (std::bit_cast<bits>(host_sum) == std::bit_cast<bits>(device_sum) ? ": same bits" : ": DIFFERENT BITS");
  emit("sum", name, "host_bits_check", {}, 0, note.str());
}

template <std::size_t N>
void chain(const std::string& name, const std::array<std::size_t, N + 1>& dims) {
  std::vector<dmatrix> m;
  for (std::size_t k = 0; k < N; ++k) fill(m.emplace_back(dims[k], dims[k + 1]).view(), 40 + k);
  const auto plan = ordo::plan_chain(std::span<const std::size_t>(dims));
  const std::string label = name + " " + std::string(plan.order());
  const auto all = [&](const auto& f) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) { return f(m[I]...); }(std::make_index_sequence<N>{});
  };
  bench("chain", label, "ordo_multiply", 0, [&] { all([](const auto&... a) { return ordo::multiply(a...); }); });
  const dmatrix result(plan.rows(), plan.cols());
  bench("chain", label, "ordo_evaluate_preallocated", 0, [&] {
    all([&](const auto&... a) { return (ordo::evaluate(space(), ordo::chain(a...), result), 0); });
  });
  // The planned products in order, through ordo::gemm, into temporaries allocated before timing.
  std::vector<dmatrix::view_type> node(2 * N - 1);
  for (std::size_t k = 0; k < N; ++k) node[k] = m[k].view();
  std::vector<dmatrix> temporaries;
  for (const auto& p : plan.products()) temporaries.emplace_back(p.rows, p.cols);
  bench("chain", label, "hand_ordered_gemm", 0, [&] {
    for (std::size_t p = 0; p < plan.products().size(); ++p) {
      const auto& step = plan.products()[p];
      ordo::gemm(space(), 1.0, node[step.left], node[step.right], 0.0, temporaries[p].view());
      node[N + p] = temporaries[p].view();
    }
  });
}

// Structured chains: on a device space ordo::evaluate runs them on the portable kernels (cuSOLVER
// is not called yet); the one cuBLAS GEMM of X^T X is the yardstick for the first product. On a
// host space the same calls take the host's BLAS and LAPACK.
void structured() {
  const std::size_t m = 4096 / static_cast<std::size_t>(scale), p = 256, n = 512;
  const dmatrix x(m, p), y(m, 1), beta(p, 1), gram(p, p), l(n, n), a(n, n), w(n, n), d(m, 1), big(m, m), dwd(m, m);
  fill(x.view(), 61), fill(y.view(), 62), fill(a.view(), 63), fill(d.view(), 64), fill(big.view(), 65);
  // A well-conditioned lower triangle: 2 on the diagonal, small values below it.
  Kokkos::deep_copy(l.view(), 0.0);
  const auto lv = l.view();
  Kokkos::parallel_for(
      "bench lower", index_policy(0, static_cast<std::int64_t>(n * n)), KOKKOS_LAMBDA(std::int64_t e) {
        const auto i = e / static_cast<std::int64_t>(n), j = e % static_cast<std::int64_t>(n);
        if (i == j) lv(i, j) = 2.0;
        else if (j < i) lv(i, j) = 0.001 * static_cast<double>((i * 7 + j * 13) % 17);
      });
  const std::string ls = "(X^T X)^-1 X^T y, X " + std::to_string(m) + "x" + std::to_string(p);
  bench("structured", ls, "ordo_evaluate_preallocated", 0, [&] {
    ordo::evaluate(space(), ordo::inverse(ordo::spd(ordo::gram(x))) * ordo::transpose(x) * y, beta);
  });
  bench("structured", ls, "gemm_xtx_only", 0,
        [&] { ordo::gemm(space(), 1.0, ordo::transpose(x).view(), x.view(), 0.0, gram.view()); });
  bench("structured", "L^-1 A L^-T, " + std::to_string(n) + "^2", "ordo_evaluate_preallocated", 0, [&] {
    ordo::evaluate(space(), ordo::inverse(ordo::lower(l)) * a * ordo::transpose(ordo::inverse(ordo::lower(l))), w);
  });
  bench("structured", "D W D, " + std::to_string(m) + "^2", "ordo_evaluate_preallocated",
        2.0 * double(m * m * sizeof(double)),
        [&] { ordo::evaluate(space(), ordo::diagonal(d) * big * ordo::diagonal(d), dwd); });
}

}  // namespace

int main(int argc, char** argv) try {
  Kokkos::ScopeGuard guard(argc, argv);
  std::ofstream file;
  ordo_bench::for_each_option(argc, argv, [&](std::string_view a, const std::string& v) {
    if (a == "--out") output = &(file = std::ofstream(v));
    else if (a == "--scale") scale = std::max(1LL, std::stoll(v));
    else if (a == "--min-seconds") min_seconds = std::stod(v);
    else if (a == "--only") only = v;
    else if (a == "--case") case_filter = v;
    else throw std::invalid_argument("unknown option " + std::string(a));
  });
  if (!*output) throw std::runtime_error("cannot write the --out file");
  std::fprintf(stderr, "bench_gpu on %s (concurrency %d)\n", space::name(), space().concurrency());
  if (wanted("copy")) {
    const Kokkos::View<float*, memory> a(Kokkos::view_alloc("a", Kokkos::WithoutInitializing), (1 << 28) / scale),
        b(Kokkos::view_alloc("b", Kokkos::WithoutInitializing), a.size());
    fill(a, 1);
    bench("copy", "2^28 float", "kokkos_deep_copy", 2.0 * double(a.size() * sizeof(float)),
          [&] { Kokkos::deep_copy(space(), b, a); });
  }
  if (wanted("batch_norm")) {
    batch_norm<float>();
    batch_norm<ordo::bfloat16>();
  }
  if (wanted("softmax")) {
    softmax<float>();
    softmax<ordo::bfloat16>();
  }
  if (wanted("sum")) {
    sum<float>();
    sum<double>();
  }
  if (wanted("mask")) {
    Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, memory> mask("mask", std::max<std::int64_t>(1, 512 / scale),
                                                                    512, 512);
    bench("mask", "512^3 sphere", "ordo_fill_sphere_mask", double(mask.size()),
          [&] { ordo::fill_sphere_mask(space(), mask, {255.5, 255.5, 255.5}, 200.0); });
    bench("mask", "512^3 sphere", "device_memset", double(mask.size()), [&] { Kokkos::deep_copy(space(), mask, 0); });
  }
  if (wanted("structured")) structured();
  if (!wanted("chain")) return 0;
  chain<6>("clrs_x10", {300, 350, 150, 50, 100, 200, 250});
  chain<6>("six_1000", {1000, 900, 1100, 800, 1200, 950, 1050});
  const std::size_t rows = 20000 / static_cast<std::size_t>(scale);  // H^T H x
  const dmatrix h(rows, 300), x(300, 1), r(300, 1), hx(rows, 1);
  fill(h.view(), 51);
  fill(x.view(), 52);
  const std::string label = "H^T H x, H " + std::to_string(rows) + "x300";
  bench("chain", label, "ordo_evaluate_preallocated", 0,
        [&] { ordo::evaluate(space(), ordo::transpose(h) * h * x, r); });
  bench("chain", label, "hand_ordered_gemm", 0, [&] {
    ordo::gemm(space(), 1.0, h.view(), x.view(), 0.0, hx.view());
    ordo::gemm(space(), 1.0, ordo::transpose(h).view(), hx.view(), 0.0, r.view());
  });
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_gpu: %s\n", e.what());
  return 2;
}
