// The same kernels timed against two versions of ordo's headers (bench/run ab builds this file
// twice): batch norm training forward + backward on bench/batch_norm's shapes, the exact sum,
// softmax, a 64^3 GEMM whose time is partly dispatch, and small static products written with *. Only <ordo/ordo.hpp> and long-standing
// entry points, so that it compiles against older trees too. Prints "name<TAB>microseconds" lines
// (medians of timed calls after one warm-up call).
#include <ordo/ordo.hpp>

#include "bench_support.hpp"

#include <cstdio>

namespace {

template <class F>
void timed(const char* name, int reps, F&& f) {
  std::vector<double> samples;
  ordo_bench::time_calls(f, ordo_bench::limits{reps, reps, 0.0}, samples);
  std::printf("%s\t%.3f\n", name, 1e6 * ordo_bench::median(samples));
}

// Uniform values in [0, 2) from bench_support's splitmix64.
template <class View>
View filled(View v, std::uint64_t seed) {
  auto h = Kokkos::create_mirror_view(v);
  ordo_bench::splitmix64 rng{seed};
  for (std::size_t i = 0; i < h.span(); ++i) {
    h.data()[i] = static_cast<typename View::non_const_value_type>(2 * ordo_bench::unit_double(rng.next()));
  }
  Kokkos::deep_copy(v, h);
  return v;
}

template <class View>
void bn(const char* name, const View& x, std::size_t c, ordo::nn::memory_format layout, int reps) {
  View y("y", x.layout()), dy = filled(View("dy", x.layout()), 3), dx("dx", x.layout());
  Kokkos::View<float*> gamma("g", c), beta("b", c), rm("rm", c), rv("rv", c), dg("dg", c), db("db", c);
  Kokkos::deep_copy(gamma, 1.0f);
  Kokkos::deep_copy(rv, 1.0f);
  ordo::nn::batch_norm_options opt{.eps = 1e-5, .momentum = 0.1, .layout = layout};
  timed(name, reps, [&] {
    auto saved = ordo::nn::batch_norm_forward_training(x, gamma, beta, rm, rv, y, opt);
    ordo::nn::batch_norm_backward(dy, x, gamma, saved, dx, dg, db, opt);
  });
}

// c = a * b on static n x n ordo::matrix operands: BLAS at most, a plan's plain loops since small
// static products run inline (kernels/detail/small_product.hpp).
template <std::size_t N>
void small_product(const char* name) {
  ordo::matrix<double, N, N> a, b, c;
  for (std::size_t i = 0; i < N; ++i) {
    for (std::size_t j = 0; j < N; ++j) {
      a(i, j) = 1.0 / double(1 + i + j);
      b(i, j) = double(i) - double(j);
    }
  }
  timed(name, 2001, [&] {
    for (int k = 0; k < 100; ++k) c = a * b;
  });
  std::printf("# %g\n", c(N - 1, N - 1));
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  using ordo::nn::channels_first;
  bn("batch_norm_fwd_bwd (32,64,56,56) NCHW", filled(Kokkos::View<float****>("x", 32, 64, 56, 56), 1), 64,
     channels_first, 21);
  bn("batch_norm_fwd_bwd (32,56,56,64) NHWC", filled(Kokkos::View<float****>("x", 32, 56, 56, 64), 1), 64,
     ordo::nn::channels_last, 21);
  bn("batch_norm_fwd_bwd (256,1024)", filled(Kokkos::View<float**>("x", 256, 1024), 1), 1024, channels_first, 201);
  const auto xf = filled(Kokkos::View<float*>("xf", std::size_t{1} << 26), 5);
  const auto xd = filled(Kokkos::View<double*>("xd", std::size_t{1} << 26), 6);
  const auto x1 = filled(Kokkos::View<float*>("x1", std::size_t{1} << 20), 7);
  float sf = 0;
  double sd = 0;
  timed("exact_sum float 2^26", 11, [&] { sf = ordo::sum(xf); });
  timed("exact_sum double 2^26", 11, [&] { sd = ordo::sum(xd); });
  timed("exact_sum float 2^20", 201, [&] { sf += ordo::sum(x1); });
  std::printf("# %g %g\n", double(sf), sd);
  const auto x = filled(Kokkos::View<float**>("x", 1024, 8192), 8);
  const Kokkos::View<float**> y("y", 1024, 8192);
  timed("softmax float (1024,8192)", 21, [&] { ordo::nn::softmax(x, y); });
  const auto a = filled(Kokkos::View<double**>("a", 64, 64), 9), b = filled(Kokkos::View<double**>("b", 64, 64), 10);
  const Kokkos::View<double**> c("c", 64, 64);
  const Kokkos::DefaultExecutionSpace space;
  timed("gemm double 64^3 (dispatch)", 2001, [&] {
    ordo::gemm(space, 1.0, a, b, 0.0, c);
    space.fence();
  });
  small_product<3>("100 x (c = a * b), static 3 x 3");
  small_product<8>("100 x (c = a * b), static 8 x 8");
  small_product<9>("100 x (c = a * b), static 9 x 9 (past the limit)");
}
