#ifndef ORDO_NN_DETAIL_BATCH_NORM_CHECKS_HPP
#define ORDO_NN_DETAIL_BATCH_NORM_CHECKS_HPP

// Batch norm's argument checks: x's rank, layout and geometry, and the Views that must match it.

#include <ordo/kernels/detail/view_checks.hpp>
#include <ordo/kernels/detail/work_partition.hpp>
#include <ordo/nn/memory_format.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ordo::nn::detail {

using ordo::detail::channel_geometry;
using ordo::detail::check_contiguous;
using ordo::detail::check_extent;
using ordo::detail::check_same_shape;
using ordo::detail::view_shape_text;

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
  check_contiguous(x, operation, "x");
  if (g.per_channel() == 0) {
    throw std::invalid_argument(std::string(operation) + ": empty batch: x has shape " + view_shape_text(x) +
                                ", so N * spatial = 0 values per channel");
  }
  return g;
}

// y, dy and dx are written and read through x's flat indexing, so they need its memory layout.
template <class View>
void check_like_x(const View& v, const char* operation, const char* name) {
  static_assert(std::is_same_v<typename View::array_layout, Kokkos::LayoutRight>,
                "ordo::nn::batch_norm requires row-major (LayoutRight) Views for y, dy and dx too");
  check_contiguous(v, operation, name);
}

template <class V>
void check_channels(const V& v, std::int64_t channels, const char* operation, const char* name) {
  check_extent(v, channels, operation, name, "x", "channels");
}

}  // namespace ordo::nn::detail

#endif
