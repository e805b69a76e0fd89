#ifndef ORDO_NN_BATCH_NORM_HPP
#define ORDO_NN_BATCH_NORM_HPP

// Batch normalization on Kokkos with PyTorch's semantics (torch.nn.functional.batch_norm):
//   auto saved = ordo::nn::batch_norm_forward_training(x, gamma, beta, running_mean, running_var, y, opt);
//   ordo::nn::batch_norm_forward_inference(x, gamma, beta, running_mean, running_var, y, opt);
//   ordo::nn::batch_norm_backward(dy, x, gamma, saved, dx, dgamma, dbeta, opt);
// x is (N, C), (N, C, L), (N, C, H, W) or (N, C, D, H, W), or channels last. Statistics are
// accumulated in double in two passes (mean, then the sum of squared deviations), so data with a
// large mean such as 1e4 + N(0, 1) in float keep their variance (E[x^2] - E[x]^2 loses it).
// See docs/batch_norm.md.

#include <ordo/detail/kokkos_math.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ordo::nn {

enum class memory_format { channels_first, channels_last };
inline constexpr memory_format channels_first = memory_format::channels_first;
inline constexpr memory_format channels_last = memory_format::channels_last;

struct batch_norm_options {
  double eps = 1e-5;       // added to the variance: keeps 1/sqrt(var + eps) finite for a constant channel
  double momentum = 0.1;   // running = (1 - momentum) * running + momentum * batch
  memory_format layout = channels_first;
};

// What the training forward pass keeps for backward: per-channel batch mean and 1/sqrt(var + eps),
// in double whatever the input type.
template <class MemorySpace>
struct batch_norm_saved {
  Kokkos::View<double*, MemorySpace> mean;
  Kokkos::View<double*, MemorySpace> invstd;
};

// Per-channel moments that merge without loss of stability (Chan, Golub and LeVeque 1979):
// n = na + nb, delta = mean_b - mean_a, mean = mean_a + delta nb / n, m2 = m2a + m2b + delta^2 na nb / n.
// Threads, devices and (later) MPI ranks combine their channel statistics this way.
struct channel_moments {
  double count = 0;
  double mean = 0;
  double m2 = 0;  // sum of squared deviations from the mean
  KOKKOS_INLINE_FUNCTION void merge(const channel_moments& other) {
    const double n = count + other.count;
    if (n == 0) return;
    const double delta = other.mean - mean;
    mean += delta * (other.count / n);
    m2 += other.m2 + delta * delta * (count * other.count / n);
    count = n;
  }
};

namespace detail {

// x as (outer, C, inner) blocks of a contiguous row-major array: channels first is (N, C, S),
// channels last is (N * S, C, 1), where S is the product of the spatial extents.
struct channel_geometry {
  std::int64_t outer = 0, channels = 0, inner = 0;
  std::int64_t per_channel() const { return outer * inner; }
};

template <class View>
std::string shape_string(const View& v) {
  std::string s = "(";
  for (unsigned r = 0; r < View::rank; ++r) {
    if (r > 0) s += ", ";
    s += std::to_string(v.extent(r));
  }
  return s + ")";
}

template <class View>
channel_geometry geometry_of(const View& x, memory_format layout, const char* operation) {
  static_assert(View::rank >= 2 && View::rank <= 5,
                "ordo::nn::batch_norm requires x of rank 2 to 5: (N, C), (N, C, L), (N, C, H, W) or (N, C, D, H, W)");
  static_assert(std::is_same_v<typename View::array_layout, Kokkos::LayoutRight>,
                "ordo::nn::batch_norm requires row-major (LayoutRight) Views");
  channel_geometry g;
  const std::int64_t n = static_cast<std::int64_t>(x.extent(0));
  const unsigned channel_axis = layout == channels_first || View::rank == 2 ? 1u : View::rank - 1;
  std::int64_t spatial = 1;
  for (unsigned r = 1; r < View::rank; ++r) {
    if (r != channel_axis) spatial *= static_cast<std::int64_t>(x.extent(r));
  }
  g.channels = static_cast<std::int64_t>(x.extent(channel_axis));
  if (channel_axis == 1) {
    g.outer = n;
    g.inner = spatial;
  } else {
    g.outer = n * spatial;
    g.inner = 1;
  }
  if (!x.span_is_contiguous()) {
    throw std::invalid_argument(std::string(operation) + ": x must be contiguous");
  }
  if (g.per_channel() == 0) {
    throw std::invalid_argument(std::string(operation) + ": empty batch: x has shape " + shape_string(x) +
                                ", so N * spatial = 0 values per channel");
  }
  return g;
}

template <class V>
void check_channels(const V& v, std::int64_t channels, const char* operation, const char* name) {
  if (static_cast<std::int64_t>(v.extent(0)) != channels) {
    throw std::invalid_argument(std::string(operation) + ": " + name + " has " + std::to_string(v.extent(0)) +
                                " entries but x has " + std::to_string(channels) + " channels");
  }
}

template <class A, class B>
void check_same_shape(const A& a, const B& b, const char* operation, const char* a_name, const char* b_name) {
  bool same = A::rank == B::rank;
  for (unsigned r = 0; same && r < A::rank; ++r) same = a.extent(r) == b.extent(r);
  if (!same) {
    throw std::invalid_argument(std::string(operation) + ": " + a_name + " has shape " + shape_string(a) + " but " +
                                b_name + " has shape " + shape_string(b));
  }
}

// Per-channel sums over the batch as one Kokkos array reduction: each work item is one outer
// block, so the reads of a channel are contiguous (channels first) or a whole channel row at a
// time (channels last). Term(c, v, flat_index) gives what to add for value v of channel c; with
// two terms per channel (second_term) the result holds 2 C sums.
template <class Space, class Term>
struct channel_sums {
  using value_type = double[];
  using size_type = std::int64_t;
  unsigned value_count;
  channel_geometry g;
  Term term;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t o, double* sums) const {
    for (std::int64_t c = 0; c < g.channels; ++c) {
      const std::int64_t base = (o * g.channels + c) * g.inner;
      for (std::int64_t i = 0; i < g.inner; ++i) term(c, base + i, sums);
    }
  }
  KOKKOS_INLINE_FUNCTION void init(double* sums) const {
    for (unsigned k = 0; k < value_count; ++k) sums[k] = 0.0;
  }
  KOKKOS_INLINE_FUNCTION void join(double* dst, const double* src) const {
    for (unsigned k = 0; k < value_count; ++k) dst[k] += src[k];
  }
  KOKKOS_INLINE_FUNCTION void join(volatile double* dst, const volatile double* src) const {
    for (unsigned k = 0; k < value_count; ++k) dst[k] = dst[k] + src[k];
  }
};

template <class Space, class Term>
Kokkos::View<double*, Kokkos::HostSpace> sum_per_channel(const channel_geometry& g, unsigned values, Term term) {
  Kokkos::View<double*, Kokkos::HostSpace> result("ordo::nn::channel sums", values);
  Kokkos::parallel_reduce("ordo::nn::batch_norm statistics",
                          Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(0, g.outer),
                          channel_sums<Space, Term>{values, g, term}, result);
  Space().fence();
  return result;
}

template <class XView>
struct sum_of_values {
  XView x;  // flat
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t c, std::int64_t k, double* sums) const {
    sums[c] += static_cast<double>(x(k));
  }
};

template <class XView, class MeanView>
struct sum_of_squared_deviations {
  XView x;
  MeanView mean;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t c, std::int64_t k, double* sums) const {
    const double d = static_cast<double>(x(k)) - mean(c);
    sums[c] += d * d;
  }
};

template <class XView, class DyView, class MeanView>
struct backward_sums {
  XView x;
  DyView dy;
  MeanView mean;
  std::int64_t channels;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t c, std::int64_t k, double* sums) const {
    const double g = static_cast<double>(dy(k));
    sums[c] += g;
    sums[channels + c] += (static_cast<double>(x(k)) - mean(c)) * g;
  }
};

template <class View>
auto flat(const View& v) {
  return Kokkos::View<typename View::value_type*, typename View::memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
      v.data(), v.size());
}

}  // namespace detail

// Training forward pass: normalizes each channel with its batch mean and biased variance, updates
// the running statistics with the unbiased variance, and returns the saved mean and invstd.
template <class XView, class ParamView, class StatView, class YView>
batch_norm_saved<typename XView::memory_space> batch_norm_forward_training(
    const XView& x, const ParamView& gamma, const ParamView& beta, const StatView& running_mean,
    const StatView& running_var, const YView& y, const batch_norm_options& options = {}) {
  constexpr const char* op = "ordo::nn::batch_norm_forward_training";
  using space = typename XView::execution_space;
  using memory = typename XView::memory_space;
  using T = typename XView::non_const_value_type;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "ordo::nn::batch_norm takes float or double");
  const detail::channel_geometry g = detail::geometry_of(x, options.layout, op);
  detail::check_same_shape(x, y, op, "x", "y");
  detail::check_channels(gamma, g.channels, op, "gamma");
  detail::check_channels(beta, g.channels, op, "beta");
  detail::check_channels(running_mean, g.channels, op, "running_mean");
  detail::check_channels(running_var, g.channels, op, "running_var");
  const std::int64_t m = g.per_channel();
  if (m < 2) {
    throw std::invalid_argument(std::string(op) + ": expected more than 1 value per channel when training, got input of shape " +
                                detail::shape_string(x));
  }
  const auto xf = detail::flat(x);
  const auto yf = detail::flat(y);
  const unsigned channels = static_cast<unsigned>(g.channels);

  batch_norm_saved<memory> saved{Kokkos::View<double*, memory>("ordo::nn::saved mean", channels),
                                 Kokkos::View<double*, memory>("ordo::nn::saved invstd", channels)};
  auto sums = detail::sum_per_channel<space>(g, channels, detail::sum_of_values<decltype(xf)>{xf});
  auto mean_host = Kokkos::create_mirror_view(saved.mean);
  for (unsigned c = 0; c < channels; ++c) mean_host(c) = sums(c) / static_cast<double>(m);
  Kokkos::deep_copy(saved.mean, mean_host);
  auto deviations = detail::sum_per_channel<space>(
      g, channels, detail::sum_of_squared_deviations<decltype(xf), decltype(saved.mean)>{xf, saved.mean});

  auto invstd_host = Kokkos::create_mirror_view(saved.invstd);
  auto rm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), running_mean);
  auto rv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), running_var);
  for (unsigned c = 0; c < channels; ++c) {
    const double biased = deviations(c) / static_cast<double>(m);
    const double unbiased = deviations(c) / static_cast<double>(m - 1);
    invstd_host(c) = 1.0 / std::sqrt(biased + options.eps);
    using stat_type = typename StatView::non_const_value_type;
    rm(c) = static_cast<stat_type>((1 - options.momentum) * static_cast<double>(rm(c)) + options.momentum * mean_host(c));
    rv(c) = static_cast<stat_type>((1 - options.momentum) * static_cast<double>(rv(c)) + options.momentum * unbiased);
  }
  Kokkos::deep_copy(saved.invstd, invstd_host);
  Kokkos::deep_copy(running_mean, rm);
  Kokkos::deep_copy(running_var, rv);

  const auto mean = saved.mean;
  const auto invstd = saved.invstd;
  const std::int64_t inner = g.inner, cs = g.channels;
  // One work item per outer block, channels and inner elements in loops: no per-element index
  // division (two dependent 64-bit divisions per element made this loop 10x slower).
  Kokkos::parallel_for(
      "ordo::nn::batch_norm_forward_training", Kokkos::RangePolicy<space, Kokkos::IndexType<std::int64_t>>(0, g.outer),
      KOKKOS_LAMBDA(std::int64_t o) {
        for (std::int64_t c = 0; c < cs; ++c) {
          const double centre = mean(c), a = invstd(c) * static_cast<double>(gamma(c)), b = static_cast<double>(beta(c));
          const std::int64_t base = (o * cs + c) * inner;
          for (std::int64_t i = 0; i < inner; ++i) {
            yf(base + i) = static_cast<T>((static_cast<double>(xf(base + i)) - centre) * a + b);
          }
        }
      });
  space().fence();
  return saved;
}

// Inference: normalizes with the running statistics, y = (x - running_mean) / sqrt(running_var + eps) * gamma + beta.
template <class XView, class ParamView, class StatView, class YView>
void batch_norm_forward_inference(const XView& x, const ParamView& gamma, const ParamView& beta,
                                  const StatView& running_mean, const StatView& running_var, const YView& y,
                                  const batch_norm_options& options = {}) {
  constexpr const char* op = "ordo::nn::batch_norm_forward_inference";
  using space = typename XView::execution_space;
  using T = typename XView::non_const_value_type;
  const detail::channel_geometry g = detail::geometry_of(x, options.layout, op);
  detail::check_same_shape(x, y, op, "x", "y");
  detail::check_channels(gamma, g.channels, op, "gamma");
  detail::check_channels(beta, g.channels, op, "beta");
  detail::check_channels(running_mean, g.channels, op, "running_mean");
  detail::check_channels(running_var, g.channels, op, "running_var");
  const auto xf = detail::flat(x);
  const auto yf = detail::flat(y);
  const std::int64_t inner = g.inner, cs = g.channels;
  const double eps = options.eps;
  Kokkos::parallel_for(
      "ordo::nn::batch_norm_forward_inference", Kokkos::RangePolicy<space, Kokkos::IndexType<std::int64_t>>(0, g.outer),
      KOKKOS_LAMBDA(std::int64_t o) {
        for (std::int64_t c = 0; c < cs; ++c) {
          const double invstd = 1.0 / ordo::detail::math::sqrt(static_cast<double>(running_var(c)) + eps);
          const double m = static_cast<double>(running_mean(c)), a = invstd * static_cast<double>(gamma(c)),
                       b = static_cast<double>(beta(c));
          const std::int64_t base = (o * cs + c) * inner;
          for (std::int64_t i = 0; i < inner; ++i) {
            yf(base + i) = static_cast<T>((static_cast<double>(xf(base + i)) - m) * a + b);
          }
        }
      });
  space().fence();
}

// Backward of the training pass: with sum_dy = sum dy and dotp = sum (x - mean) dy per channel,
//   dx = (dy - sum_dy / M - (x - mean) invstd^2 dotp / M) invstd gamma,  dgamma = dotp invstd,  dbeta = sum_dy.
template <class DyView, class XView, class ParamView, class MemorySpace, class DxView, class GradView>
void batch_norm_backward(const DyView& dy, const XView& x, const ParamView& gamma,
                         const batch_norm_saved<MemorySpace>& saved, const DxView& dx, const GradView& dgamma,
                         const GradView& dbeta, const batch_norm_options& options = {}) {
  constexpr const char* op = "ordo::nn::batch_norm_backward";
  using space = typename XView::execution_space;
  using T = typename XView::non_const_value_type;
  using G = typename GradView::non_const_value_type;
  const detail::channel_geometry g = detail::geometry_of(x, options.layout, op);
  detail::check_same_shape(x, dy, op, "x", "dy");
  detail::check_same_shape(x, dx, op, "x", "dx");
  detail::check_channels(gamma, g.channels, op, "gamma");
  detail::check_channels(saved.mean, g.channels, op, "saved.mean");
  detail::check_channels(dgamma, g.channels, op, "dgamma");
  detail::check_channels(dbeta, g.channels, op, "dbeta");
  const auto xf = detail::flat(x);
  const auto dyf = detail::flat(dy);
  const auto dxf = detail::flat(dx);
  const unsigned channels = static_cast<unsigned>(g.channels);
  const auto sums = detail::sum_per_channel<space>(
      g, 2 * channels,
      detail::backward_sums<decltype(xf), decltype(dyf), decltype(saved.mean)>{xf, dyf, saved.mean, g.channels});
  Kokkos::View<double*, Kokkos::HostSpace> coefficients_host("ordo::nn::backward coefficients", 2 * channels);
  auto invstd_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), saved.invstd);
  auto dgamma_host = Kokkos::create_mirror_view(dgamma);
  auto dbeta_host = Kokkos::create_mirror_view(dbeta);
  const double m = static_cast<double>(g.per_channel());
  for (unsigned c = 0; c < channels; ++c) {
    const double sum_dy = sums(c), dotp = sums(channels + c), invstd = invstd_host(c);
    coefficients_host(c) = sum_dy / m;
    coefficients_host(channels + c) = invstd * invstd * dotp / m;
    dgamma_host(c) = static_cast<G>(dotp * invstd);
    dbeta_host(c) = static_cast<G>(sum_dy);
  }
  Kokkos::deep_copy(dgamma, dgamma_host);
  Kokkos::deep_copy(dbeta, dbeta_host);
  const auto coefficients = Kokkos::create_mirror_view_and_copy(typename XView::memory_space(), coefficients_host);
  const auto mean = saved.mean;
  const auto invstd = saved.invstd;
  const std::int64_t inner = g.inner, cs = g.channels;
  Kokkos::parallel_for(
      "ordo::nn::batch_norm_backward", Kokkos::RangePolicy<space, Kokkos::IndexType<std::int64_t>>(0, g.outer),
      KOKKOS_LAMBDA(std::int64_t o) {
        for (std::int64_t c = 0; c < cs; ++c) {
          const double centre = mean(c), mean_dy = coefficients(c), projection = coefficients(cs + c);
          const double a = invstd(c) * static_cast<double>(gamma(c));
          const std::int64_t base = (o * cs + c) * inner;
          for (std::int64_t i = 0; i < inner; ++i) {
            const double centered = static_cast<double>(xf(base + i)) - centre;
            dxf(base + i) = static_cast<T>((static_cast<double>(dyf(base + i)) - mean_dy - centered * projection) * a);
          }
        }
      });
  space().fence();
}

}  // namespace ordo::nn

#endif
