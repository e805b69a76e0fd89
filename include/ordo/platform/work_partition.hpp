#ifndef ORDO_PLATFORM_WORK_PARTITION_HPP
#define ORDO_PLATFORM_WORK_PARTITION_HPP

// Cutting a tensor of channels into work items by its shape alone, shared by the per-channel
// kernels (batch norm) and the per-row ones (softmax and friends: rows are channels of a
// channels-last tensor). Items never depend on the thread count or the execution space, and
// partial results are merged in item order, so results are bitwise reproducible anywhere.

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace ordo::detail {

// x as (outer, C, inner) blocks of a dense array: element (o, c, i) at (o C + c) inner + i. In
// row-major order channels first is (N, C, S) and channels last is (N * S, C, 1), where S is the
// product of the spatial extents; other axis orders give other blocks (LayoutLeft NCHW is
// (S, C, N); nn/detail/batch_norm_layout.hpp derives them from the strides).
struct channel_geometry {
  std::int64_t outer = 0, channels = 0, inner = 0;
  KOKKOS_INLINE_FUNCTION std::int64_t per_channel() const { return outer * inner; }
};

// The batch is cut into work items by its shape alone, never by the thread count, and every
// per-channel result is combined from the items' partial results in item order. So the
// statistics, and with them every output, have the same bits on any number of threads and any
// execution space.
//   blocks (inner > 1, channels first): item (q, c) = rows [q R, q R + R) of channel c, that is
//     R contiguous runs of `inner` values, R = max(1, block_item_elements / inner). Items are
//     numbered q C + c, so with R = 1 consecutive items are adjacent in memory.
//   rows (inner == 1: channels last, or (N, C)): item (q, w) = rows [q R, q R + R) of the channels
//     [w W, w W + W), W = min(C, row_item_channels), R = max(1, row_item_elements / W).
// An item fits in the L1 (blocks) or L2 (rows) cache, so the forward's two passes over it read
// memory once. Row items are larger because each of them leaves W partial results to merge.
inline constexpr std::int64_t block_item_elements = 4096;
inline constexpr std::int64_t row_item_elements = 16384;
inline constexpr std::int64_t row_item_channels = 1024;

struct work_partition {
  channel_geometry g;
  std::int64_t rows_per_item = 1;  // R
  std::int64_t row_items = 1;      // Q: the partial results are Q x C
  std::int64_t channel_width = 1;  // W
  std::int64_t channel_items = 1;
  // 1 / count(q) for full items and for the last one, computed once on the host, so that the
  // item kernels and the merge derive the same item centres without a division per item.
  double inverse_full_count = 1, inverse_last_count = 1;

  KOKKOS_FORCEINLINE_FUNCTION bool by_rows() const { return g.inner == 1; }
  KOKKOS_INLINE_FUNCTION std::int64_t items() const { return row_items * channel_items; }
  KOKKOS_FORCEINLINE_FUNCTION std::int64_t row_begin(std::int64_t q) const { return q * rows_per_item; }
  KOKKOS_FORCEINLINE_FUNCTION std::int64_t row_end(std::int64_t q) const {
    const std::int64_t end = (q + 1) * rows_per_item;
    return end < g.outer ? end : g.outer;
  }
  // Values of one channel in row item q.
  KOKKOS_FORCEINLINE_FUNCTION double count(std::int64_t q) const {
    return static_cast<double>((row_end(q) - row_begin(q)) * g.inner);
  }
  KOKKOS_FORCEINLINE_FUNCTION double inverse_count(std::int64_t q) const {
    return q + 1 == row_items ? inverse_last_count : inverse_full_count;
  }
  KOKKOS_FORCEINLINE_FUNCTION std::int64_t channel_begin(std::int64_t w) const { return w * channel_width; }
  KOKKOS_FORCEINLINE_FUNCTION std::int64_t channel_end(std::int64_t w) const {
    const std::int64_t end = (w + 1) * channel_width;
    return end < g.channels ? end : g.channels;
  }
  // Where element (row r, channel c) starts: its run of `inner` values, or its one value by rows.
  KOKKOS_FORCEINLINE_FUNCTION std::int64_t offset(std::int64_t r, std::int64_t c) const {
    return (r * g.channels + c) * g.inner;
  }

  // What one work item covers: rows [row_begin, row_end) of row item q, and the channels
  // [channel_begin, channel_end) (one channel for block items). Every item kernel, host or team,
  // starts from it; its partial results go to row q of the Q x C partials.
  struct span {
    std::int64_t q, row_begin, row_end, channel_begin, channel_end;
    KOKKOS_FORCEINLINE_FUNCTION std::int64_t width() const { return channel_end - channel_begin; }
  };
  KOKKOS_FORCEINLINE_FUNCTION span item(std::int64_t i) const {
    const std::int64_t q = i / channel_items, w = i % channel_items;
    return {q, row_begin(q), row_end(q), channel_begin(w), channel_end(w)};
  }
};

inline work_partition partition_of(const channel_geometry& g) {
  work_partition p;
  p.g = g;
  if (g.inner > 1) {
    p.rows_per_item = g.inner >= block_item_elements ? 1 : block_item_elements / g.inner;
    p.channel_width = 1;
  } else {
    // max(1, ...): a batch without channels has no items, but must not divide by zero.
    p.channel_width = g.channels < 1 ? 1 : g.channels < row_item_channels ? g.channels : row_item_channels;
    p.rows_per_item = p.channel_width >= row_item_elements ? 1 : row_item_elements / p.channel_width;
  }
  p.row_items = (g.outer + p.rows_per_item - 1) / p.rows_per_item;
  p.channel_items = (g.channels + p.channel_width - 1) / p.channel_width;
  p.inverse_full_count = 1.0 / p.count(0);
  p.inverse_last_count = 1.0 / p.count(p.row_items - 1);
  return p;
}

// Work items are numbered 0 .. items() - 1, one per parallel_for index.
template <class Space>
using item_policy = Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>;

}  // namespace ordo::detail

#endif
