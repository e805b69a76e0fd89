#ifndef ORDO_NN_LOSS_SCALER_HPP
#define ORDO_NN_LOSS_SCALER_HPP

// Dynamic loss scaling for 16-bit gradients, with PyTorch's GradScaler state machine and defaults
// (torch/cuda/amp/grad_scaler.py, _amp_update_scale_): the loss is multiplied by a large scale so
// that small gradients do not underflow in half; before the optimizer step the gradients are
// multiplied by 1/scale and checked for Inf/NaN. A step with a non-finite gradient is skipped
// and the scale backs off; after growth_interval clean steps in a row it grows.
//
//   ordo::nn::loss_scaler scaler;                     // 2^16, x2, x0.5, every 2000 steps
//   backward(scaler.scale(loss));
//   if (scaler.unscale_and_check(grad_w, grad_b)) step();
//   scaler.update();

#include <ordo/core/scalar_traits.hpp>
#include <ordo/platform/kokkos_math.hpp>
#include <ordo/platform/launch_shape.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ordo::nn {

struct loss_scaler_options {
  float init_scale = 65536.0f;  // 2^16
  float growth_factor = 2.0f;
  float backoff_factor = 0.5f;
  int growth_interval = 2000;
};

namespace detail {

// The gradients of one unscale_and_check as one flat index space, cut into chunks: chunk c of the
// whole is chunk c - (chunks of the Views before it) of one View. On the host a chunk is a long
// contiguous run (SIMD, few threads); on a device it is one element, so that neighbouring threads
// touch neighbouring addresses.
template <class... Views>
struct gradient_pack;

template <>
struct gradient_pack<> {
  KOKKOS_INLINE_FUNCTION void unscale(std::int64_t, std::int64_t, float, int&) const {}
};

template <class View, class... Rest>
struct gradient_pack<View, Rest...> {
  View view;
  std::int64_t chunks;
  gradient_pack<Rest...> rest;

  KOKKOS_INLINE_FUNCTION void unscale(std::int64_t chunk, std::int64_t chunk_size, float inv_scale,
                                      int& non_finite) const {
    if (chunk >= chunks) {
      rest.unscale(chunk - chunks, chunk_size, inv_scale, non_finite);
      return;
    }
    using value_type = typename View::non_const_value_type;
    using compute = compute_type_t<value_type>;
    const auto size = static_cast<std::int64_t>(view.size());
    const std::int64_t begin = chunk * chunk_size;
    const std::int64_t end = begin + chunk_size < size ? begin + chunk_size : size;
    value_type* const data = view.data();
    int found = 0;
    for (std::int64_t i = begin; i < end; ++i) {
      const compute value = to_compute(data[i]);
      const value_type unscaled = to_storage<value_type>(value * static_cast<compute>(inv_scale));
      // The input as PyTorch checks it, and the stored result too: with a scale below 1,
      // unscaling can overflow a finite gradient's storage type.
      found |= (ordo::detail::math::isfinite(value) && ordo::detail::math::isfinite(to_compute(unscaled))) ? 0 : 1;
      data[i] = unscaled;
    }
    non_finite |= found;
  }
};

template <class Pack>
struct unscale_functor {
  Pack pack;
  std::int64_t chunk_size;
  float inv_scale;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t chunk, int& non_finite) const {
    pack.unscale(chunk, chunk_size, inv_scale, non_finite);
  }
};

inline constexpr std::int64_t host_unscale_chunk = 4096;

template <class View>
std::int64_t chunks_of(const View& v, std::int64_t chunk_size) {
  return (static_cast<std::int64_t>(v.size()) + chunk_size - 1) / chunk_size;
}

template <class View, class... Rest>
gradient_pack<View, Rest...> make_gradient_pack(std::int64_t chunk_size, std::int64_t& total, const View& view,
                                                const Rest&... rest) {
  const std::int64_t chunks = chunks_of(view, chunk_size);
  total += chunks;
  if constexpr (sizeof...(Rest) == 0) {
    return {view, chunks, {}};
  } else {
    return {view, chunks, make_gradient_pack(chunk_size, total, rest...)};
  }
}

// Multiplies every element of grads by inv_scale in one fused parallel reduction; true when any
// element (before or after) is not finite.
template <class ExecutionSpace, class... Views>
bool unscale_gradients(const ExecutionSpace& space, ordo::detail::launch_shape shape, float inv_scale,
                       const Views&... grads) {
  const std::int64_t chunk_size = shape == ordo::detail::launch_shape::host ? host_unscale_chunk : 1;
  std::int64_t chunks = 0;
  auto pack = make_gradient_pack(chunk_size, chunks, grads...);
  int non_finite = 0;
  Kokkos::parallel_reduce("ordo::nn::loss_scaler::unscale_and_check",
                          Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>(space, 0, chunks),
                          unscale_functor<decltype(pack)>{pack, chunk_size, inv_scale}, Kokkos::LOr<int>(non_finite));
  space.fence();
  return non_finite != 0;
}

template <class View>
void check_gradient(const View& v, int position) {
  if (!v.span_is_contiguous()) {
    throw std::invalid_argument("ordo::nn::loss_scaler::unscale_and_check: gradient " + std::to_string(position) +
                                " must be contiguous (a View whose span is its size)");
  }
}

}  // namespace detail

class loss_scaler {
 public:
  loss_scaler() : loss_scaler(loss_scaler_options{}) {}

  // Throws std::invalid_argument for a scale that is not positive and finite, a growth factor
  // not above 1, a backoff factor outside (0, 1) or a growth interval below 1.
  explicit loss_scaler(const loss_scaler_options& options) : options_(options), scale_(options.init_scale) {
    const auto fail = [](const std::string& what) {
      throw std::invalid_argument("ordo::nn::loss_scaler: " + what);
    };
    if (!(options.init_scale > 0.0f) || !std::isfinite(options.init_scale)) {
      fail("init_scale must be positive and finite, got " + std::to_string(options.init_scale));
    }
    if (!(options.growth_factor > 1.0f) || !std::isfinite(options.growth_factor)) {
      fail("growth_factor must be finite and greater than 1, got " + std::to_string(options.growth_factor));
    }
    if (!(options.backoff_factor > 0.0f && options.backoff_factor < 1.0f)) {
      fail("backoff_factor must lie in (0, 1), got " + std::to_string(options.backoff_factor));
    }
    if (options.growth_interval < 1) {
      fail("growth_interval must be at least 1, got " + std::to_string(options.growth_interval));
    }
  }

  // The loss times the current scale, in the loss's compute type: what backward starts from.
  template <floating_storage T>
  compute_type_t<T> scale(T loss) const {
    return to_compute(loss) * static_cast<compute_type_t<T>>(scale_);
  }

  // Multiplies every gradient by 1/scale (rounded once into its storage type) and checks them all
  // for Inf/NaN in one fused reduction on the Views' execution space. Returns true when all are
  // finite: the optimizer may step. Once per update().
  template <class View, class... Views>
    requires(Kokkos::is_view<View>::value && (Kokkos::is_view<Views>::value && ...))
  bool unscale_and_check(const View& grad, const Views&... grads) {
    return unscale_and_check(typename View::execution_space{}, grad, grads...);
  }

  template <class ExecutionSpace, class... Views>
    requires(Kokkos::is_execution_space<ExecutionSpace>::value && (Kokkos::is_view<Views>::value && ...))
  bool unscale_and_check(const ExecutionSpace& space, const Views&... grads) {
    return unscale_and_check(space, ordo::detail::default_launch_shape_v<ExecutionSpace>, grads...);
  }

  // With an explicit launch shape: how tests run the device shape on a host space.
  template <class ExecutionSpace, class... Views>
  bool unscale_and_check(const ExecutionSpace& space, ordo::detail::launch_shape shape, const Views&... grads) {
    static_assert(sizeof...(Views) > 0, "ordo::nn::loss_scaler::unscale_and_check needs at least one gradient View");
    static_assert((floating_storage<typename Views::non_const_value_type> && ...),
                  "ordo::nn::loss_scaler::unscale_and_check: every gradient must be a View of float, double, "
                  "ordo::half or ordo::bfloat16 (a type ordo::scalar_traits describes)");
    static_assert((!std::is_const_v<typename Views::value_type> && ...),
                  "ordo::nn::loss_scaler::unscale_and_check: gradients are unscaled in place; they cannot be const");
    static_assert((Kokkos::SpaceAccessibility<ExecutionSpace, typename Views::memory_space>::accessible && ...),
                  "ordo::nn::loss_scaler::unscale_and_check: the execution space must access every gradient");
    if (checked_) {
      throw std::logic_error(
          "ordo::nn::loss_scaler::unscale_and_check was already called since the last update(); call update() "
          "once per step");
    }
    int position = 0;
    (detail::check_gradient(grads, position++), ...);
    found_non_finite_ = detail::unscale_gradients(space, shape, 1.0f / scale_, grads...);
    checked_ = true;
    return !found_non_finite_;
  }

  // Ends a step: backs off after a non-finite gradient, grows after growth_interval clean steps
  // in a row (not past float's range). Throws std::logic_error without a prior unscale_and_check.
  void update() {
    if (!checked_) {
      throw std::logic_error("ordo::nn::loss_scaler::update: no unscale_and_check since the last update()");
    }
    checked_ = false;
    if (found_non_finite_) {
      scale_ *= options_.backoff_factor;
      growth_tracker_ = 0;
      return;
    }
    if (++growth_tracker_ == options_.growth_interval) {
      const float grown = scale_ * options_.growth_factor;
      if (std::isfinite(grown)) scale_ = grown;
      growth_tracker_ = 0;
    }
  }

  float current_scale() const { return scale_; }
  // Clean steps since the last growth or backoff.
  int growth_tracker() const { return growth_tracker_; }
  // What the last unscale_and_check found.
  bool found_non_finite() const { return found_non_finite_; }
  const loss_scaler_options& options() const { return options_; }

 private:
  loss_scaler_options options_;
  float scale_;
  int growth_tracker_ = 0;
  bool found_non_finite_ = false;
  bool checked_ = false;
};

}  // namespace ordo::nn

#endif
