#ifndef ORDO_NN_DETAIL_BATCH_NORM_LAYOUT_HPP
#define ORDO_NN_DETAIL_BATCH_NORM_LAYOUT_HPP

// Batch norm's operands as blocks: x's rank, layout and geometry, the Views that must match it,
// and the staging of Views that are not dense.
//
// The kernels read x, y, dy and dx as (outer, C, inner) blocks of one dense array
// (platform/work_partition.hpp). Any dense View is such an array, whatever its layout: sort
// its axes by stride; the axes below the channel axis make `inner`, those above make `outer`.
// LayoutRight NCHW is (N, C, H W), LayoutLeft NCHW is (H W, C, N), LayoutLeft (N, C) is (1, C, N),
// and LayoutLeft channels last (N, H, W, C) is (1, C, N H W). Dense Views are used in place and
// must share their strides; a View that is not dense (a subview taking some channels, a padded
// View) is copied into a dense temporary with the others' strides and, if written, copied back.
// Staging rather than a second set of kernels that index through the View: the one set of
// kernels keeps one summation order, so a strided View gives the bits of a dense copy of it, and
// the copies cost two memory passes only on the Views that need them.

#include <ordo/platform/shape_text.hpp>
#include <ordo/platform/scratch_lease.hpp>
#include <ordo/platform/view_checks.hpp>
#include <ordo/platform/work_partition.hpp>
#include <ordo/nn/memory_format.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ordo::nn::detail {

using ordo::detail::channel_geometry;
using ordo::detail::check_extent;
using ordo::detail::check_same_shape;
using ordo::detail::tensor_shape_text;
using ordo::detail::uninitialized_view;
using ordo::detail::view_shape_text;

template <class Layout>
inline constexpr bool batch_norm_layout_v = std::is_same_v<Layout, Kokkos::LayoutRight> ||
                                            std::is_same_v<Layout, Kokkos::LayoutLeft> ||
                                            std::is_same_v<Layout, Kokkos::LayoutStride>;

// Extents and strides of a View, in elements.
template <std::size_t Rank>
struct memory_order {
  std::array<std::int64_t, Rank> extents{}, strides{};

  std::int64_t size() const {
    std::int64_t n = 1;
    for (const std::int64_t e : extents) n *= e;
    return n;
  }
  // Axes by increasing stride; ties (possible only on extent-1 axes) put the later axis first.
  std::array<std::size_t, Rank> axes_by_stride() const {
    std::array<std::size_t, Rank> order{};
    for (std::size_t r = 0; r < Rank; ++r) order[r] = Rank - 1 - r;
    for (std::size_t i = 1; i < Rank; ++i) {
      for (std::size_t j = i; j > 0 && strides[order[j]] < strides[order[j - 1]]; --j) {
        const std::size_t t = order[j];
        order[j] = order[j - 1];
        order[j - 1] = t;
      }
    }
    return order;
  }
  // The elements fill [0, size) exactly: sorted by stride, each axis's stride is the product of
  // the extents below it. Axes of extent 1 are never stepped along, so their strides do not count.
  bool dense() const {
    std::int64_t below = 1;
    for (const std::size_t r : axes_by_stride()) {
      if (extents[r] == 1) continue;
      if (strides[r] != below) return false;
      below *= extents[r];
    }
    return true;
  }
  // Distinct indices reach distinct elements: sorted by stride, each stride is at least the span of
  // the axes below it (true of every subview of a dense array).
  bool disjoint() const {
    std::int64_t span = 1;
    for (const std::size_t r : axes_by_stride()) {
      if (extents[r] == 1) continue;
      if (strides[r] < span) return false;
      span = strides[r] * (extents[r] - 1) + span;
    }
    return true;
  }
  // The same element positions (strides of extent-1 axes do not matter).
  bool same_positions(const memory_order& other) const {
    for (std::size_t r = 0; r < Rank; ++r) {
      if (extents[r] != other.extents[r] || (extents[r] > 1 && strides[r] != other.strides[r])) return false;
    }
    return true;
  }
  // The dense strides of a View of these extents whose axes lie in this one's stride order.
  memory_order densified() const {
    memory_order d = *this;
    std::int64_t below = 1;
    for (const std::size_t r : axes_by_stride()) {
      d.strides[r] = below;
      below *= extents[r] > 0 ? extents[r] : 1;
    }
    return d;
  }
  std::string strides_text() const {
    std::array<std::size_t, Rank> s{};
    for (std::size_t r = 0; r < Rank; ++r) s[r] = static_cast<std::size_t>(strides[r]);
    return tensor_shape_text(s);
  }
};

template <class View>
memory_order<View::rank> memory_order_of(const View& v) {
  memory_order<View::rank> m;
  for (std::size_t r = 0; r < View::rank; ++r) {
    m.extents[r] = static_cast<std::int64_t>(v.extent(r));
    m.strides[r] = static_cast<std::int64_t>(v.stride(r));
  }
  return m;
}

// One of x, y, dy and dx with its name, for the layout checks; outputs must be disjoint.
template <class View>
struct named_view {
  const View& view;
  const char* name;
  bool written;
};

template <class View>
named_view<View> input(const View& v, const char* name) {
  return {v, name, false};
}
template <class View>
named_view<View> output(const View& v, const char* name) {
  return {v, name, true};
}

// The strides in which the kernels see x, y, dy and dx, and x's geometry in them.
template <std::size_t Rank>
struct block_layout {
  memory_order<Rank> order;
  channel_geometry g;
};

template <class View>
void check_batch_view(const named_view<View>& v, const char* operation) {
  // An error here means x, y, dy or dx has a layout batch norm cannot read as strides.
  static_assert(batch_norm_layout_v<typename View::array_layout>,
                "ordo::nn::batch_norm requires LayoutRight, LayoutLeft or LayoutStride Views for x, y, dy and dx");
  if (v.written && v.view.size() > 0 && !memory_order_of(v.view).disjoint()) {
    throw std::invalid_argument(std::string(operation) + ": " + v.name + " has shape " + view_shape_text(v.view) +
                                " and strides " + memory_order_of(v.view).strides_text() +
                                ", whose elements overlap: an output must reach each element once");
  }
}

// check_same_shape for Views of any layouts (Kokkos 3.4's ranks are enums of distinct types).
template <class A, class B>
void check_same_extents(const A& a, const B& b, const char* operation, const char* a_name, const char* b_name) {
  bool same = static_cast<std::size_t>(A::rank) == static_cast<std::size_t>(B::rank);
  for (std::size_t r = 0; same && r < static_cast<std::size_t>(A::rank); ++r) same = a.extent(r) == b.extent(r);
  if (!same) {
    throw std::invalid_argument(std::string(operation) + ": " + a_name + " has shape " + view_shape_text(a) + " but " +
                                b_name + " has shape " + view_shape_text(b));
  }
}

template <std::size_t Rank, class View>
void check_same_strides(const named_view<View>& v, const memory_order<Rank>& working, const char* working_name,
                        const char* operation) {
  const memory_order<Rank> m = memory_order_of(v.view);
  if (m.size() > 0 && m.dense() && !m.same_positions(working)) {
    throw std::invalid_argument(std::string(operation) + ": " + v.name + " has shape " + view_shape_text(v.view) +
                                " and strides " + m.strides_text() + " but " + working_name + " has strides " +
                                working.strides_text() +
                                ": contiguous x, y, dy and dx must have the same strides (copy one of them)");
  }
}

// x's geometry in the strides `order` (dense), channels on `channel_axis`.
template <std::size_t Rank>
channel_geometry geometry_in(const memory_order<Rank>& order, std::size_t channel_axis) {
  channel_geometry g;
  g.channels = order.extents[channel_axis];
  std::int64_t per_channel = 1, inner = 1;
  for (std::size_t r = 0; r < Rank; ++r) {
    if (r == channel_axis) continue;
    per_channel *= order.extents[r];
    if (order.extents[r] > 1 && order.strides[r] < order.strides[channel_axis]) inner *= order.extents[r];
  }
  if (g.channels == 0) inner = 1;  // nothing to read: any split of the batch will do
  g.inner = inner;
  g.outer = per_channel / inner;
  return g;
}

// The axis of x that holds the channels: 1 for (N, C, ...), the last for channels last (N, ..., C).
constexpr std::size_t channel_axis_of(memory_format layout, std::size_t rank) {
  return layout == channels_first || rank == 2 ? 1 : rank - 1;
}

// Whether x, a whole batch, may hold no values per channel. The phase functions take a part of a
// batch, which may be empty (an MPI rank without samples); a whole batch may not.
enum class batch_extent { whole, part };

// Checks x, y, dy and dx (x first, the others as named_views) and chooses the strides the kernels
// read them in: those of the first dense one, else x's axis order made dense.
template <class XView, class... Views>
block_layout<XView::rank> block_layout_of(const char* operation, memory_format layout, const XView& x,
                                          const named_view<Views>&... others) {
  return block_layout_of(batch_extent::whole, operation, layout, x, others...);
}

template <class XView, class... Views>
block_layout<XView::rank> block_layout_of(batch_extent extent, const char* operation, memory_format layout,
                                          const XView& x, const named_view<Views>&... others) {
  constexpr std::size_t rank = XView::rank;
  static_assert(rank >= 2 && rank <= 5,
                "ordo::nn::batch_norm requires x of rank 2 to 5: (N, C), (N, C, L), (N, C, H, W) or (N, C, D, H, W)");
  const std::size_t channel_axis = channel_axis_of(layout, rank);
  std::int64_t per_channel = 1;
  for (std::size_t r = 0; r < rank; ++r) {
    if (r != channel_axis) per_channel *= static_cast<std::int64_t>(x.extent(r));
  }
  if (per_channel == 0 && extent == batch_extent::whole) {
    throw std::invalid_argument(std::string(operation) + ": empty batch: x has shape " + view_shape_text(x) +
                                ", so N * spatial = 0 values per channel");
  }
  check_batch_view(input(x, "x"), operation);
  (check_batch_view(others, operation), ...);
  (check_same_extents(x, others.view, operation, "x", others.name), ...);
  block_layout<rank> b;
  const char* working_name = nullptr;
  const auto consider = [&](const memory_order<rank>& m, const char* name) {
    if (working_name == nullptr && m.dense()) {
      b.order = m;
      working_name = name;
    }
  };
  consider(memory_order_of(x), "x");
  (consider(memory_order_of(others.view), others.name), ...);
  if (working_name == nullptr) {
    b.order = memory_order_of(x).densified();
    working_name = "x's copy";
  }
  check_same_strides(input(x, "x"), b.order, working_name, operation);
  (check_same_strides(others, b.order, working_name, operation), ...);
  b.g = geometry_in(b.order, channel_axis);
  return b;
}

// x's geometry as the kernels see it (x alone, or x's dense copy when x is not dense).
template <class View>
channel_geometry geometry_of(const View& x, memory_format layout, const char* operation) {
  return block_layout_of(operation, layout, x).g;
}

template <class T, std::size_t Rank>
struct add_extents {
  using type = typename add_extents<T*, Rank - 1>::type;
};
template <class T>
struct add_extents<T, 0> {
  using type = T;
};

// A View as the kernels read or write it: its own data when its elements lie in the working
// strides, else a dense temporary in those strides, filled from the View (read) and copied back
// by write_back (written).
template <class View>
class block_operand {
 public:
  using value_type = typename View::non_const_value_type;
  using memory = typename View::memory_space;
  static constexpr std::size_t rank = View::rank;

  // The copies run on space, in order with the kernels the call launches there.
  template <class Space>
  block_operand(const Space& space, const View& v, const memory_order<rank>& working, bool read)
      : view_(v), working_(working) {
    if (working.size() == 0 || memory_order_of(v).same_positions(working)) {
      data_ = v.data();
      return;
    }
    copy_ = uninitialized_view<value_type, memory>("ordo::nn::batch_norm staged copy", working.size());
    data_ = copy_.data();
    if (read) Kokkos::deep_copy(space, strided_copy(), v);
  }

  typename View::value_type* data() const { return data_; }

  template <class Space>
  void write_back(const Space& space) const {
    if (copy_.data() != nullptr) {
      Kokkos::deep_copy(space, view_, strided_copy());
      space.fence();  // the copy is released with this operand
    }
  }

 private:
  using strided_view = Kokkos::View<typename add_extents<value_type, rank>::type, Kokkos::LayoutStride, memory,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  strided_view strided_copy() const {
    Kokkos::LayoutStride layout;
    for (std::size_t r = 0; r < rank; ++r) {
      layout.dimension[r] = static_cast<std::size_t>(working_.extents[r]);
      layout.stride[r] = static_cast<std::size_t>(working_.strides[r]);
    }
    return strided_view(copy_.data(), layout);
  }

  View view_;
  memory_order<rank> working_;
  Kokkos::View<value_type*, memory> copy_;
  typename View::value_type* data_ = nullptr;
};

template <class Space, class View, std::size_t Rank>
block_operand<View> read_operand(const Space& space, const View& v, const block_layout<Rank>& b) {
  return block_operand<View>(space, v, b.order, true);
}
template <class Space, class View, std::size_t Rank>
block_operand<View> write_operand(const Space& space, const View& v, const block_layout<Rank>& b) {
  return block_operand<View>(space, v, b.order, false);
}

}  // namespace ordo::nn::detail

#endif
