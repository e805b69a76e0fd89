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

#include <ordo/detail/cpu_dispatch.hpp>
#include <ordo/detail/kokkos_math.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <mutex>
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

// y, dy and dx are written and read through x's flat indexing, so they need its memory layout.
template <class View>
void check_like_x(const View& v, const char* operation, const char* name) {
  static_assert(std::is_same_v<typename View::array_layout, Kokkos::LayoutRight>,
                "ordo::nn::batch_norm requires row-major (LayoutRight) Views for y, dy and dx too");
  if (!v.span_is_contiguous()) {
    throw std::invalid_argument(std::string(operation) + ": " + name + " must be contiguous");
  }
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

// ORDO_RESTRICT promises that the pointers of a kernel's inner loop do not alias, so that the
// loops over channels (rows of channels-last data) vectorize; g++, clang and nvcc all spell it so.
#define ORDO_RESTRICT __restrict__

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

// Sums in double with 8 independent accumulators: the adds of one run do not wait on each other,
// and the loops vectorize. (Each group of 8 is converted into a temporary first: g++ 12 does not
// vectorize `acc[l] += double(x[i + l])` written in one statement, nor two such sums in one loop.)
KOKKOS_FORCEINLINE_FUNCTION double sum_of_lanes(const double (&acc)[8]) {
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

template <class T>
KOKKOS_FORCEINLINE_FUNCTION double run_sum(const T* ORDO_RESTRICT x, std::int64_t n) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    double v[8];
    for (int l = 0; l < 8; ++l) v[l] = static_cast<double>(x[i + l]);
    for (int l = 0; l < 8; ++l) acc[l] += v[l];
  }
  for (; i < n; ++i) acc[0] += static_cast<double>(x[i]);
  return sum_of_lanes(acc);
}

template <class T>
KOKKOS_FORCEINLINE_FUNCTION double run_squared_deviations(const T* ORDO_RESTRICT x, std::int64_t n, double centre) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    double d[8];
    for (int l = 0; l < 8; ++l) d[l] = static_cast<double>(x[i + l]) - centre;
    for (int l = 0; l < 8; ++l) acc[l] += d[l] * d[l];
  }
  for (; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - centre;
    acc[0] += d * d;
  }
  return sum_of_lanes(acc);
}

// sum (x - centre) dy over one run.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION double run_centred_dot(const T* ORDO_RESTRICT x, const T* ORDO_RESTRICT dy, std::int64_t n,
                                              double centre) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    double v[8];
    for (int l = 0; l < 8; ++l) v[l] = (static_cast<double>(x[i + l]) - centre) * static_cast<double>(dy[i + l]);
    for (int l = 0; l < 8; ++l) acc[l] += v[l];
  }
  for (; i < n; ++i) acc[0] += (static_cast<double>(x[i]) - centre) * static_cast<double>(dy[i]);
  return sum_of_lanes(acc);
}

// Forward statistics of one item, two passes over it: its sum s, then the sum of squared
// deviations from its centre s / count (computed as s * inverse_count), into partial_sum and
// partial_m2 (Q x C). The merge adds the sums for the batch mean and each item's m2 plus
// count (centre - mean)^2: the two-pass formula applied to the items, with no division per item.
template <class T>
struct item_moments_kernel {
  work_partition p;
  const T* x;
  double* partial_sum;
  double* partial_m2;

  KOKKOS_FORCEINLINE_FUNCTION void run(std::int64_t item) const {
    const std::int64_t cs = p.g.channels, inner = p.g.inner;
    const std::int64_t q = item / p.channel_items, w = item % p.channel_items;
    const std::int64_t r0 = p.row_begin(q), r1 = p.row_end(q);
    const double inverse_count = p.inverse_count(q);
    if (!p.by_rows()) {
      const std::int64_t c = w;
      double s = 0;
      for (std::int64_t r = r0; r < r1; ++r) s += run_sum(x + (r * cs + c) * inner, inner);
      const double centre = s * inverse_count;
      double m2 = 0;
      for (std::int64_t r = r0; r < r1; ++r) m2 += run_squared_deviations(x + (r * cs + c) * inner, inner, centre);
      partial_sum[q * cs + c] = s;
      partial_m2[q * cs + c] = m2;
    } else {
      const std::int64_t c0 = p.channel_begin(w), width = p.channel_end(w) - c0;
      double* ORDO_RESTRICT sum = partial_sum + q * cs + c0;
      double* ORDO_RESTRICT m2 = partial_m2 + q * cs + c0;
      if constexpr (std::is_same_v<T, float>) {
        shifted_rows(x, cs, c0, width, r0, r1, sum, m2, inverse_count);
        return;
      }
      // Four rows at a time: a quarter of the loads and stores of the per-channel sums.
      std::int64_t r = r0;
      for (std::int64_t c = 0; c < width; ++c) sum[c] = m2[c] = 0;
      for (; r + 4 <= r1; r += 4) {
        const T* ORDO_RESTRICT a = x + r * cs + c0;
        const T* ORDO_RESTRICT b = a + cs;
        const T* ORDO_RESTRICT d = b + cs;
        const T* ORDO_RESTRICT e = d + cs;
        for (std::int64_t c = 0; c < width; ++c) {
          sum[c] += (static_cast<double>(a[c]) + static_cast<double>(b[c])) +
                    (static_cast<double>(d[c]) + static_cast<double>(e[c]));
        }
      }
      for (; r < r1; ++r) {
        const T* ORDO_RESTRICT a = x + r * cs + c0;
        for (std::int64_t c = 0; c < width; ++c) sum[c] += static_cast<double>(a[c]);
      }
      for (r = r0; r + 4 <= r1; r += 4) {
        const T* ORDO_RESTRICT a = x + r * cs + c0;
        const T* ORDO_RESTRICT b = a + cs;
        const T* ORDO_RESTRICT d = b + cs;
        const T* ORDO_RESTRICT e = d + cs;
        for (std::int64_t c = 0; c < width; ++c) {
          const double centre = sum[c] * inverse_count;
          const double da = static_cast<double>(a[c]) - centre, db = static_cast<double>(b[c]) - centre;
          const double dd = static_cast<double>(d[c]) - centre, de = static_cast<double>(e[c]) - centre;
          m2[c] += (da * da + db * db) + (dd * dd + de * de);
        }
      }
      for (; r < r1; ++r) {
        const T* ORDO_RESTRICT a = x + r * cs + c0;
        for (std::int64_t c = 0; c < width; ++c) {
          const double d = static_cast<double>(a[c]) - sum[c] * inverse_count;
          m2[c] += d * d;
        }
      }
    }
  }

  // Rows of floats in one pass over the item: with K the item's first row, d = x - K, the sums of
  // d and d^2 in double give the item's sum n K + sum d and M2 = sum d^2 - (sum d)^2 / n. A float
  // difference x - K is exact in double (or off by one double rounding). K is one of the channel's
  // values, so (K - mean)^2 <= M2 and sum d^2 = M2 + n (mean - K)^2 <= (n + 1) M2: the cancellation
  // costs at most a factor n + 1, and the error stays below about 2 n^2 u_double of M2 (1.5e-11 for
  // the n = 256 rows of a (32, 56, 56, 64) item, 6e-8 at the largest n, 16384), far below float's
  // resolution. One pass instead of two saves a third of the arithmetic of the rows that dominate
  // channels-last statistics.
  KOKKOS_FORCEINLINE_FUNCTION static void shifted_rows(const T* x, std::int64_t cs, std::int64_t c0, std::int64_t width,
                                                       std::int64_t r0, std::int64_t r1, double* ORDO_RESTRICT sum,
                                                       double* ORDO_RESTRICT m2, double inverse_count) {
    const T* ORDO_RESTRICT shift = x + r0 * cs + c0;
    for (std::int64_t c = 0; c < width; ++c) sum[c] = m2[c] = 0;
    std::int64_t r = r0 + 1;  // row r0 contributes d = 0
    for (; r + 4 <= r1; r += 4) {
      const T* ORDO_RESTRICT a = x + r * cs + c0;
      const T* ORDO_RESTRICT b = a + cs;
      const T* ORDO_RESTRICT d = b + cs;
      const T* ORDO_RESTRICT e = d + cs;
      for (std::int64_t c = 0; c < width; ++c) {
        const double k = static_cast<double>(shift[c]);
        const double da = static_cast<double>(a[c]) - k, db = static_cast<double>(b[c]) - k;
        const double dd = static_cast<double>(d[c]) - k, de = static_cast<double>(e[c]) - k;
        sum[c] += (da + db) + (dd + de);
        m2[c] += (da * da + db * db) + (dd * dd + de * de);
      }
    }
    for (; r < r1; ++r) {
      const T* ORDO_RESTRICT a = x + r * cs + c0;
      for (std::int64_t c = 0; c < width; ++c) {
        const double da = static_cast<double>(a[c]) - static_cast<double>(shift[c]);
        sum[c] += da;
        m2[c] += da * da;
      }
    }
    const double n = static_cast<double>(r1 - r0);
    for (std::int64_t c = 0; c < width; ++c) {
      const double shifted_sum = sum[c];
      const double deviations = m2[c] - shifted_sum * shifted_sum * inverse_count;
      m2[c] = deviations > 0 ? deviations : 0;  // rounding must not make it negative
      sum[c] = n * static_cast<double>(shift[c]) + shifted_sum;
    }
  }
};

// Backward partial sums of one item: sum dy and sum (x - mean) dy, into partial_dy and
// partial_dotp (Q x C).
template <class T>
struct item_backward_sums_kernel {
  work_partition p;
  const T* x;
  const T* dy;
  const double* mean;
  double* partial_dy;
  double* partial_dotp;

  KOKKOS_FORCEINLINE_FUNCTION void run(std::int64_t item) const {
    const std::int64_t cs = p.g.channels, inner = p.g.inner;
    const std::int64_t q = item / p.channel_items, w = item % p.channel_items;
    const std::int64_t r0 = p.row_begin(q), r1 = p.row_end(q);
    if (!p.by_rows()) {
      const std::int64_t c = w;
      const double centre = mean[c];
      double sum_dy = 0, dotp = 0;
      for (std::int64_t r = r0; r < r1; ++r) {
        const std::int64_t base = (r * cs + c) * inner;
        sum_dy += run_sum(dy + base, inner);
        dotp += run_centred_dot(x + base, dy + base, inner, centre);
      }
      partial_dy[q * cs + c] = sum_dy;
      partial_dotp[q * cs + c] = dotp;
    } else {
      const std::int64_t c0 = p.channel_begin(w), width = p.channel_end(w) - c0;
      double* ORDO_RESTRICT sum_dy = partial_dy + q * cs + c0;
      double* ORDO_RESTRICT dotp = partial_dotp + q * cs + c0;
      const double* ORDO_RESTRICT centre = mean + c0;
      for (std::int64_t c = 0; c < width; ++c) sum_dy[c] = dotp[c] = 0;
      // Two rows at a time: half the loads and stores of the per-channel sums.
      std::int64_t r = r0;
      for (; r + 2 <= r1; r += 2) {
        const T* ORDO_RESTRICT xa = x + r * cs + c0;
        const T* ORDO_RESTRICT xb = xa + cs;
        const T* ORDO_RESTRICT ga = dy + r * cs + c0;
        const T* ORDO_RESTRICT gb = ga + cs;
        for (std::int64_t c = 0; c < width; ++c) {
          const double a = static_cast<double>(ga[c]), b = static_cast<double>(gb[c]);
          sum_dy[c] += a + b;
          dotp[c] += (static_cast<double>(xa[c]) - centre[c]) * a + (static_cast<double>(xb[c]) - centre[c]) * b;
        }
      }
      for (; r < r1; ++r) {
        const T* ORDO_RESTRICT xr = x + r * cs + c0;
        const T* ORDO_RESTRICT dyr = dy + r * cs + c0;
        for (std::int64_t c = 0; c < width; ++c) {
          const double g = static_cast<double>(dyr[c]);
          sum_dy[c] += g;
          dotp[c] += (static_cast<double>(xr[c]) - centre[c]) * g;
        }
      }
    }
  }
};

// The merges combine the Q item results of each channel in item order. A work item is a chunk of
// merge_width channels and loops over the items outside and the channels inside, so the adds of
// neighbouring channels vectorize instead of each channel waiting on its own chain of Q dependent
// adds (that chain made a (256, 1024) forward spend a third of its time merging). The totals
// overwrite the first item's row: each chunk reads and writes only its own columns.
inline constexpr std::int64_t merge_width = 32;

KOKKOS_INLINE_FUNCTION std::int64_t merge_chunks(std::int64_t channels) {
  return (channels + merge_width - 1) / merge_width;
}

// partial_sum[c] := the batch mean, partial_m2[c] := M2 of the batch (row 0).
struct merge_moments_kernel {
  work_partition p;
  double* partial_sum;
  double* partial_m2;
  double count;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t chunk) const {
    const std::int64_t cs = p.g.channels, c0 = chunk * merge_width;
    const std::int64_t width = cs - c0 < merge_width ? cs - c0 : merge_width;
    double sum[merge_width], m2[merge_width];
    for (std::int64_t j = 0; j < width; ++j) sum[j] = m2[j] = 0;
    for (std::int64_t q = 0; q < p.row_items; ++q) {
      const double* ORDO_RESTRICT s = partial_sum + q * cs + c0;
      for (std::int64_t j = 0; j < width; ++j) sum[j] += s[j];
    }
    for (std::int64_t j = 0; j < width; ++j) sum[j] /= count;  // now the mean
    for (std::int64_t q = 0; q < p.row_items; ++q) {
      const double* ORDO_RESTRICT s = partial_sum + q * cs + c0;
      const double* ORDO_RESTRICT d = partial_m2 + q * cs + c0;
      const double inverse = p.inverse_count(q), n = p.count(q);
      for (std::int64_t j = 0; j < width; ++j) {
        const double offset = s[j] * inverse - sum[j];
        m2[j] += d[j] + n * offset * offset;
      }
    }
    for (std::int64_t j = 0; j < width; ++j) {
      partial_sum[c0 + j] = sum[j];
      partial_m2[c0 + j] = m2[j];
    }
  }
};

// first[c] := sum over the items of first, second[c] likewise (row 0).
struct merge_sums_kernel {
  work_partition p;
  double* first;
  double* second;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t chunk) const {
    const std::int64_t cs = p.g.channels, c0 = chunk * merge_width;
    const std::int64_t width = cs - c0 < merge_width ? cs - c0 : merge_width;
    double a[merge_width], b[merge_width];
    for (std::int64_t j = 0; j < width; ++j) a[j] = b[j] = 0;
    for (std::int64_t q = 0; q < p.row_items; ++q) {
      const double* ORDO_RESTRICT f = first + q * cs + c0;
      const double* ORDO_RESTRICT s = second + q * cs + c0;
      for (std::int64_t j = 0; j < width; ++j) {
        a[j] += f[j];
        b[j] += s[j];
      }
    }
    for (std::int64_t j = 0; j < width; ++j) {
      first[c0 + j] = a[j];
      second[c0 + j] = b[j];
    }
  }
};

// The element passes compute in the input type T, as PyTorch's kernels do: with float that is
// four (SSE2) or eight (AVX2) values per instruction instead of two doubles, and these passes then
// run at memory speed. The batch mean is given as centre_high + centre_low, two T values whose sum
// is the double mean to 2^-48 relative: x - centre_high is exact when x lies within a factor of 2 of
// the mean (Sterbenz), so a large mean such as 1e4 costs no accuracy (one float centre would be off
// by up to ulp(1e4) / 2 = 5e-4, a relative error of 5e-4 in x - mean for unit variance). Each
// output is then within a few rounding errors of T of the terms it combines (docs/batch_norm.md).
template <class T>
struct split_centre {
  T high, low;
};

template <class T>
KOKKOS_INLINE_FUNCTION split_centre<T> split(double centre) {
  const T high = static_cast<T>(centre);
  return {high, static_cast<T>(centre - static_cast<double>(high))};
}

// Per-channel coefficients of the forward's element pass, C entries each:
// y = ((x - centre_high) - centre_low) scale + shift.
template <class T>
struct affine_coefficients {
  const T* centre_high;
  const T* centre_low;
  const T* scale;
  const T* shift;
};

template <class T>
struct normalize_kernel {
  work_partition p;
  const T* x;
  T* y;
  affine_coefficients<T> k;

  KOKKOS_FORCEINLINE_FUNCTION void run(std::int64_t item) const {
    const std::int64_t cs = p.g.channels, inner = p.g.inner;
    const std::int64_t q = item / p.channel_items, w = item % p.channel_items;
    const std::int64_t r0 = p.row_begin(q), r1 = p.row_end(q);
    if (!p.by_rows()) {
      const std::int64_t c = w;
      const T high = k.centre_high[c], low = k.centre_low[c], scale = k.scale[c], shift = k.shift[c];
      for (std::int64_t r = r0; r < r1; ++r) {
        const std::int64_t base = (r * cs + c) * inner;
        const T* ORDO_RESTRICT xr = x + base;
        T* ORDO_RESTRICT yr = y + base;
        for (std::int64_t i = 0; i < inner; ++i) yr[i] = ((xr[i] - high) - low) * scale + shift;
      }
    } else {
      const std::int64_t c0 = p.channel_begin(w), width = p.channel_end(w) - c0;
      const T* ORDO_RESTRICT high = k.centre_high + c0;
      const T* ORDO_RESTRICT low = k.centre_low + c0;
      const T* ORDO_RESTRICT scale = k.scale + c0;
      const T* ORDO_RESTRICT shift = k.shift + c0;
      for (std::int64_t r = r0; r < r1; ++r) {
        const T* ORDO_RESTRICT xr = x + r * cs + c0;
        T* ORDO_RESTRICT yr = y + r * cs + c0;
        for (std::int64_t c = 0; c < width; ++c) yr[c] = ((xr[c] - high[c]) - low[c]) * scale[c] + shift[c];
      }
    }
  }
};

// Per-channel coefficients of the backward's element pass, C entries each:
// dx = ((dy - mean_dy) - ((x - centre_high) - centre_low) projection) scale.
template <class T>
struct gradient_coefficients {
  const T* centre_high;
  const T* centre_low;
  const T* mean_dy;
  const T* projection;
  const T* scale;
};

template <class T>
struct input_gradient_kernel {
  work_partition p;
  const T* x;
  const T* dy;
  T* dx;
  gradient_coefficients<T> k;

  KOKKOS_FORCEINLINE_FUNCTION void run(std::int64_t item) const {
    const std::int64_t cs = p.g.channels, inner = p.g.inner;
    const std::int64_t q = item / p.channel_items, w = item % p.channel_items;
    const std::int64_t r0 = p.row_begin(q), r1 = p.row_end(q);
    if (!p.by_rows()) {
      const std::int64_t c = w;
      const T high = k.centre_high[c], low = k.centre_low[c], g = k.mean_dy[c], pr = k.projection[c], a = k.scale[c];
      for (std::int64_t r = r0; r < r1; ++r) {
        const std::int64_t base = (r * cs + c) * inner;
        const T* ORDO_RESTRICT xr = x + base;
        const T* ORDO_RESTRICT dyr = dy + base;
        T* ORDO_RESTRICT dxr = dx + base;
        for (std::int64_t i = 0; i < inner; ++i) dxr[i] = ((dyr[i] - g) - ((xr[i] - high) - low) * pr) * a;
      }
    } else {
      const std::int64_t c0 = p.channel_begin(w), width = p.channel_end(w) - c0;
      const T* ORDO_RESTRICT high = k.centre_high + c0;
      const T* ORDO_RESTRICT low = k.centre_low + c0;
      const T* ORDO_RESTRICT g = k.mean_dy + c0;
      const T* ORDO_RESTRICT pr = k.projection + c0;
      const T* ORDO_RESTRICT a = k.scale + c0;
      for (std::int64_t r = r0; r < r1; ++r) {
        const T* ORDO_RESTRICT xr = x + r * cs + c0;
        const T* ORDO_RESTRICT dyr = dy + r * cs + c0;
        T* ORDO_RESTRICT dxr = dx + r * cs + c0;
        for (std::int64_t c = 0; c < width; ++c) dxr[c] = ((dyr[c] - g[c]) - ((xr[c] - high[c]) - low[c]) * pr[c]) * a[c];
      }
    }
  }
};

// The four streaming kernels run through this wrapper: on the host it picks their AVX2 build
// when the CPU has AVX2 (detail/cpu_dispatch.hpp). Their bodies and helpers are force-inlined so
// that all of the item's work is compiled for the chosen instruction set. The variants give the
// same bits: the kernels fix their order of additions in explicit lanes, and no FMA is enabled.
template <class Kernel>
struct host_dispatched {
  Kernel kernel;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t item) const {
#if defined(ORDO_IMPL_DISPATCH_AVX2) && !defined(__CUDA_ARCH__)
    if (ordo::detail::host_capability() == ordo::detail::cpu_capability::avx2) {
      run_avx2(kernel, item);
      return;
    }
#endif
    kernel.run(item);
  }

#if defined(ORDO_IMPL_DISPATCH_AVX2)
  ORDO_IMPL_AVX2_FUNCTION static void run_avx2(const Kernel& k, std::int64_t item) { k.run(item); }
#endif
};

template <class Kernel>
host_dispatched<Kernel> dispatched(const Kernel& kernel) {
  return {kernel};
}

template <class Space>
using item_policy = Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>;

template <class Space, class... Views>
inline constexpr bool accessible_from_v =
    (Kokkos::SpaceAccessibility<Space, typename Views::memory_space>::accessible && ...);

template <class T, class Memory>
Kokkos::View<T*, Memory> uninitialized_view(const char* label, std::int64_t n) {
  return Kokkos::View<T*, Memory>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)),
                                  static_cast<std::size_t>(n));
}

// Scratch memory kept from call to call, one buffer per value type and memory space. Allocating
// the partial results afresh cost more than the kernels on small batches: glibc serves blocks of
// 128 KiB and more with mmap, so every call paid for mapping, page faults and unmapping (a
// (256, 1024) forward pass took 250 us instead of 140 us). A call leases the buffer for its
// duration; a concurrent call from another host thread gets a buffer of its own. The buffer is
// released by a Kokkos finalize hook, before Kokkos shuts down. Slot tells apart the buffers one
// call leases at once (a thread must not try to lock a mutex it holds).
enum class scratch_slot { partials, coefficients };

template <class Value, class Memory, scratch_slot Slot>
class scratch_lease {
 public:
  using view_type = Kokkos::View<Value*, Memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  scratch_lease(const char* label, std::int64_t size) : lock_(pool().mutex, std::try_to_lock) {
    if (lock_.owns_lock()) {
      shared& p = pool();
      if (!p.release_registered) {
        Kokkos::push_finalize_hook([] {
          shared& q = pool();
          const std::lock_guard<std::mutex> guard(q.mutex);
          q.buffer = Kokkos::View<Value*, Memory>();
          q.release_registered = false;
        });
        p.release_registered = true;
      }
      if (static_cast<std::int64_t>(p.buffer.extent(0)) < size) {
        p.buffer = Kokkos::View<Value*, Memory>();  // free before allocating the larger one
        p.buffer = uninitialized_view<Value, Memory>("ordo::nn::scratch", size);
      }
      view_ = view_type(p.buffer.data(), static_cast<std::size_t>(size));
    } else {
      own_ = uninitialized_view<Value, Memory>(label, size);
      view_ = view_type(own_.data(), static_cast<std::size_t>(size));
    }
  }
  scratch_lease(const scratch_lease&) = delete;
  scratch_lease& operator=(const scratch_lease&) = delete;

  // count values starting at offset.
  view_type part(std::int64_t offset, std::int64_t count) const {
    return view_type(view_.data() + offset, static_cast<std::size_t>(count));
  }

 private:
  struct shared {
    std::mutex mutex;
    Kokkos::View<Value*, Memory> buffer;
    bool release_registered = false;
  };
  // Never destroyed: the finalize hook empties it, and a View must not outlive Kokkos.
  static shared& pool() {
    static shared* const instance = new shared;
    return *instance;
  }

  std::unique_lock<std::mutex> lock_;
  Kokkos::View<Value*, Memory> own_;
  view_type view_;
};

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
  static_assert(std::is_same_v<typename YView::non_const_value_type, T>,
                "ordo::nn::batch_norm_forward_training: y must have x's value type");
  static_assert(detail::accessible_from_v<space, YView, ParamView, StatView>,
                "ordo::nn::batch_norm: y, gamma, beta and the running statistics must be accessible from x's "
                "execution space");
  const detail::channel_geometry g = detail::geometry_of(x, options.layout, op);
  detail::check_same_shape(x, y, op, "x", "y");
  detail::check_like_x(y, op, "y");
  detail::check_channels(gamma, g.channels, op, "gamma");
  detail::check_channels(beta, g.channels, op, "beta");
  detail::check_channels(running_mean, g.channels, op, "running_mean");
  detail::check_channels(running_var, g.channels, op, "running_var");
  const std::int64_t m = g.per_channel();
  if (m < 2) {
    throw std::invalid_argument(std::string(op) + ": expected more than 1 value per channel when training, got input of shape " +
                                detail::shape_string(x));
  }
  const detail::work_partition p = detail::partition_of(g);
  const std::int64_t cs = g.channels;
  // Written in full by the coefficients kernel below.
  batch_norm_saved<memory> saved{detail::uninitialized_view<double, memory>("ordo::nn::saved mean", cs),
                                 detail::uninitialized_view<double, memory>("ordo::nn::saved invstd", cs)};
  const detail::scratch_lease<double, memory, detail::scratch_slot::partials> partials("ordo::nn::partial moments", 2 * p.row_items * cs);
  const detail::scratch_lease<T, memory, detail::scratch_slot::coefficients> coefficient_lease("ordo::nn::coefficients", 4 * cs);
  const auto partial_sum = partials.part(0, p.row_items * cs);
  const auto partial_m2 = partials.part(p.row_items * cs, p.row_items * cs);
  const auto coefficients = coefficient_lease.part(0, 4 * cs);

  Kokkos::parallel_for("ordo::nn::batch_norm_forward_training statistics", detail::item_policy<space>(0, p.items()),
                       detail::dispatched(detail::item_moments_kernel<T>{p, x.data(), partial_sum.data(), partial_m2.data()}));
  const auto mean = saved.mean;
  const auto invstd = saved.invstd;
  const double eps = options.eps, momentum = options.momentum, count = static_cast<double>(m);
  using stat_type = typename StatView::non_const_value_type;
  Kokkos::parallel_for("ordo::nn::batch_norm_forward_training merge", detail::item_policy<space>(0, detail::merge_chunks(cs)),
                       detail::merge_moments_kernel{p, partial_sum.data(), partial_m2.data(), count});
  Kokkos::parallel_for(
      "ordo::nn::batch_norm_forward_training coefficients", detail::item_policy<space>(0, cs), KOKKOS_LAMBDA(std::int64_t c) {
        const double batch_mean = partial_sum(c), m2 = partial_m2(c);
        const double biased = m2 / count, unbiased = m2 / (count - 1);
        const double is = 1.0 / ordo::detail::math::sqrt(biased + eps);
        mean(c) = batch_mean;
        invstd(c) = is;
        const auto centre = detail::split<T>(batch_mean);
        coefficients(c) = centre.high;
        coefficients(cs + c) = centre.low;
        coefficients(2 * cs + c) = static_cast<T>(is * static_cast<double>(gamma(c)));
        coefficients(3 * cs + c) = static_cast<T>(beta(c));
        running_mean(c) =
            static_cast<stat_type>((1 - momentum) * static_cast<double>(running_mean(c)) + momentum * batch_mean);
        running_var(c) = static_cast<stat_type>((1 - momentum) * static_cast<double>(running_var(c)) + momentum * unbiased);
      });
  Kokkos::parallel_for(
      "ordo::nn::batch_norm_forward_training normalize", detail::item_policy<space>(0, p.items()),
      detail::dispatched(detail::normalize_kernel<T>{
          p, x.data(), y.data(),
          {coefficients.data(), coefficients.data() + cs, coefficients.data() + 2 * cs, coefficients.data() + 3 * cs}}));
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
  using memory = typename XView::memory_space;
  using T = typename XView::non_const_value_type;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "ordo::nn::batch_norm takes float or double");
  static_assert(std::is_same_v<typename YView::non_const_value_type, T>,
                "ordo::nn::batch_norm_forward_inference: y must have x's value type");
  static_assert(detail::accessible_from_v<space, YView, ParamView, StatView>,
                "ordo::nn::batch_norm: y, gamma, beta and the running statistics must be accessible from x's "
                "execution space");
  const detail::channel_geometry g = detail::geometry_of(x, options.layout, op);
  detail::check_same_shape(x, y, op, "x", "y");
  detail::check_like_x(y, op, "y");
  detail::check_channels(gamma, g.channels, op, "gamma");
  detail::check_channels(beta, g.channels, op, "beta");
  detail::check_channels(running_mean, g.channels, op, "running_mean");
  detail::check_channels(running_var, g.channels, op, "running_var");
  const detail::work_partition p = detail::partition_of(g);
  const std::int64_t cs = g.channels;
  const detail::scratch_lease<T, memory, detail::scratch_slot::coefficients> coefficient_lease("ordo::nn::coefficients", 4 * cs);
  const auto coefficients = coefficient_lease.part(0, 4 * cs);
  const double eps = options.eps;
  Kokkos::parallel_for(
      "ordo::nn::batch_norm_forward_inference coefficients", detail::item_policy<space>(0, cs),
      KOKKOS_LAMBDA(std::int64_t c) {
        const double is = 1.0 / ordo::detail::math::sqrt(static_cast<double>(running_var(c)) + eps);
        const auto centre = detail::split<T>(static_cast<double>(running_mean(c)));
        coefficients(c) = centre.high;
        coefficients(cs + c) = centre.low;
        coefficients(2 * cs + c) = static_cast<T>(is * static_cast<double>(gamma(c)));
        coefficients(3 * cs + c) = static_cast<T>(beta(c));
      });
  Kokkos::parallel_for("ordo::nn::batch_norm_forward_inference", detail::item_policy<space>(0, p.items()),
                       detail::dispatched(detail::normalize_kernel<T>{
                           p, x.data(), y.data(),
                           {coefficients.data(), coefficients.data() + cs, coefficients.data() + 2 * cs,
                            coefficients.data() + 3 * cs}}));
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
  using memory = typename XView::memory_space;
  using T = typename XView::non_const_value_type;
  using G = typename GradView::non_const_value_type;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "ordo::nn::batch_norm takes float or double");
  static_assert(std::is_same_v<typename DyView::non_const_value_type, T> &&
                    std::is_same_v<typename DxView::non_const_value_type, T>,
                "ordo::nn::batch_norm_backward: dy and dx must have x's value type");
  static_assert(detail::accessible_from_v<space, DyView, DxView, ParamView, GradView, Kokkos::View<double*, MemorySpace>>,
                "ordo::nn::batch_norm_backward: dy, dx, gamma, the gradients and saved must be accessible from x's "
                "execution space");
  const detail::channel_geometry g = detail::geometry_of(x, options.layout, op);
  detail::check_same_shape(x, dy, op, "x", "dy");
  detail::check_same_shape(x, dx, op, "x", "dx");
  detail::check_like_x(dy, op, "dy");
  detail::check_like_x(dx, op, "dx");
  detail::check_channels(gamma, g.channels, op, "gamma");
  detail::check_channels(saved.mean, g.channels, op, "saved.mean");
  detail::check_channels(saved.invstd, g.channels, op, "saved.invstd");
  detail::check_channels(dgamma, g.channels, op, "dgamma");
  detail::check_channels(dbeta, g.channels, op, "dbeta");
  const detail::work_partition p = detail::partition_of(g);
  const std::int64_t cs = g.channels;
  const detail::scratch_lease<double, memory, detail::scratch_slot::partials> partials("ordo::nn::partial gradient sums", 2 * p.row_items * cs);
  const detail::scratch_lease<T, memory, detail::scratch_slot::coefficients> coefficient_lease("ordo::nn::backward coefficients", 5 * cs);
  const auto partial_dy = partials.part(0, p.row_items * cs);
  const auto partial_dotp = partials.part(p.row_items * cs, p.row_items * cs);
  const auto coefficients = coefficient_lease.part(0, 5 * cs);
  const auto mean = saved.mean;
  const auto invstd = saved.invstd;
  Kokkos::parallel_for("ordo::nn::batch_norm_backward sums", detail::item_policy<space>(0, p.items()),
                       detail::dispatched(detail::item_backward_sums_kernel<T>{
                           p, x.data(), dy.data(), mean.data(), partial_dy.data(), partial_dotp.data()}));
  const double count = static_cast<double>(g.per_channel());
  Kokkos::parallel_for("ordo::nn::batch_norm_backward merge", detail::item_policy<space>(0, detail::merge_chunks(cs)),
                       detail::merge_sums_kernel{p, partial_dy.data(), partial_dotp.data()});
  Kokkos::parallel_for(
      "ordo::nn::batch_norm_backward coefficients", detail::item_policy<space>(0, cs), KOKKOS_LAMBDA(std::int64_t c) {
        const double sum_dy = partial_dy(c), dotp = partial_dotp(c);
        const double is = invstd(c);
        const auto centre = detail::split<T>(mean(c));
        coefficients(c) = centre.high;
        coefficients(cs + c) = centre.low;
        coefficients(2 * cs + c) = static_cast<T>(sum_dy / count);
        coefficients(3 * cs + c) = static_cast<T>(is * is * dotp / count);
        coefficients(4 * cs + c) = static_cast<T>(is * static_cast<double>(gamma(c)));
        dgamma(c) = static_cast<G>(dotp * is);
        dbeta(c) = static_cast<G>(sum_dy);
      });
  Kokkos::parallel_for("ordo::nn::batch_norm_backward input gradient", detail::item_policy<space>(0, p.items()),
                       detail::dispatched(detail::input_gradient_kernel<T>{
                           p, x.data(), dy.data(), dx.data(),
                           {coefficients.data(), coefficients.data() + cs, coefficients.data() + 2 * cs,
                            coefficients.data() + 3 * cs, coefficients.data() + 4 * cs}}));
  space().fence();
}

}  // namespace ordo::nn

#undef ORDO_RESTRICT

#endif
