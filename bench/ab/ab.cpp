// The same kernels timed against two versions of ordo's headers (bench/ab/run builds this file
// twice): batch norm training forward + backward on the shapes of bench/batch_norm, the exact sum
// of bench/reduce, softmax, and a 64^3 GEMM whose time is partly dispatch. It includes only
// <ordo/ordo.hpp> and names only long-standing entry points, so it compiles against older trees
// too. Prints "name microseconds" lines (medians).
#include <ordo/ordo.hpp>

#include "bench_support.hpp"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

// The median of timed calls (one warm-up call first), with bench_support's timing loop.
template <class F>
double median_seconds(F&& f, int reps) {
  std::vector<double> samples;
  ordo_bench::time_calls(f, ordo_bench::limits{reps, reps, 0.0}, samples);
  return ordo_bench::median(samples);
}

// Uniform values in [0, 2) from bench_support's splitmix64.
template <class View>
void fill(const View& v, std::uint64_t seed) {
  auto h = Kokkos::create_mirror_view(v);
  ordo_bench::splitmix64 rng{seed};
  auto* p = h.data();
  for (std::size_t i = 0; i < h.span(); ++i) {
    p[i] = static_cast<typename View::non_const_value_type>(2 * ordo_bench::unit_double(rng.next()));
  }
  Kokkos::deep_copy(v, h);
}

template <class View>
void bn(const char* name, const View& x, std::size_t c, ordo::nn::memory_format layout, int reps) {
  View y("y", x.layout()), dy("dy", x.layout()), dx("dx", x.layout());
  fill(dy, 3);
  Kokkos::View<float*> gamma("g", c), beta("b", c), rm("rm", c), rv("rv", c), dg("dg", c), db("db", c);
  Kokkos::deep_copy(gamma, 1.0f);
  Kokkos::deep_copy(rv, 1.0f);
  ordo::nn::batch_norm_options opt{.eps = 1e-5, .momentum = 0.1, .layout = layout};
  const double t = median_seconds([&] {
    auto saved = ordo::nn::batch_norm_forward_training(x, gamma, beta, rm, rv, y, opt);
    ordo::nn::batch_norm_backward(dy, x, gamma, saved, dx, dg, db, opt);
  }, reps);
  std::printf("%s\t%.1f\n", name, t * 1e6);
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  {
    Kokkos::View<float****> nchw("x", 32, 64, 56, 56);
    fill(nchw, 1);
    bn("batch_norm_fwd_bwd (32,64,56,56) NCHW", nchw, 64, ordo::nn::channels_first, 21);
    Kokkos::View<float****> nhwc("x", 32, 56, 56, 64);
    fill(nhwc, 1);
    bn("batch_norm_fwd_bwd (32,56,56,64) NHWC", nhwc, 64, ordo::nn::channels_last, 21);
    Kokkos::View<float**> bn1d("x", 256, 1024);
    fill(bn1d, 1);
    bn("batch_norm_fwd_bwd (256,1024)", bn1d, 1024, ordo::nn::channels_first, 201);
  }
  {
    Kokkos::View<float*> xf("xf", std::size_t{1} << 26);
    fill(xf, 5);
    float sf = 0;
    std::printf("exact_sum float 2^26\t%.1f\n", 1e6 * median_seconds([&] { sf = ordo::sum(xf); }, 11));
    Kokkos::View<double*> xd("xd", std::size_t{1} << 26);
    fill(xd, 6);
    double sd = 0;
    std::printf("exact_sum double 2^26\t%.1f\n", 1e6 * median_seconds([&] { sd = ordo::sum(xd); }, 11));
    Kokkos::View<float*> x1("x1", std::size_t{1} << 20);
    fill(x1, 7);
    std::printf("exact_sum float 2^20\t%.1f\n", 1e6 * median_seconds([&] { sf += ordo::sum(x1); }, 201));
    std::printf("# %g %g\n", double(sf), sd);
  }
  {
    Kokkos::View<float**> x("x", 1024, 8192), y("y", 1024, 8192);
    fill(x, 8);
    std::printf("softmax float (1024,8192)\t%.1f\n",
                1e6 * median_seconds([&] { ordo::nn::softmax(x, y); }, 21));
  }
  {
    Kokkos::View<double**> a("a", 64, 64), b("b", 64, 64), c("c", 64, 64);
    fill(a, 9);
    fill(b, 10);
    const Kokkos::DefaultExecutionSpace space;
    std::printf("gemm double 64^3 (dispatch)\t%.1f\n", 1e6 * median_seconds([&] {
                  ordo::gemm(space, 1.0, a, b, 0.0, c);
                  space.fence();
                }, 2001));
  }
}
