// A batch-norm case (float, Kokkos::OpenMP) for bench_paired: x = 0.01 c + uniform[-1, 1) (c the channel),
// dy = uniform[-1, 1), gamma = 1 + 0.1 u, beta = 0.1 u (u uniform[-1, 1), splitmix64); ordo's two calls, their four
// streaming kernels alone as the calls launch them, and a copy.
#ifndef ORDO_BENCH_BATCH_NORM_CASES_HPP
#define ORDO_BENCH_BATCH_NORM_CASES_HPP

#include "bench_support.hpp"

#include <ordo/nn/batch_norm.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace bench_bn {

namespace nd = ordo::nn::detail;
using space = Kokkos::OpenMP;
using memory = space::memory_space;
using policy = Kokkos::RangePolicy<space, Kokkos::IndexType<std::int64_t>>;
using vec_f = Kokkos::View<float*, memory>;

KOKKOS_INLINE_FUNCTION float uniform_pm1(std::uint64_t seed, std::uint64_t i) {
  return static_cast<float>(static_cast<double>(ordo_bench::splitmix64::at(seed, i) >> 40) * 0x1p-23 - 1.0);  // [-1, 1)
}

// One case: x, y, dy, dx are XView (rank 4 or 2, LayoutRight), extents e.
template <class XView>
struct batch_norm_case {
  XView x, y, dy, dx;
  ordo::nn::batch_norm_options options;
  nd::channel_geometry g;
  nd::work_partition p;
  std::int64_t n, channels;
  vec_f gamma, beta, running_mean, running_var, dgamma, dbeta, coefficients, copy_destination;
  Kokkos::View<double*, memory> partial_a, partial_b;
  ordo::nn::batch_norm_saved<memory> saved;

  template <class... Extents>
  batch_norm_case(ordo::nn::memory_format layout, Extents... e)
      : x("x", e...), y("y", e...), dy("dy", e...), dx("dx", e...),
        options{.eps = 1e-5, .momentum = 0.1, .layout = layout},
        g(nd::geometry_of(x, layout, "bench")),
        p(nd::partition_of(g)),
        n(static_cast<std::int64_t>(x.size())),
        channels(g.channels),
        coefficients("coefficients", 5 * channels),
        copy_destination("copy destination", n),
        partial_a("partial a", p.row_items * channels),
        partial_b("partial b", p.row_items * channels) {
    for (vec_f* v : {&gamma, &beta, &running_mean, &running_var, &dgamma, &dbeta}) *v = vec_f("parameter", channels);
    Kokkos::deep_copy(coefficients, 0.5f);
    fill_inputs();
    reset_running();
    forward();  // so that saved exists
    reset_running();
  }
  // Not in the constructor: nvcc's extended lambdas need an enclosing function with an address.
  void fill_inputs() {
    float *xf = x.data(), *dyf = dy.data();
    const auto gm = g;
    Kokkos::parallel_for(
        "bench fill", policy(0, n), KOKKOS_LAMBDA(std::int64_t k) {
          const std::int64_t c = (k / gm.inner) % gm.channels;
          xf[k] = 0.01f * static_cast<float>(c) + uniform_pm1(101, static_cast<std::uint64_t>(k));
          dyf[k] = uniform_pm1(202, static_cast<std::uint64_t>(k));
        });
    const auto ga = gamma, be = beta;
    Kokkos::parallel_for(
        "bench fill parameters", policy(0, channels), KOKKOS_LAMBDA(std::int64_t c) {
          ga(c) = 1.0f + 0.1f * uniform_pm1(303, static_cast<std::uint64_t>(c));
          be(c) = 0.1f * uniform_pm1(404, static_cast<std::uint64_t>(c));
        });
    space().fence();
  }
  void reset_running() const {
    Kokkos::deep_copy(running_mean, 0.0f);
    Kokkos::deep_copy(running_var, 1.0f);
    space().fence();
  }
  void forward() {
    saved = ordo::nn::batch_norm_forward_training(x, gamma, beta, running_mean, running_var, y, options);
  }
  void backward() const { ordo::nn::batch_norm_backward(dy, x, gamma, saved, dx, dgamma, dbeta, options); }
  void copy() const {  // STREAM-like copy, as much traffic as normalize
    float *dst = copy_destination.data(), *src = x.data();
    Kokkos::parallel_for("bench copy", policy(0, n), KOKKOS_LAMBDA(std::int64_t i) { dst[i] = src[i]; });
    space().fence();
  }

  // ordo's kernels alone (coefficients 0.5: their values do not change the work).
  template <class Kernel>
  void launch(const char* label, Kernel kernel) const {
    Kokkos::parallel_for(label, nd::item_policy<space>(0, p.items()), nd::dispatched(kernel));
    space().fence();
  }
  void statistics() const {
    launch("bench statistics", nd::item_moments_kernel<float>{p, x.data(), partial_a.data(), partial_b.data()});
  }
  void normalize() const {
    const float* k = coefficients.data();
    const std::int64_t c = channels;
    launch("bench normalize", nd::normalize_kernel<float>{p, x.data(), y.data(), {k, k + c, k + 2 * c, k + 3 * c}});
  }
  void backward_sums() const {
    launch("bench backward sums", nd::item_backward_sums_kernel<float>{p, x.data(), dy.data(), saved.mean.data(),
                                                                       partial_a.data(), partial_b.data()});
  }
  void input_gradient() const {
    const float* k = coefficients.data();
    const std::int64_t c = channels;
    launch("bench input gradient", nd::input_gradient_kernel<float>{p, x.data(), dy.data(), dx.data(),
                                                                    {k, k + c, k + 2 * c, k + 3 * c, k + 4 * c}});
  }
};

}  // namespace bench_bn

#endif
