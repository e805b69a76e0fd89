// The benchmark's three cases, shared by bench_batch_norm (diagnostics) and the
// bench_batch_norm_paired module (ordo next to PyTorch in one process, through ctypes).
//
//   nchw  (32, 64, 56, 56) channels first,
//   nhwc  (32, 56, 56, 64) channels last (ordo::nn::channels_last),
//   bn1d  (256, 1024).
//
// Data: x = 0.01 c + uniform[-1, 1) (c the channel), dy = uniform[-1, 1), gamma = 1 + 0.1 u,
// beta = 0.1 u, u uniform[-1, 1), from splitmix64 with fixed seeds; running_mean = 0,
// running_var = 1 after reset_running().
#ifndef ORDO_BENCH_BATCH_NORM_CASES_HPP
#define ORDO_BENCH_BATCH_NORM_CASES_HPP

#include "bench_support.hpp"

#include <ordo/platform/view_checks.hpp>
#include <ordo/nn/batch_norm.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace bench_bn {

using space = Kokkos::OpenMP;
using memory = space::memory_space;
using policy = Kokkos::RangePolicy<space, Kokkos::IndexType<std::int64_t>>;
using vec_f = Kokkos::View<float*, memory>;
using vec_d = Kokkos::View<double*, memory>;
using flat_f = Kokkos::View<float*, memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// uniform in [-1, 1)
KOKKOS_INLINE_FUNCTION float uniform_pm1(std::uint64_t seed, std::uint64_t i) {
  return static_cast<float>(static_cast<double>(ordo_bench::splitmix64::at(seed, i) >> 40) * 0x1p-23 - 1.0);
}

// STREAM-like copy, dst(i) = src(i).
inline void copy(const flat_f& dst, const flat_f& src) {
  Kokkos::parallel_for("bench copy", policy(0, static_cast<std::int64_t>(src.size())),
                       KOKKOS_LAMBDA(std::int64_t i) { dst(i) = src(i); });
  space().fence();
}

struct case_base {
  std::string name;
  ordo::nn::batch_norm_options options;
  ordo::nn::detail::channel_geometry g;
  std::int64_t n = 0, channels = 0;
  flat_f x, y, dy, dx, copy_destination;  // flat views of the case's arrays, in memory order
  vec_f gamma, beta, running_mean, running_var, dgamma, dbeta;
  ordo::nn::batch_norm_saved<memory> saved;
  std::string shape, layout;

  virtual ~case_base() = default;
  virtual void forward() = 0;   // ordo::nn::batch_norm_forward_training
  virtual void backward() = 0;  // ordo::nn::batch_norm_backward (uses the last forward's saved)
  void copy_x() { copy(copy_destination, x); }
  void reset_running() {
    Kokkos::deep_copy(running_mean, 0.0f);
    Kokkos::deep_copy(running_var, 1.0f);
    space().fence();
  }
};

template <class XView>
struct case_impl final : case_base {
  XView xv, yv, dyv, dxv;
  vec_f copy_storage;

  case_impl(std::string case_name, XView x_, XView y_, XView dy_, XView dx_, ordo::nn::memory_format layout_)
      : xv(x_), yv(y_), dyv(dy_), dxv(dx_) {
    name = std::move(case_name);
    options = ordo::nn::batch_norm_options{.eps = 1e-5, .momentum = 0.1, .layout = layout_};
    g = ordo::nn::detail::geometry_of(xv, layout_, "bench");
    n = static_cast<std::int64_t>(xv.size());
    channels = g.channels;
    x = flat_f(xv.data(), n);
    y = flat_f(yv.data(), n);
    dy = flat_f(dyv.data(), n);
    dx = flat_f(dxv.data(), n);
    copy_storage = vec_f("copy destination", n);
    copy_destination = flat_f(copy_storage.data(), n);
    gamma = vec_f("gamma", channels);
    beta = vec_f("beta", channels);
    running_mean = vec_f("running_mean", channels);
    running_var = vec_f("running_var", channels);
    dgamma = vec_f("dgamma", channels);
    dbeta = vec_f("dbeta", channels);
    shape = ordo::detail::view_shape_text(xv);
    layout = layout_ == ordo::nn::channels_last ? "channels_last" : "channels_first";
    fill_inputs();
    space().fence();
    reset_running();
    forward();  // so that saved exists
    reset_running();
  }
  // Not in the constructor: nvcc's extended lambdas need an enclosing function whose address can
  // be taken.
  void fill_inputs() {
    const auto xf = x, dyf = dy;
    const auto gm = g;
    Kokkos::parallel_for(
        "bench fill", policy(0, n), KOKKOS_LAMBDA(std::int64_t k) {
          const std::int64_t c = (k / gm.inner) % gm.channels;
          xf(k) = 0.01f * static_cast<float>(c) + uniform_pm1(101, static_cast<std::uint64_t>(k));
          dyf(k) = uniform_pm1(202, static_cast<std::uint64_t>(k));
        });
    const auto ga = gamma, be = beta;
    Kokkos::parallel_for(
        "bench fill params", policy(0, channels), KOKKOS_LAMBDA(std::int64_t c) {
          ga(c) = 1.0f + 0.1f * uniform_pm1(303, static_cast<std::uint64_t>(c));
          be(c) = 0.1f * uniform_pm1(404, static_cast<std::uint64_t>(c));
        });
  }
  void forward() override {
    saved = ordo::nn::batch_norm_forward_training(xv, gamma, beta, running_mean, running_var, yv, options);
  }
  void backward() override { ordo::nn::batch_norm_backward(dyv, xv, gamma, saved, dxv, dgamma, dbeta, options); }
};

inline std::unique_ptr<case_base> make_case(const std::string& name) {
  using v4 = Kokkos::View<float****, Kokkos::LayoutRight, memory>;
  using v2 = Kokkos::View<float**, Kokkos::LayoutRight, memory>;
  if (name == "nchw") {
    return std::make_unique<case_impl<v4>>(name, v4("x", 32, 64, 56, 56), v4("y", 32, 64, 56, 56),
                                           v4("dy", 32, 64, 56, 56), v4("dx", 32, 64, 56, 56),
                                           ordo::nn::channels_first);
  }
  if (name == "nhwc") {
    return std::make_unique<case_impl<v4>>(name, v4("x", 32, 56, 56, 64), v4("y", 32, 56, 56, 64),
                                           v4("dy", 32, 56, 56, 64), v4("dx", 32, 56, 56, 64),
                                           ordo::nn::channels_last);
  }
  if (name == "bn1d") {
    return std::make_unique<case_impl<v2>>(name, v2("x", 256, 1024), v2("y", 256, 1024), v2("dy", 256, 1024),
                                           v2("dx", 256, 1024), ordo::nn::channels_first);
  }
  throw std::invalid_argument("unknown case " + name);
}

}  // namespace bench_bn

#endif
