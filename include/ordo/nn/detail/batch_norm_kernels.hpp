#ifndef ORDO_NN_DETAIL_BATCH_NORM_KERNELS_HPP
#define ORDO_NN_DETAIL_BATCH_NORM_KERNELS_HPP

// Batch norm's kernels, one work item each (kernels/detail/work_partition.hpp): per-item
// statistics and gradient sums, their merges in item order, and the element passes. Each comes in
// two launch shapes (kernels/detail/launch_shape.hpp) with the same bits: the host shape runs an
// item on one thread (long runs for caches and SIMD); the device shape, at the end of this file,
// runs an item on threads of a team that each take one sequential chain of the host's order.

#include <ordo/core/config.hpp>
#include <ordo/kernels/detail/work_partition.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace ordo::nn::detail {

using ordo::detail::work_partition;

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

// mean[c] := the batch mean, m2[c] := M2 of the batch. The outputs may be the partials' row 0.
struct merge_moments_kernel {
  work_partition p;
  const double* partial_sum;
  const double* partial_m2;
  double count;
  double* mean;
  double* m2_out;

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
      mean[c0 + j] = sum[j];
      m2_out[c0 + j] = m2[j];
    }
  }
};

// first_total[c] := sum over the items of first, second_total[c] likewise. The outputs may be the
// partials' row 0.
struct merge_sums_kernel {
  work_partition p;
  const double* first;
  const double* second;
  double* first_total;
  double* second_total;

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
      first_total[c0 + j] = a[j];
      second_total[c0 + j] = b[j];
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

// ------------------------------------------------------------------------------------------------
// The device shape. The host's order of additions is kept exactly, so both shapes give the same
// bits; what can run in parallel is what the host order leaves independent:
//   blocks (channels first): each run's 8 lanes (run_sum's acc[l]) are independent chains, and so
//     are the runs of an item; a team takes items_per_team items, a thread per (item, run, lane)
//     for runs of at least 64 values, neighbouring threads reading neighbouring values, else a
//     thread per (item, run); the lane and run results meet in team scratch and are added in the
//     host's order;
//   rows (channels last, (N, C)): each channel of an item is one chain over the item's rows; a
//     thread per (item, channel), neighbouring threads on neighbouring channels;
//   merges: a thread per channel; element passes: a thread per element.

// Lane `lane` of run_sum's 8 accumulators: values lane, lane + 8, ... of the groups of 8, and for
// lane 0 the tail after them, in run_sum's order.
template <class T>
KOKKOS_INLINE_FUNCTION double lane_sum(const T* x, std::int64_t n, int lane) {
  const std::int64_t groups = n / 8 * 8;
  double acc = 0;
  for (std::int64_t i = lane; i < groups; i += 8) acc += static_cast<double>(x[i]);
  if (lane == 0) {
    for (std::int64_t i = groups; i < n; ++i) acc += static_cast<double>(x[i]);
  }
  return acc;
}

template <class T>
KOKKOS_INLINE_FUNCTION double lane_squared_deviations(const T* x, std::int64_t n, double centre, int lane) {
  const std::int64_t groups = n / 8 * 8;
  double acc = 0;
  for (std::int64_t i = lane; i < groups; i += 8) {
    const double d = static_cast<double>(x[i]) - centre;
    acc += d * d;
  }
  if (lane == 0) {
    for (std::int64_t i = groups; i < n; ++i) {
      const double d = static_cast<double>(x[i]) - centre;
      acc += d * d;
    }
  }
  return acc;
}

template <class T>
KOKKOS_INLINE_FUNCTION double lane_centred_dot(const T* x, const T* dy, std::int64_t n, double centre, int lane) {
  const std::int64_t groups = n / 8 * 8;
  double acc = 0;
  for (std::int64_t i = lane; i < groups; i += 8) acc += (static_cast<double>(x[i]) - centre) * static_cast<double>(dy[i]);
  if (lane == 0) {
    for (std::int64_t i = groups; i < n; ++i) acc += (static_cast<double>(x[i]) - centre) * static_cast<double>(dy[i]);
  }
  return acc;
}

// How the device shape cuts items among teams: items_per_team items a team, each item
// chains_per_item chains (blocks: rows_per_item runs of `lanes` chains; rows: channel_width).
struct team_cut {
  std::int64_t items_per_team = 1, chains_per_item = 1, teams = 0;
  int lanes = 1;  // blocks: 8 (a thread per lane of a run) or 1 (a thread per run)
  bool by_rows = false;

  // Chains a team aims at: a GPU block of 256 threads. Runs shorter than lane_threshold values are
  // one chain each (a thread per lane would add fewer than 8 values).
  static constexpr std::int64_t chains_per_team = 256;
  static constexpr std::int64_t lane_threshold = 64;

  // Doubles of team scratch for `arrays` chain results per chain, and one more per item.
  KOKKOS_INLINE_FUNCTION std::int64_t scratch_values(int arrays) const {
    return by_rows ? 0 : (arrays * chains_per_item + 1) * items_per_team;
  }
};

inline team_cut team_cut_of(const work_partition& p) {
  team_cut t;
  t.by_rows = p.by_rows();
  if (p.by_rows()) {
    t.chains_per_item = p.channel_width;
  } else {
    t.lanes = p.g.inner >= team_cut::lane_threshold ? 8 : 1;
    t.chains_per_item = p.rows_per_item * t.lanes;
  }
  t.items_per_team = t.chains_per_item >= team_cut::chains_per_team ? 1 : team_cut::chains_per_team / t.chains_per_item;
  t.teams = (p.items() + t.items_per_team - 1) / t.items_per_team;
  return t;
}

template <class Space>
using team_member_t = typename Kokkos::TeamPolicy<Space>::member_type;
template <class Space>
using team_scratch_t = Kokkos::View<double*, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;

// What one team of the blocks kernels works on.
struct team_items {
  std::int64_t first = 0, count = 0;

  KOKKOS_INLINE_FUNCTION team_items(const work_partition& p, const team_cut& t, std::int64_t league_rank)
      : first(league_rank * t.items_per_team) {
    const std::int64_t left = p.items() - first;
    count = left < t.items_per_team ? left : t.items_per_team;
  }
};

// The sum of one run's chain results in scratch, as run_sum adds its lanes.
KOKKOS_INLINE_FUNCTION double run_total(const double* chains, int lanes) {
  if (lanes == 1) return chains[0];
  const double acc[8] = {chains[0], chains[1], chains[2], chains[3], chains[4], chains[5], chains[6], chains[7]};
  return sum_of_lanes(acc);
}

// item_moments_kernel in the device shape.
template <class T, class Space>
struct team_moments_kernel {
  work_partition p;
  team_cut t;
  const T* x;
  double* partial_sum;
  double* partial_m2;

  KOKKOS_INLINE_FUNCTION void operator()(const team_member_t<Space>& m) const {
    if (p.by_rows()) {
      rows(m);
    } else {
      blocks(m);
    }
  }

  KOKKOS_INLINE_FUNCTION void blocks(const team_member_t<Space>& m) const {
    const team_items items(p, t, m.league_rank());
    const std::int64_t cs = p.g.channels, inner = p.g.inner, chains = t.chains_per_item;
    const int lanes = t.lanes;
    const team_scratch_t<Space> scratch(m.team_scratch(0), static_cast<std::size_t>(t.scratch_values(1)));
    double* const chain = scratch.data();
    double* const centre = chain + t.items_per_team * chains;
    const auto run_of = [&](std::int64_t j, std::int64_t& q, std::int64_t& c, std::int64_t& row) {
      const std::int64_t item = items.first + j / chains;
      q = item / p.channel_items;
      c = item % p.channel_items;
      row = p.row_begin(q) + j % chains / lanes;
      return row < p.row_end(q);
    };
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, items.count * chains), [&](std::int64_t j) {
      std::int64_t q = 0, c = 0, row = 0;
      if (!run_of(j, q, c, row)) return;
      const T* run = x + (row * cs + c) * inner;
      chain[j] = lanes == 1 ? run_sum(run, inner) : lane_sum(run, inner, static_cast<int>(j % lanes));
    });
    m.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, items.count), [&](std::int64_t g) {
      const std::int64_t item = items.first + g, q = item / p.channel_items, c = item % p.channel_items;
      double s = 0;
      for (std::int64_t r = 0; r < p.row_end(q) - p.row_begin(q); ++r) s += run_total(chain + g * chains + r * lanes, lanes);
      partial_sum[q * cs + c] = s;
      centre[g] = s * p.inverse_count(q);
    });
    m.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, items.count * chains), [&](std::int64_t j) {
      std::int64_t q = 0, c = 0, row = 0;
      if (!run_of(j, q, c, row)) return;
      const T* run = x + (row * cs + c) * inner;
      const double k = centre[j / chains];
      chain[j] = lanes == 1 ? run_squared_deviations(run, inner, k)
                            : lane_squared_deviations(run, inner, k, static_cast<int>(j % lanes));
    });
    m.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, items.count), [&](std::int64_t g) {
      const std::int64_t item = items.first + g, q = item / p.channel_items, c = item % p.channel_items;
      double m2 = 0;
      for (std::int64_t r = 0; r < p.row_end(q) - p.row_begin(q); ++r) m2 += run_total(chain + g * chains + r * lanes, lanes);
      partial_m2[q * cs + c] = m2;
    });
  }

  // One channel of a row item, as item_moments_kernel's loops do it for each channel.
  KOKKOS_INLINE_FUNCTION void rows(const team_member_t<Space>& m) const {
    const team_items items(p, t, m.league_rank());
    const std::int64_t cs = p.g.channels, width_max = t.chains_per_item;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, items.count * width_max), [&](std::int64_t j) {
      const std::int64_t item = items.first + j / width_max;
      const std::int64_t q = item / p.channel_items, w = item % p.channel_items;
      const std::int64_t c = p.channel_begin(w) + j % width_max;
      if (c >= p.channel_end(w)) return;
      const std::int64_t r0 = p.row_begin(q), r1 = p.row_end(q);
      const double inverse_count = p.inverse_count(q);
      const T* col = x + c;
      double sum = 0, m2 = 0;
      if constexpr (std::is_same_v<T, float>) {
        const double k = static_cast<double>(col[r0 * cs]);
        std::int64_t r = r0 + 1;
        for (; r + 4 <= r1; r += 4) {
          const double da = static_cast<double>(col[r * cs]) - k, db = static_cast<double>(col[(r + 1) * cs]) - k;
          const double dd = static_cast<double>(col[(r + 2) * cs]) - k, de = static_cast<double>(col[(r + 3) * cs]) - k;
          sum += (da + db) + (dd + de);
          m2 += (da * da + db * db) + (dd * dd + de * de);
        }
        for (; r < r1; ++r) {
          const double da = static_cast<double>(col[r * cs]) - k;
          sum += da;
          m2 += da * da;
        }
        const double n = static_cast<double>(r1 - r0);
        const double deviations = m2 - sum * sum * inverse_count;
        m2 = deviations > 0 ? deviations : 0;
        sum = n * k + sum;
      } else {
        std::int64_t r = r0;
        for (; r + 4 <= r1; r += 4) {
          sum += (static_cast<double>(col[r * cs]) + static_cast<double>(col[(r + 1) * cs])) +
                 (static_cast<double>(col[(r + 2) * cs]) + static_cast<double>(col[(r + 3) * cs]));
        }
        for (; r < r1; ++r) sum += static_cast<double>(col[r * cs]);
        for (r = r0; r + 4 <= r1; r += 4) {
          const double centre = sum * inverse_count;
          const double da = static_cast<double>(col[r * cs]) - centre, db = static_cast<double>(col[(r + 1) * cs]) - centre;
          const double dd = static_cast<double>(col[(r + 2) * cs]) - centre,
                       de = static_cast<double>(col[(r + 3) * cs]) - centre;
          m2 += (da * da + db * db) + (dd * dd + de * de);
        }
        for (; r < r1; ++r) {
          const double d = static_cast<double>(col[r * cs]) - sum * inverse_count;
          m2 += d * d;
        }
      }
      partial_sum[q * cs + c] = sum;
      partial_m2[q * cs + c] = m2;
    });
  }
};

// item_backward_sums_kernel in the device shape.
template <class T, class Space>
struct team_backward_sums_kernel {
  work_partition p;
  team_cut t;
  const T* x;
  const T* dy;
  const double* mean;
  double* partial_dy;
  double* partial_dotp;

  KOKKOS_INLINE_FUNCTION void operator()(const team_member_t<Space>& m) const {
    if (p.by_rows()) {
      rows(m);
    } else {
      blocks(m);
    }
  }

  KOKKOS_INLINE_FUNCTION void blocks(const team_member_t<Space>& m) const {
    const team_items items(p, t, m.league_rank());
    const std::int64_t cs = p.g.channels, inner = p.g.inner, chains = t.chains_per_item;
    const int lanes = t.lanes;
    const team_scratch_t<Space> scratch(m.team_scratch(0), static_cast<std::size_t>(t.scratch_values(2)));
    double* const chain_dy = scratch.data();
    double* const chain_dotp = chain_dy + t.items_per_team * chains;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, items.count * chains), [&](std::int64_t j) {
      const std::int64_t item = items.first + j / chains;
      const std::int64_t q = item / p.channel_items, c = item % p.channel_items;
      const std::int64_t row = p.row_begin(q) + j % chains / lanes;
      if (row >= p.row_end(q)) return;
      const std::int64_t base = (row * cs + c) * inner;
      const double centre = mean[c];
      if (lanes == 1) {
        chain_dy[j] = run_sum(dy + base, inner);
        chain_dotp[j] = run_centred_dot(x + base, dy + base, inner, centre);
      } else {
        const int lane = static_cast<int>(j % lanes);
        chain_dy[j] = lane_sum(dy + base, inner, lane);
        chain_dotp[j] = lane_centred_dot(x + base, dy + base, inner, centre, lane);
      }
    });
    m.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, items.count), [&](std::int64_t g) {
      const std::int64_t item = items.first + g, q = item / p.channel_items, c = item % p.channel_items;
      double sum_dy = 0, dotp = 0;
      for (std::int64_t r = 0; r < p.row_end(q) - p.row_begin(q); ++r) {
        sum_dy += run_total(chain_dy + g * chains + r * lanes, lanes);
        dotp += run_total(chain_dotp + g * chains + r * lanes, lanes);
      }
      partial_dy[q * cs + c] = sum_dy;
      partial_dotp[q * cs + c] = dotp;
    });
  }

  KOKKOS_INLINE_FUNCTION void rows(const team_member_t<Space>& m) const {
    const team_items items(p, t, m.league_rank());
    const std::int64_t cs = p.g.channels, width_max = t.chains_per_item;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, items.count * width_max), [&](std::int64_t j) {
      const std::int64_t item = items.first + j / width_max;
      const std::int64_t q = item / p.channel_items, w = item % p.channel_items;
      const std::int64_t c = p.channel_begin(w) + j % width_max;
      if (c >= p.channel_end(w)) return;
      const std::int64_t r0 = p.row_begin(q), r1 = p.row_end(q);
      const double centre = mean[c];
      const T* xc = x + c;
      const T* gc = dy + c;
      double sum_dy = 0, dotp = 0;
      std::int64_t r = r0;
      for (; r + 2 <= r1; r += 2) {
        const double a = static_cast<double>(gc[r * cs]), b = static_cast<double>(gc[(r + 1) * cs]);
        sum_dy += a + b;
        dotp += (static_cast<double>(xc[r * cs]) - centre) * a + (static_cast<double>(xc[(r + 1) * cs]) - centre) * b;
      }
      for (; r < r1; ++r) {
        const double g = static_cast<double>(gc[r * cs]);
        sum_dy += g;
        dotp += (static_cast<double>(xc[r * cs]) - centre) * g;
      }
      partial_dy[q * cs + c] = sum_dy;
      partial_dotp[q * cs + c] = dotp;
    });
  }
};

// merge_moments_kernel for one channel.
struct channel_merge_moments_kernel {
  work_partition p;
  const double* partial_sum;
  const double* partial_m2;
  double count;
  double* mean;
  double* m2_out;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t c) const {
    const std::int64_t cs = p.g.channels;
    double sum = 0, m2 = 0;
    for (std::int64_t q = 0; q < p.row_items; ++q) sum += partial_sum[q * cs + c];
    sum /= count;
    for (std::int64_t q = 0; q < p.row_items; ++q) {
      const double offset = partial_sum[q * cs + c] * p.inverse_count(q) - sum;
      m2 += partial_m2[q * cs + c] + p.count(q) * offset * offset;
    }
    mean[c] = sum;
    m2_out[c] = m2;
  }
};

// merge_sums_kernel for one channel.
struct channel_merge_sums_kernel {
  work_partition p;
  const double* first;
  const double* second;
  double* first_total;
  double* second_total;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t c) const {
    const std::int64_t cs = p.g.channels;
    double a = 0, b = 0;
    for (std::int64_t q = 0; q < p.row_items; ++q) {
      a += first[q * cs + c];
      b += second[q * cs + c];
    }
    first_total[c] = a;
    second_total[c] = b;
  }
};

// normalize_kernel for one element of the (outer, C, inner) array.
template <class T>
struct element_normalize_kernel {
  ordo::detail::channel_geometry g;
  const T* x;
  T* y;
  affine_coefficients<T> k;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t e) const {
    const std::int64_t c = e / g.inner % g.channels;
    y[e] = ((x[e] - k.centre_high[c]) - k.centre_low[c]) * k.scale[c] + k.shift[c];
  }
};

// input_gradient_kernel for one element.
template <class T>
struct element_input_gradient_kernel {
  ordo::detail::channel_geometry g;
  const T* x;
  const T* dy;
  T* dx;
  gradient_coefficients<T> k;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t e) const {
    const std::int64_t c = e / g.inner % g.channels;
    dx[e] = ((dy[e] - k.mean_dy[c]) - ((x[e] - k.centre_high[c]) - k.centre_low[c]) * k.projection[c]) * k.scale[c];
  }
};

}  // namespace ordo::nn::detail

#endif
