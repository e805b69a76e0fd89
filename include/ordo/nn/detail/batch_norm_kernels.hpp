#ifndef ORDO_NN_DETAIL_BATCH_NORM_KERNELS_HPP
#define ORDO_NN_DETAIL_BATCH_NORM_KERNELS_HPP

// Batch norm's kernels, one work item each (platform/work_partition.hpp): per-item
// statistics and gradient sums, their merges in item order, and the element passes. Each comes in
// two launch shapes (platform/launch_shape.hpp) with the same bits: the host shape, here,
// runs an item on one thread (long runs for caches and SIMD); the device shape
// (batch_norm_team_kernels.hpp) runs an item on threads of a team that each take one sequential
// chain of the host's order.

#include <ordo/core/config.hpp>
#include <ordo/platform/host_dispatched.hpp>
#include <ordo/platform/x86/half_conversion.hpp>
#include <ordo/platform/storage_conversion.hpp>
#include <ordo/platform/x86/cpu_dispatch.hpp>
#include <ordo/core/scalar_traits.hpp>
#include <ordo/platform/work_partition.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

ORDO_IMPL_FP_CONTRACT_OFF_BEGIN  // every level rounds alike (core/config.hpp)

namespace ordo::nn::detail {

using ordo::detail::work_partition;

// Storage and compute: x, y, dy and dx are of a storage type T (float, double, ordo::half,
// ordo::bfloat16), read exactly into double for the statistics and into T's compute type C for
// the element passes, which round each output to T once (widen and narrow, which vectorize). For
// float and double, C is T and the conversions vanish.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION double to_double(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<double>(v);
  } else {
    return static_cast<double>(ordo::detail::widen(v));
  }
}

// Sums in double with 8 independent accumulators: the adds of one run do not wait on each other,
// and the loops vectorize. (Each group of 8 is converted into a temporary first: g++ 12 does not
// vectorize `acc[l] += double(x[i + l])` written in one statement, nor two such sums in one loop.)
KOKKOS_FORCEINLINE_FUNCTION double sum_of_lanes(const double (&acc)[8]) {
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// x[0..7] in double; for half in a body that may use F16C (the AVX2 and AVX-512 twins), through
// vcvtph2ps (exact either way).
template <class Isa, class T>
KOKKOS_FORCEINLINE_FUNCTION void eight_as_double(const T* ORDO_RESTRICT x, double (&v)[8]) {
#if defined(ORDO_IMPL_F16C_FUNCTION)
  if constexpr (std::is_same_v<T, half> && ordo::detail::f16c_for_v<Isa>) {
    ordo::detail::widen8_f16c_to_double(x, v);
    return;
  }
#endif
  for (int l = 0; l < 8; ++l) v[l] = to_double(x[l]);
}

template <class Isa = ordo::detail::isa::baseline, class T>
KOKKOS_FORCEINLINE_FUNCTION double run_sum(const T* ORDO_RESTRICT x, std::int64_t n) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    double v[8];
    eight_as_double<Isa>(x + i, v);
    for (int l = 0; l < 8; ++l) acc[l] += v[l];
  }
  for (; i < n; ++i) acc[0] += to_double(x[i]);
  return sum_of_lanes(acc);
}

template <class Isa = ordo::detail::isa::baseline, class T>
KOKKOS_FORCEINLINE_FUNCTION double run_squared_deviations(const T* ORDO_RESTRICT x, std::int64_t n, double centre) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    double d[8];
    eight_as_double<Isa>(x + i, d);
    for (int l = 0; l < 8; ++l) d[l] -= centre;
    for (int l = 0; l < 8; ++l) acc[l] += d[l] * d[l];
  }
  for (; i < n; ++i) {
    const double d = to_double(x[i]) - centre;
    acc[0] += d * d;
  }
  return sum_of_lanes(acc);
}

// sum (x - centre) dy over one run.
template <class Isa = ordo::detail::isa::baseline, class T>
KOKKOS_FORCEINLINE_FUNCTION double run_centred_dot(const T* ORDO_RESTRICT x, const T* ORDO_RESTRICT dy, std::int64_t n,
                                              double centre) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    double v[8], w[8];
    eight_as_double<Isa>(x + i, v);
    eight_as_double<Isa>(dy + i, w);
    for (int l = 0; l < 8; ++l) v[l] = (v[l] - centre) * w[l];
    for (int l = 0; l < 8; ++l) acc[l] += v[l];
  }
  for (; i < n; ++i) acc[0] += (to_double(x[i]) - centre) * to_double(dy[i]);
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

  template <class Isa = ordo::detail::isa::baseline>  // host_dispatched.hpp: one instantiation per level
  KOKKOS_FORCEINLINE_FUNCTION void run(std::int64_t item) const {
    const std::int64_t cs = p.g.channels, inner = p.g.inner;
    const auto [q, r0, r1, c0, c1] = p.item(item);
    const double inverse_count = p.inverse_count(q);
    if (!p.by_rows()) {
      const std::int64_t c = c0;
      double s = 0;
      for (std::int64_t r = r0; r < r1; ++r) s += run_sum<Isa>(x + p.offset(r, c), inner);
      const double centre = s * inverse_count;
      double m2 = 0;
      for (std::int64_t r = r0; r < r1; ++r) m2 += run_squared_deviations<Isa>(x + p.offset(r, c), inner, centre);
      partial_sum[q * cs + c] = s;
      partial_m2[q * cs + c] = m2;
    } else {
      const std::int64_t width = c1 - c0;
      double* ORDO_RESTRICT sum = partial_sum + q * cs + c0;
      double* ORDO_RESTRICT m2 = partial_m2 + q * cs + c0;
      if constexpr (std::is_same_v<compute_type_t<T>, float>) {
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
          sum[c] += (to_double(a[c]) + to_double(b[c])) +
                    (to_double(d[c]) + to_double(e[c]));
        }
      }
      for (; r < r1; ++r) {
        const T* ORDO_RESTRICT a = x + r * cs + c0;
        for (std::int64_t c = 0; c < width; ++c) sum[c] += to_double(a[c]);
      }
      for (r = r0; r + 4 <= r1; r += 4) {
        const T* ORDO_RESTRICT a = x + r * cs + c0;
        const T* ORDO_RESTRICT b = a + cs;
        const T* ORDO_RESTRICT d = b + cs;
        const T* ORDO_RESTRICT e = d + cs;
        for (std::int64_t c = 0; c < width; ++c) {
          const double centre = sum[c] * inverse_count;
          const double da = to_double(a[c]) - centre, db = to_double(b[c]) - centre;
          const double dd = to_double(d[c]) - centre, de = to_double(e[c]) - centre;
          m2[c] += (da * da + db * db) + (dd * dd + de * de);
        }
      }
      for (; r < r1; ++r) {
        const T* ORDO_RESTRICT a = x + r * cs + c0;
        for (std::int64_t c = 0; c < width; ++c) {
          const double d = to_double(a[c]) - sum[c] * inverse_count;
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
        const double k = to_double(shift[c]);
        const double da = to_double(a[c]) - k, db = to_double(b[c]) - k;
        const double dd = to_double(d[c]) - k, de = to_double(e[c]) - k;
        sum[c] += (da + db) + (dd + de);
        m2[c] += (da * da + db * db) + (dd * dd + de * de);
      }
    }
    for (; r < r1; ++r) {
      const T* ORDO_RESTRICT a = x + r * cs + c0;
      for (std::int64_t c = 0; c < width; ++c) {
        const double da = to_double(a[c]) - to_double(shift[c]);
        sum[c] += da;
        m2[c] += da * da;
      }
    }
    const double n = static_cast<double>(r1 - r0);
    for (std::int64_t c = 0; c < width; ++c) {
      const double shifted_sum = sum[c];
      const double deviations = m2[c] - shifted_sum * shifted_sum * inverse_count;
      m2[c] = deviations > 0 ? deviations : 0;  // rounding must not make it negative
      sum[c] = n * to_double(shift[c]) + shifted_sum;
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

  template <class Isa = ordo::detail::isa::baseline>  // host_dispatched.hpp: one instantiation per level
  KOKKOS_FORCEINLINE_FUNCTION void run(std::int64_t item) const {
    const std::int64_t cs = p.g.channels, inner = p.g.inner;
    const auto [q, r0, r1, c0, c1] = p.item(item);
    if (!p.by_rows()) {
      const std::int64_t c = c0;
      const double centre = mean[c];
      double sum_dy = 0, dotp = 0;
      for (std::int64_t r = r0; r < r1; ++r) {
        const std::int64_t base = p.offset(r, c);
        sum_dy += run_sum<Isa>(dy + base, inner);
        dotp += run_centred_dot<Isa>(x + base, dy + base, inner, centre);
      }
      partial_dy[q * cs + c] = sum_dy;
      partial_dotp[q * cs + c] = dotp;
    } else {
      const std::int64_t width = c1 - c0;
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
          const double a = to_double(ga[c]), b = to_double(gb[c]);
          sum_dy[c] += a + b;
          dotp[c] += (to_double(xa[c]) - centre[c]) * a + (to_double(xb[c]) - centre[c]) * b;
        }
      }
      for (; r < r1; ++r) {
        const T* ORDO_RESTRICT xr = x + r * cs + c0;
        const T* ORDO_RESTRICT dyr = dy + r * cs + c0;
        for (std::int64_t c = 0; c < width; ++c) {
          const double g = to_double(dyr[c]);
          sum_dy[c] += g;
          dotp[c] += (to_double(xr[c]) - centre[c]) * g;
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

// What a merge does with a channel once its totals are written: nothing, or the next phase's
// per-channel step (the whole-batch calls run their coefficients there, one launch and one
// barrier fewer per call; the same arithmetic, the same bits).
struct no_epilogue {
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t) const {}
};

// mean[c] := the batch mean, m2[c] := M2 of the batch, then then(c). The outputs may be the
// partials' row 0.
template <class Epilogue = no_epilogue>
struct merge_moments_kernel {
  work_partition p;
  const double* partial_sum;
  const double* partial_m2;
  double count;
  double* mean;
  double* m2_out;
  Epilogue then{};

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
    for (std::int64_t j = 0; j < width; ++j) then(c0 + j);
  }
};

// first_total[c] := sum over the items of first, second_total[c] likewise, then then(c). The
// outputs may be the partials' row 0.
template <class Epilogue = no_epilogue>
struct merge_sums_kernel {
  work_partition p;
  const double* first;
  const double* second;
  double* first_total;
  double* second_total;
  Epilogue then{};

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
    for (std::int64_t j = 0; j < width; ++j) then(c0 + j);
  }
};

// The element passes compute in the input's compute type (T itself for float and double, float for
// 16-bit storage), as PyTorch's kernels do: with float that is
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

// The element passes: out[i] = narrow<T>(f(i, widen(a[i]))), or f(i, widen(a[i]), widen(b[i])). For
// half in a body that may use F16C (the AVX2 and AVX-512 twins), eight values at a time go
// through vcvtph2ps and vcvtps2ph (platform/x86/half_conversion.hpp), which give widen's and
// narrow's bits; f computes the same in either case. Eight at a time pays where f's coefficients
// are one channel's (channels first: a half NCHW training step took 6.2 ms this way at the
// AVX-512 level, 7.8 ms without). Where they change with i (channels last), the plain loop,
// which the compiler vectorizes whole on 16 lanes, is faster at the AVX-512 level (4.4 ms
// against 6.1 ms for NHWC) and slower at the AVX2 level (10.2 ms against 7.9 ms): the rows
// kernels pass rows_eight_at_a_time_v<Isa>.
template <class Isa>
inline constexpr bool rows_eight_at_a_time_v = !ordo::detail::wide_vectors_for_v<Isa>;

template <class Isa, bool EightAtATime = true, class T, class F>
KOKKOS_FORCEINLINE_FUNCTION void map_elements(std::int64_t n, T* ORDO_RESTRICT out, const F& f,
                                              const T* ORDO_RESTRICT a, const T* ORDO_RESTRICT b = nullptr) {
  std::int64_t i = 0;
#if defined(ORDO_IMPL_F16C_FUNCTION)
  if constexpr (EightAtATime && std::is_same_v<T, half> && ordo::detail::f16c_for_v<Isa>) {
    for (; i + 8 <= n; i += 8) {
      float wa[8], wb[8], r[8];
      ordo::detail::widen8_f16c(a + i, wa);
      if (b != nullptr) {
        ordo::detail::widen8_f16c(b + i, wb);
        for (int l = 0; l < 8; ++l) r[l] = f(i + l, wa[l], wb[l]);
      } else {
        for (int l = 0; l < 8; ++l) r[l] = f(i + l, wa[l], 0.0f);
      }
      ordo::detail::narrow8_f16c(r, out + i);
    }
  }
#endif
  using C = compute_type_t<T>;
  if (b != nullptr) {
    for (; i < n; ++i) out[i] = ordo::detail::narrow<T>(f(i, ordo::detail::widen(a[i]), ordo::detail::widen(b[i])));
  } else {
    for (; i < n; ++i) out[i] = ordo::detail::narrow<T>(f(i, ordo::detail::widen(a[i]), C{}));
  }
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
  using C = compute_type_t<T>;
  work_partition p;
  const T* x;
  T* y;
  affine_coefficients<C> k;

  template <class Isa = ordo::detail::isa::baseline>  // host_dispatched.hpp: one instantiation per level
  KOKKOS_FORCEINLINE_FUNCTION void run(std::int64_t item) const {
    const std::int64_t cs = p.g.channels, inner = p.g.inner;
    const auto [q, r0, r1, c0, c1] = p.item(item);
    if (!p.by_rows()) {
      const std::int64_t c = c0;
      const C high = k.centre_high[c], low = k.centre_low[c], scale = k.scale[c], shift = k.shift[c];
      for (std::int64_t r = r0; r < r1; ++r) {
        const std::int64_t base = p.offset(r, c);
        const T* ORDO_RESTRICT xr = x + base;
        T* ORDO_RESTRICT yr = y + base;
        map_elements<Isa>(inner, yr, [&](std::int64_t, C v, C) { return ((v - high) - low) * scale + shift; }, xr);
      }
    } else {
      const std::int64_t width = c1 - c0;
      const C* ORDO_RESTRICT high = k.centre_high + c0;
      const C* ORDO_RESTRICT low = k.centre_low + c0;
      const C* ORDO_RESTRICT scale = k.scale + c0;
      const C* ORDO_RESTRICT shift = k.shift + c0;
      for (std::int64_t r = r0; r < r1; ++r) {
        const T* ORDO_RESTRICT xr = x + r * cs + c0;
        T* ORDO_RESTRICT yr = y + r * cs + c0;
        map_elements<Isa, rows_eight_at_a_time_v<Isa>>(
            width, yr, [&](std::int64_t c, C v, C) { return ((v - high[c]) - low[c]) * scale[c] + shift[c]; }, xr);
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
  using C = compute_type_t<T>;
  work_partition p;
  const T* x;
  const T* dy;
  T* dx;
  gradient_coefficients<C> k;

  template <class Isa = ordo::detail::isa::baseline>  // host_dispatched.hpp: one instantiation per level
  KOKKOS_FORCEINLINE_FUNCTION void run(std::int64_t item) const {
    const std::int64_t cs = p.g.channels, inner = p.g.inner;
    const auto [q, r0, r1, c0, c1] = p.item(item);
    if (!p.by_rows()) {
      const std::int64_t c = c0;
      const C high = k.centre_high[c], low = k.centre_low[c], g = k.mean_dy[c], pr = k.projection[c], a = k.scale[c];
      for (std::int64_t r = r0; r < r1; ++r) {
        const std::int64_t base = p.offset(r, c);
        const T* ORDO_RESTRICT xr = x + base;
        const T* ORDO_RESTRICT dyr = dy + base;
        T* ORDO_RESTRICT dxr = dx + base;
        map_elements<Isa>(
            inner, dxr, [&](std::int64_t, C d, C v) { return ((d - g) - ((v - high) - low) * pr) * a; }, dyr, xr);
      }
    } else {
      const std::int64_t width = c1 - c0;
      const C* ORDO_RESTRICT high = k.centre_high + c0;
      const C* ORDO_RESTRICT low = k.centre_low + c0;
      const C* ORDO_RESTRICT g = k.mean_dy + c0;
      const C* ORDO_RESTRICT pr = k.projection + c0;
      const C* ORDO_RESTRICT a = k.scale + c0;
      for (std::int64_t r = r0; r < r1; ++r) {
        const T* ORDO_RESTRICT xr = x + r * cs + c0;
        const T* ORDO_RESTRICT dyr = dy + r * cs + c0;
        T* ORDO_RESTRICT dxr = dx + r * cs + c0;
        map_elements<Isa, rows_eight_at_a_time_v<Isa>>(
            width, dxr,
            [&](std::int64_t c, C d, C v) { return ((d - g[c]) - ((v - high[c]) - low[c]) * pr[c]) * a[c]; }, dyr,
            xr);
      }
    }
  }
};

}  // namespace ordo::nn::detail

ORDO_IMPL_FP_CONTRACT_OFF_END

#endif
