#ifndef ORDO_NN_DETAIL_SOFTMAX_KERNELS_HPP
#define ORDO_NN_DETAIL_SOFTMAX_KERNELS_HPP

// The softmax family's kernels over the last axis of a rank-2 View, one row per work item, in two
// launch shapes (platform/launch_shape.hpp):
//
//   host:   a RangePolicy over rows; one thread runs a row in three passes over it (max; exp(x - max)
//           stored and summed; scaled), the last two from cache, with SIMD lanes.
//   device: a TeamPolicy, 16 rows per team, 16 threads per row (neighbouring threads read
//           neighbouring elements); each thread computes its lane's max and sum in one pass (online
//           softmax, Milakov & Gimelshein 2018, arXiv:1805.02867), the lanes are merged in lane
//           order, and a second pass writes the row. x is read twice instead of three times.
//
// Both shapes cut a row the same way, whatever the thread count: element c belongs to lane
// c mod 16, each lane sums its elements in index order in the accumulate type (double for float
// and the 16-bit types), and lanes are added in lane order. The sums of the backward passes are
// therefore the same bits in both shapes and on any thread count; the forward's sums differ
// between the shapes only by the online rescaling (within a few ulps: tests/softmax_test.cpp).
//
// exp is ordo's vectorizable fast_exp for float on the host (platform/fast_exp.hpp, < 1 ulp),
// its scalar twin for the device shape run on the host, and Kokkos' exp in device code and for
// double.

#include <ordo/core/config.hpp>
#include <ordo/platform/batched_loads.hpp>
#include <ordo/platform/host_dispatched.hpp>
#include <ordo/platform/x86/cpu_dispatch.hpp>
#include <ordo/core/float16.hpp>
#include <ordo/core/scalar_traits.hpp>
#include <ordo/platform/fast_exp.hpp>
#include <ordo/platform/kokkos_math.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

ORDO_IMPL_FP_CONTRACT_OFF_BEGIN  // every level rounds alike (core/config.hpp)

namespace ordo::nn::detail {

// Whether a host kernel compiled for Isa compares as two 16-byte halves (fast_exp.hpp): the
// baseline build's choice; the AVX2 instantiations compare whole 32-byte vectors.
template <class Isa>
inline constexpr bool split_compares_for_v =
    std::is_same_v<Isa, ordo::detail::isa::baseline> && ordo::detail::split_compares_v;

enum class softmax_op { softmax, log_softmax, logsumexp };
enum class softmax_backward_op { softmax, log_softmax };

inline constexpr int softmax_lanes = 16;            // lane of element c: c mod 16
inline constexpr std::int64_t softmax_block = 512;  // host shape: elements converted at a time
inline constexpr std::int64_t softmax_rows_per_team = 16;

// NonPositive: x <= 0 or NaN (x - max), where fast_exp skips its upper clamp (same bits).
template <class C, bool NonPositive = false>
KOKKOS_FORCEINLINE_FUNCTION C softmax_exp(C x) {
  if constexpr (std::is_same_v<C, float>) {
#if ORDO_DEVICE_COMPILE
    return ordo::detail::math::exp(x);
#else
    return ordo::detail::fast_exp<NonPositive>(x);
#endif
  } else {
    return ordo::detail::math::exp(x);
  }
}

// Lanes added in lane order, in both shapes.
template <class A>
KOKKOS_FORCEINLINE_FUNCTION A sum_lanes(const A* lanes) {
  A s = lanes[0];
  for (int l = 1; l < softmax_lanes; ++l) s += lanes[l];
  return s;
}

#if ORDO_IMPL_VECTOR_EXTENSIONS
// Eight values from p as floats: float as is, bfloat16 by putting its bits above 16 zero bits
// (one interleave with zeros; exact).
[[gnu::always_inline]] inline void load8(const float* p, ordo::detail::float8& out) { std::memcpy(&out, p, sizeof out); }
[[gnu::always_inline]] inline void load8(const bfloat16* p, ordo::detail::float8& out) {
  typedef std::uint16_t uint16x8 __attribute__((vector_size(16)));
  uint16x8 h;
  std::memcpy(&h, p, sizeof h);
  const uint16x8 zero = uint16x8{};
  out = __builtin_bit_cast(ordo::detail::float8,
                           __builtin_shufflevector(zero, h, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15));
}
// The same for sixteen values (the AVX-512 twins).
[[gnu::always_inline]] inline void load16(const float* p, ordo::detail::float32x16& out) {
  std::memcpy(&out, p, sizeof out);
}
[[gnu::always_inline]] inline void load16(const bfloat16* p, ordo::detail::float32x16& out) {
  typedef std::uint16_t uint16x16 __attribute__((vector_size(32)));
  uint16x16 h;
  std::memcpy(&h, p, sizeof h);
  const uint16x16 zero = uint16x16{};
  out = __builtin_bit_cast(ordo::detail::float32x16,
                           __builtin_shufflevector(zero, h, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23, 8,
                                                   24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31));
}
#endif

// Element types the vector paths read directly (with compute type float).
template <class P>
inline constexpr bool vector_readable_v = std::is_same_v<P, float> || std::is_same_v<P, bfloat16>;

// A row of a rank-2 View as the kernels read and write it: through a pointer where the row is
// contiguous, through the View otherwise.
template <class View>
struct row_access {
  using storage = typename View::non_const_value_type;
  using compute = compute_type_t<storage>;
  View v;
  bool contiguous;  // rows have unit stride

  explicit row_access(const View& view) : v(view), contiguous(view.extent(1) <= 1 || view.stride(1) == 1) {}

  KOKKOS_FORCEINLINE_FUNCTION auto* row(std::int64_t r) const { return v.data() + r * static_cast<std::int64_t>(v.stride(0)); }

  // Values [c0, c0 + n) of row r in the compute type: the row itself where it already is, else
  // converted into buf.
  KOKKOS_FORCEINLINE_FUNCTION const compute* load(std::int64_t r, std::int64_t c0, std::int64_t n, compute* buf) const {
    if (contiguous) {
      const auto* p = row(r) + c0;
      if constexpr (std::is_same_v<storage, compute>) {
        return p;
      } else {
        for (std::int64_t i = 0; i < n; ++i) buf[i] = static_cast<compute>(p[i]);
        return buf;
      }
    }
    for (std::int64_t i = 0; i < n; ++i) buf[i] = static_cast<compute>(v(r, c0 + i));
    return buf;
  }

  // f(p) with p the values [c0, c0 + n) of row r: the row itself where the vector paths read its
  // type, else converted to the compute type in buf. bfloat16 is read directly by AVX2 code only
  // (Split false): without AVX, g++ lowers its 32-byte interleave to scalar code.
  template <bool Split, class F>
  KOKKOS_FORCEINLINE_FUNCTION void visit(std::int64_t r, std::int64_t c0, std::int64_t n, compute* buf, F&& f) const {
#if ORDO_IMPL_VECTOR_EXTENSIONS
    if constexpr (std::is_same_v<compute, float> && (std::is_same_v<storage, float> ||
                                                     (std::is_same_v<storage, bfloat16> && !Split))) {
      if (contiguous) {
        const storage* p = row(r) + c0;
        f(p);
        return;
      }
    }
#endif
    f(load(r, c0, n, buf));
  }

  // Asks the cache for elements [c0, c0 + n) of row r + 1 (host shape, contiguous rows): the row a
  // thread of the host's static schedule takes next, or a harmless miss at the end of its range.
  KOKKOS_FORCEINLINE_FUNCTION void prefetch_next_row(std::int64_t r, std::int64_t c0, std::int64_t n,
                                                     [[maybe_unused]] bool for_write) const {
#if !ORDO_DEVICE_COMPILE
    if (!contiguous || r + 1 >= static_cast<std::int64_t>(v.extent(0))) return;
    const char* first = reinterpret_cast<const char*>(row(r + 1) + c0);
    const char* last = reinterpret_cast<const char*>(row(r + 1) + c0 + n);
    for (const char* q = first; q < last; q += 64) {
      if (for_write) {
        __builtin_prefetch(q, 1, 3);
      } else {
        __builtin_prefetch(q, 0, 3);
      }
    }
#endif
  }

  template <class F>
  KOKKOS_FORCEINLINE_FUNCTION void store(std::int64_t r, std::int64_t c0, std::int64_t n, const F& value) const {
    if (contiguous) {
      storage* p = row(r) + c0;
      for (std::int64_t i = 0; i < n; ++i) p[i] = to_storage<storage>(value(i));
    } else {
      for (std::int64_t i = 0; i < n; ++i) v(r, c0 + i) = to_storage<storage>(value(i));
    }
  }
};

// ------------------------------------------------------------------------------------------------
// Block routines of the host shape: portable lane loops, and for float the same arithmetic on
// GCC/clang vectors (same bits). Lane l of `lanes` holds elements c with c mod 16 == l; blocks
// start at multiples of 16.

// Split: comparisons of 32-byte vectors as halves (code compiled without AVX, fast_exp.hpp).
// Wide: 16 floats a vector (the AVX-512 twins, wide_vectors_for_v): lane l of a 64-byte vector is
// lane l of the first 32-byte vector, lane l + 8 lane l of the second, so both widths compute the
// same values in the same order. p points to the compute type or, on the vector path, to a type
// vector_readable_v accepts.
#if ORDO_IMPL_VECTOR_EXTENSIONS
// m = max(m, p[i..]) over whole vectors V (float8 or float32x16) from i on, in Chains running
// maxima, merged at the end; i ends at the first element not read.
template <bool Split, int Chains, class V, class P>
[[gnu::always_inline]] inline void vector_max(const P* p, std::int64_t n, std::int64_t& i, float& m) {
  constexpr int lanes = static_cast<int>(sizeof(V) / sizeof(float));
  using mask = typename ordo::detail::float_vector_lanes<V>::mask;
  const auto keep_larger = [](const V& a, V& acc) {
    mask greater;
    ordo::detail::less<Split>(acc, a, greater);
    ordo::detail::select(greater, a, acc, acc);
  };
  const auto load = [p](std::int64_t at, V& out) {
    if constexpr (lanes == 16) {
      load16(p + at, out);
    } else {
      load8(p + at, out);
    }
  };
  V acc[Chains];
  for (auto& a : acc) a = m + V{};
  for (; i + lanes * Chains <= n; i += lanes * Chains) {
    for (int k = 0; k < Chains; ++k) {
      V a;
      load(i + lanes * k, a);
      keep_larger(a, acc[k]);
    }
  }
  for (; i + lanes <= n; i += lanes) {
    V a;
    load(i, a);
    keep_larger(a, acc[0]);
  }
  for (int k = 1; k < Chains; ++k) keep_larger(acc[k], acc[0]);
  for (int l = 0; l < lanes; ++l) m = acc[0][l] > m ? acc[0][l] : m;
}
#endif

template <bool Split, bool Wide = false, class C, class P>
KOKKOS_FORCEINLINE_FUNCTION void block_max(const P* p, std::int64_t n, C& m) {
  std::int64_t i = 0;
#if ORDO_IMPL_VECTOR_EXTENSIONS
  // bfloat16 keeps four running maxima, so that the compare-and-select chains overlap: with one,
  // each vector waits for the previous compare, a quarter of the (4096, 32000) kernel's time.
  // float keeps one 64-byte (two 32-byte) maxima: its max pass waits for memory, and two or four
  // 64-byte chains measured 2-5 % slower (so did vmaxps, one instruction instead of two: 27 -> 31
  // ms). The max does not depend on the order, nor do the results where +0 and -0 tie (x - m is
  // the same either way).
  if constexpr (Wide && std::is_same_v<C, float> && vector_readable_v<P>) {
    vector_max<false, std::is_same_v<P, float> ? 1 : 4, ordo::detail::float32x16>(p, n, i, m);
  } else if constexpr (std::is_same_v<C, float> && vector_readable_v<P>) {
    vector_max<Split, std::is_same_v<P, float> ? 2 : 4, ordo::detail::float8>(p, n, i, m);
  }
#endif
  for (; i < n; ++i) {
    const C v = static_cast<C>(p[i]);
    m = v > m ? v : m;  // NaN never becomes the max; it reaches the sum
  }
}

#if ORDO_IMPL_VECTOR_EXTENSIONS
[[gnu::always_inline]] inline void add_to_lanes(const ordo::detail::float8& v, ordo::detail::double4& low,
                                                ordo::detail::double4& high) {
  typedef float float4 __attribute__((vector_size(16)));
  const float4 a = __builtin_shufflevector(v, v, 0, 1, 2, 3), b = __builtin_shufflevector(v, v, 4, 5, 6, 7);
  low += __builtin_convertvector(a, ordo::detail::double4);
  high += __builtin_convertvector(b, ordo::detail::double4);
}

[[gnu::always_inline]] inline void add_to_lanes(const ordo::detail::float32x16& v, ordo::detail::float64x8& low,
                                                ordo::detail::float64x8& high) {
  const ordo::detail::float8 a = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
  const ordo::detail::float8 b = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  low += __builtin_convertvector(a, ordo::detail::float64x8);
  high += __builtin_convertvector(b, ordo::detail::float64x8);
}

template <class Acc>
[[gnu::always_inline]] inline void load_lanes(const double* lanes, Acc& acc) {
  static_assert(sizeof(Acc) == 16 * sizeof(double));
  std::memcpy(&acc, lanes, sizeof acc);
}
template <class Acc>
[[gnu::always_inline]] inline void store_lanes(const Acc& acc, double* lanes) {
  static_assert(sizeof(Acc) == 16 * sizeof(double));
  std::memcpy(lanes, &acc, sizeof acc);
}
#endif

// lanes += exp(p - shift); e[i] = exp(p[i] - shift) when Store; p - shift <= 0 or NaN. On the
// vector path each lane adds 8 terms (128 elements of the row) in float before they join its
// double sum: the conversions then cost little, and a float partial sum of 8 terms in [0, 1] is
// off by at most 7 u of itself (u = 2^-24).
inline constexpr std::int64_t softmax_float_chunk = 8 * softmax_lanes;

template <bool Store, bool Split, bool Wide = false, class C, class A, class P>
KOKKOS_FORCEINLINE_FUNCTION void block_exp_sum(const P* p, std::int64_t n, C shift, C* e, A* lanes) {
  std::int64_t i = 0;
#if ORDO_IMPL_VECTOR_EXTENSIONS
  if constexpr (Wide && std::is_same_v<C, float> && std::is_same_v<A, double> && vector_readable_v<P>) {
    using ordo::detail::float32x16;
    ordo::detail::float64x8 acc[2];  // lanes 0-7 and 8-15
    load_lanes(lanes, acc);
    for (; i + softmax_float_chunk <= n; i += softmax_float_chunk) {
      float32x16 s = float32x16{};
      for (std::int64_t j = i; j < i + softmax_float_chunk; j += 16) {
        float32x16 a;
        load16(p + j, a);
        a -= shift;
        ordo::detail::fast_exp<true, false>(a, a);
        if constexpr (Store) std::memcpy(e + j, &a, sizeof a);
        s += a;
      }
      add_to_lanes(s, acc[0], acc[1]);
    }
    store_lanes(acc, lanes);
  } else if constexpr (std::is_same_v<C, float> && std::is_same_v<A, double> && vector_readable_v<P>) {
    using ordo::detail::float8;
    ordo::detail::double4 acc[4];
    load_lanes(lanes, acc);
    for (; i + softmax_float_chunk <= n; i += softmax_float_chunk) {
      float8 s0 = float8{}, s1 = float8{};
      for (std::int64_t j = i; j < i + softmax_float_chunk; j += 16) {
        float8 a, b;
        load8(p + j, a);
        load8(p + j + 8, b);
        a -= shift;
        b -= shift;
        ordo::detail::fast_exp<true, Split>(a, a);
        ordo::detail::fast_exp<true, Split>(b, b);
        if constexpr (Store) {
          std::memcpy(e + j, &a, sizeof a);
          std::memcpy(e + j + 8, &b, sizeof b);
        }
        s0 += a;
        s1 += b;
      }
      add_to_lanes(s0, acc[0], acc[1]);
      add_to_lanes(s1, acc[2], acc[3]);
    }
    store_lanes(acc, lanes);
  }
#endif
  for (; i < n; ++i) {
    const C v = softmax_exp<C, true>(static_cast<C>(p[i]) - shift);
    if constexpr (Store) e[i] = v;
    lanes[i % softmax_lanes] += static_cast<A>(v);
  }
}

// lanes += A(a) * A(b) (exact products for float inputs).
template <class C, class A>
KOKKOS_FORCEINLINE_FUNCTION void block_dot(const C* a, const C* b, std::int64_t n, A* lanes) {
  std::int64_t i = 0;
  for (; i + softmax_lanes <= n; i += softmax_lanes) {
    A v[softmax_lanes];
    for (int l = 0; l < softmax_lanes; ++l) v[l] = static_cast<A>(a[i + l]) * static_cast<A>(b[i + l]);
    for (int l = 0; l < softmax_lanes; ++l) lanes[l] += v[l];
  }
  for (; i < n; ++i) lanes[i % softmax_lanes] += static_cast<A>(a[i]) * static_cast<A>(b[i]);
}

template <class C, class A>
KOKKOS_FORCEINLINE_FUNCTION void block_sum(const C* a, std::int64_t n, A* lanes) {
  std::int64_t i = 0;
  for (; i + softmax_lanes <= n; i += softmax_lanes) {
    A v[softmax_lanes];
    for (int l = 0; l < softmax_lanes; ++l) v[l] = static_cast<A>(a[i + l]);
    for (int l = 0; l < softmax_lanes; ++l) lanes[l] += v[l];
  }
  for (; i < n; ++i) lanes[i % softmax_lanes] += static_cast<A>(a[i]);
}

// e[i] = exp(y[i]) (log_softmax_backward).
template <bool Split, bool Wide = false, class C>
KOKKOS_FORCEINLINE_FUNCTION void block_exp(const C* y, std::int64_t n, C* e) {
  std::int64_t i = 0;
#if ORDO_IMPL_VECTOR_EXTENSIONS
  if constexpr (Wide && std::is_same_v<C, float>) {
    for (; i + 16 <= n; i += 16) {
      ordo::detail::float32x16 a;
      std::memcpy(&a, y + i, sizeof a);
      ordo::detail::fast_exp<false, false>(a, a);
      std::memcpy(e + i, &a, sizeof a);
    }
  }
  if constexpr (std::is_same_v<C, float>) {
    for (; i + 8 <= n; i += 8) {
      ordo::detail::float8 a;
      std::memcpy(&a, y + i, sizeof a);
      ordo::detail::fast_exp<false, Split>(a, a);
      std::memcpy(e + i, &a, sizeof a);
    }
  }
#endif
  for (; i < n; ++i) e[i] = softmax_exp<C>(y[i]);
}

// What a row whose max is infinite gives (PyTorch 1.13): softmax and log_softmax NaN everywhere
// (x - max is NaN at a +inf, and every exp is 0 in a row of -inf); logsumexp the max, or NaN if
// the row holds a NaN.
template <class XAccess>
KOKKOS_INLINE_FUNCTION bool row_has_nan(const XAccess& x, std::int64_t r, std::int64_t cols) {
  for (std::int64_t c = 0; c < cols; ++c) {
    const auto v = static_cast<typename XAccess::compute>(x.v(r, c));
    if (v != v) return true;
  }
  return false;
}

// ------------------------------------------------------------------------------------------------
// Host shape.

template <softmax_op Op, class XView, class YView, class LseView, class Space>
struct host_forward_kernel {
  using T = typename XView::non_const_value_type;
  using C = compute_type_t<T>;
  using A = accumulate_type_t<T>;
  using lse_value = typename LseView::non_const_value_type;
  row_access<XView> x;
  row_access<YView> y;
  LseView lse;
  std::int64_t cols;
  // Softmax's exps where they cannot be kept in y (16-bit or strided y): one row per thread.
  C* scratch;
  Kokkos::Experimental::UniqueToken<Space> token;
  C nan;  // made on the host, as in the device shape
  lse_value lse_nan;

  // True when softmax keeps its exps in y itself: y is a contiguous row of the compute type.
  KOKKOS_FORCEINLINE_FUNCTION bool exps_in_y() const {
    if constexpr (std::is_same_v<typename YView::non_const_value_type, C>) return y.contiguous;
    return false;
  }

  // Row r through the instruction set chosen at run time (platform/host_dispatched.hpp); the
  // AVX2 instantiation compares whole 32-byte vectors, the AVX-512 one works on 64-byte vectors.
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t r) const { ordo::detail::run_for_host_isa(*this, r); }

  template <class Isa>
  KOKKOS_FORCEINLINE_FUNCTION void run(std::int64_t r) const {
    [[maybe_unused]] constexpr bool Split = split_compares_for_v<Isa>;
    [[maybe_unused]] constexpr bool Wide = ordo::detail::wide_vectors_for_v<Isa>;
    // A builtin, not std::numeric_limits: nvcc does not let device code call its host constexpr functions.
    constexpr C minus_inf = -static_cast<C>(__builtin_huge_val());
    C buf[softmax_block];
    C m = minus_inf;
    for (std::int64_t c0 = 0; c0 < cols; c0 += softmax_block) {
      const std::int64_t n = cols - c0 < softmax_block ? cols - c0 : softmax_block;
      x.template visit<Split>(r, c0, n, buf, [&](const auto* p) { block_max<Split, Wide>(p, n, m); });
    }
    if (!(m > minus_inf && m < -minus_inf)) {
      special_row(r, m);
      return;
    }
    A lanes[softmax_lanes] = {};
    if constexpr (Op == softmax_op::softmax) {
      const bool in_y = exps_in_y();
      int slot = 0;
      C* e = nullptr;
      if (in_y) {
        if constexpr (std::is_same_v<typename YView::non_const_value_type, C>) e = y.row(r);
      } else {
        slot = token.acquire();
        e = scratch + static_cast<std::int64_t>(slot) * cols;
      }
      for (std::int64_t c0 = 0; c0 < cols; c0 += softmax_block) {
        const std::int64_t n = cols - c0 < softmax_block ? cols - c0 : softmax_block;
        // 16-bit rows move half a float row's bytes, so their exp pass computes longer than
        // memory needs to bring the next row: fetching its x and y meanwhile lets the next max
        // pass read from L2 and its stores skip the wait for ownership ((4096, 32000) bfloat16
        // 27.6 -> 24.6 ms). A float row moves as many bytes as a copy of it; there the fetches
        // only competed with the demand traffic (27.3 -> 28.3 ms), so float does without.
        if constexpr (sizeof(typename XView::non_const_value_type) < sizeof(C)) {
          x.prefetch_next_row(r, c0, n, false);
          y.prefetch_next_row(r, c0, n, true);
        }
        x.template visit<Split>(r, c0, n, buf, [&](const auto* p) { block_exp_sum<true, Split, Wide>(p, n, m, e + c0, lanes); });
      }
      const C inverse = static_cast<C>(A(1) / sum_lanes(lanes));
      if (in_y) {
        for (std::int64_t c = 0; c < cols; ++c) e[c] *= inverse;
      } else {
        y.store(r, 0, cols, [&](std::int64_t c) { return e[c] * inverse; });
        token.release(slot);
      }
    } else {
      for (std::int64_t c0 = 0; c0 < cols; c0 += softmax_block) {
        const std::int64_t n = cols - c0 < softmax_block ? cols - c0 : softmax_block;
        x.template visit<Split>(r, c0, n, buf,
                [&](const auto* p) { block_exp_sum<false, Split, Wide>(p, n, m, static_cast<C*>(nullptr), lanes); });
      }
      const A s = sum_lanes(lanes);
      if constexpr (Op == softmax_op::logsumexp) {
        lse(r) = static_cast<lse_value>(static_cast<A>(m) + ordo::detail::math::log(s));
      } else {
        const C log_sum = static_cast<C>(ordo::detail::math::log(s));
        for (std::int64_t c0 = 0; c0 < cols; c0 += softmax_block) {
          const std::int64_t n = cols - c0 < softmax_block ? cols - c0 : softmax_block;
          const C* p = x.load(r, c0, n, buf);
          y.store(r, c0, n, [&](std::int64_t i) { return (p[i] - m) - log_sum; });
        }
      }
    }
  }

  KOKKOS_FORCEINLINE_FUNCTION void special_row(std::int64_t r, C m) const {
    if constexpr (Op == softmax_op::logsumexp) {
      lse(r) = row_has_nan(x, r, cols) ? lse_nan : static_cast<lse_value>(m);
    } else {
      const C value = nan;
      y.store(r, 0, cols, [value](std::int64_t) { return value; });
    }
  }
};

template <softmax_backward_op Op, class DyView, class YView, class DxView>
struct host_backward_kernel {
  using T = typename DyView::non_const_value_type;
  using C = compute_type_t<T>;
  using A = accumulate_type_t<T>;
  row_access<DyView> dy;
  row_access<YView> y;
  row_access<DxView> dx;
  std::int64_t cols;

  // Row r through the instruction set chosen at run time (platform/host_dispatched.hpp); the
  // AVX2 instantiation compares whole 32-byte vectors, the AVX-512 one works on 64-byte vectors.
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t r) const { ordo::detail::run_for_host_isa(*this, r); }

  template <class Isa>
  KOKKOS_FORCEINLINE_FUNCTION void run(std::int64_t r) const {
    [[maybe_unused]] constexpr bool Split = split_compares_for_v<Isa>;
    [[maybe_unused]] constexpr bool Wide = ordo::detail::wide_vectors_for_v<Isa>;
    C dy_buf[softmax_block], y_buf[softmax_block];
    A lanes[softmax_lanes] = {};
    for (std::int64_t c0 = 0; c0 < cols; c0 += softmax_block) {
      const std::int64_t n = cols - c0 < softmax_block ? cols - c0 : softmax_block;
      if constexpr (Op == softmax_backward_op::softmax) {
        block_dot(dy.load(r, c0, n, dy_buf), y.load(r, c0, n, y_buf), n, lanes);
      } else {
        block_sum(dy.load(r, c0, n, dy_buf), n, lanes);
      }
    }
    const C s = static_cast<C>(sum_lanes(lanes));
    for (std::int64_t c0 = 0; c0 < cols; c0 += softmax_block) {
      const std::int64_t n = cols - c0 < softmax_block ? cols - c0 : softmax_block;
      // Both loaded before dx is written: dx may be dy or y.
      const C* g = dy.load(r, c0, n, dy_buf);
      const C* p = y.load(r, c0, n, y_buf);
      if constexpr (Op == softmax_backward_op::softmax) {
        if (g != dy_buf) {  // loaded in place: copy, as dx may overwrite it
          for (std::int64_t i = 0; i < n; ++i) dy_buf[i] = g[i];
          g = dy_buf;
        }
        if (p != y_buf) {
          for (std::int64_t i = 0; i < n; ++i) y_buf[i] = p[i];
          p = y_buf;
        }
        dx.store(r, c0, n, [&](std::int64_t i) { return p[i] * (g[i] - s); });
      } else {
        C e[softmax_block];
        block_exp<Split, Wide>(p, n, e);
        if (g != dy_buf) {
          for (std::int64_t i = 0; i < n; ++i) dy_buf[i] = g[i];
          g = dy_buf;
        }
        dx.store(r, c0, n, [&](std::int64_t i) { return g[i] - e[i] * s; });
      }
    }
  }
};

// ------------------------------------------------------------------------------------------------
// Device shape.

// The elements c = lane, lane + 16, ... < n of one lane of a row, in index order: use(c, load(c)),
// a batch of loads issued before any of them is used (platform/batched_loads.hpp). A device
// thread walks a 32000-element row 16 apart with a serial online update (or, in place, stores that
// may alias the next load). A batch keeps every operation's order, so the bits are those of the
// plain loop (the shapes' bitwise tests), and in place each element is still read before its own
// result is written. Batches of 8 took 975 us for (4096, 32000) float on the H200 of the third
// GPU run (25 % of copy bandwidth, 0.44x PyTorch; one load in flight per thread had taken 3.7 ms).
template <class Load, class Use>
KOKKOS_FORCEINLINE_FUNCTION void for_lane_elements(std::int64_t lane, std::int64_t n, const Load& load, const Use& use) {
  ordo::detail::for_each_batched(lane, n, softmax_lanes, load, use);
}

// The device forward's steps, shared by the 16-lane shape below and a team per row
// (softmax_wide_row_kernel.hpp).

// One lane's online max and sum (Milakov & Gimelshein): each value in index order.
template <class C, class A>
struct online_lane {
  C m = -static_cast<C>(__builtin_huge_val());  // a builtin: nvcc's device code has no numeric_limits
  A s = 0;

  KOKKOS_FORCEINLINE_FUNCTION void add(const C v) {
    if (v > m) {
      s = s * static_cast<A>(softmax_exp<C>(m - v)) + A(1);
      m = v;
    } else if (v != -static_cast<C>(__builtin_huge_val())) {  // NaN makes the sum NaN
      s += static_cast<A>(softmax_exp<C>(v - m));
    }
  }
};

// A row with a finite max m and sum s of exp(x - m): logsumexp writes lse(r); softmax returns
// 1 / s and log_softmax log s, in C, for the pass that writes the row.
template <softmax_op Op, class C, class A, class LseView>
KOKKOS_INLINE_FUNCTION C finish_row(const LseView& lse, std::int64_t r, C m, A s) {
  if constexpr (Op == softmax_op::logsumexp) {
    lse(r) = static_cast<typename LseView::non_const_value_type>(static_cast<A>(m) + ordo::detail::math::log(s));
    return C(0);
  } else if constexpr (Op == softmax_op::softmax) {
    return static_cast<C>(A(1) / s);
  } else {
    return static_cast<C>(ordo::detail::math::log(s));
  }
}

// Element v of a row with max m and finish_row's value.
template <softmax_op Op, class C>
KOKKOS_FORCEINLINE_FUNCTION C row_output(const C v, const C m, const C value) {
  if constexpr (Op == softmax_op::softmax) {
    return softmax_exp<C>(v - m) * value;
  } else {
    return (v - m) - value;
  }
}

// One element of each of two rows, loaded together (the backward passes read dy and y).
template <class C>
struct softmax_element_pair {
  C first, second;
};

template <class Space>
using softmax_team_member_t = typename Kokkos::TeamPolicy<Space>::member_type;
template <class Space>
using softmax_team_scratch_t = Kokkos::View<double*, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;

// Per team: lane max and lane sum of each row, then each row's max and its second value
// (1 / sum, log sum).
inline constexpr std::int64_t softmax_team_scratch_values =
    2 * softmax_rows_per_team * softmax_lanes + 2 * softmax_rows_per_team;

template <softmax_op Op, class XView, class YView, class LseView, class Space>
struct team_forward_kernel {
  using T = typename XView::non_const_value_type;
  using C = compute_type_t<T>;
  using A = accumulate_type_t<T>;
  using lse_value = typename LseView::non_const_value_type;
  static_assert(sizeof(A) <= sizeof(double) && sizeof(C) <= sizeof(double), "lane values live in double scratch");
  row_access<XView> x;
  row_access<YView> y;
  LseView lse;
  std::int64_t rows, cols;
  // NaNs made on the host: std::numeric_limits is not callable in device code everywhere.
  C nan;
  lse_value lse_nan;

  KOKKOS_INLINE_FUNCTION void operator()(const softmax_team_member_t<Space>& member) const {
    // A builtin, not std::numeric_limits: nvcc does not let device code call its host constexpr functions.
    constexpr C minus_inf = -static_cast<C>(__builtin_huge_val());
    const std::int64_t first = member.league_rank() * softmax_rows_per_team;
    const std::int64_t count = rows - first < softmax_rows_per_team ? rows - first : softmax_rows_per_team;
    const softmax_team_scratch_t<Space> scratch(member.team_scratch(0), static_cast<std::size_t>(softmax_team_scratch_values));
    double* const lane_max = scratch.data();
    double* const lane_sum = lane_max + softmax_rows_per_team * softmax_lanes;
    double* const row_max = lane_sum + softmax_rows_per_team * softmax_lanes;
    double* const row_value = row_max + softmax_rows_per_team;
    const std::int64_t n = cols;
    const row_access<XView>& in = x;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, count * softmax_lanes), [&](std::int64_t j) {
      const std::int64_t r = first + j / softmax_lanes;
      online_lane<C, A> lane;
      for_lane_elements(
          j % softmax_lanes, n, [&](std::int64_t c) { return static_cast<C>(in.v(r, c)); },
          [&](std::int64_t, const C v) { lane.add(v); });
      lane_max[j] = static_cast<double>(lane.m);
      lane_sum[j] = static_cast<double>(lane.s);
    });
    member.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, count), [&](std::int64_t g) {
      const std::int64_t r = first + g;
      C m = minus_inf;
      for (int l = 0; l < softmax_lanes; ++l) {
        const C v = static_cast<C>(lane_max[g * softmax_lanes + l]);
        m = v > m ? v : m;
      }
      row_max[g] = static_cast<double>(m);
      if (!(m > minus_inf && m < -minus_inf)) {
        if constexpr (Op == softmax_op::logsumexp) {
          lse(r) = row_has_nan(in, r, n) ? lse_nan : static_cast<lse_value>(m);
        }
        return;
      }
      A s = 0;
      for (int l = 0; l < softmax_lanes; ++l) {
        const C lm = static_cast<C>(lane_max[g * softmax_lanes + l]);
        // A lane with no finite value adds 0 (or its NaN).
        const A scale = lm == minus_inf ? A(0) : static_cast<A>(softmax_exp<C>(lm - m));
        s += static_cast<A>(lane_sum[g * softmax_lanes + l]) * scale;
      }
      row_value[g] = static_cast<double>(finish_row<Op>(lse, r, m, s));
    });
    if constexpr (Op != softmax_op::logsumexp) {
      member.team_barrier();
      const row_access<YView>& out = y;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(member, count * softmax_lanes), [&](std::int64_t j) {
        const std::int64_t g = j / softmax_lanes, r = first + g;
        using storage = typename row_access<YView>::storage;
        const C m = static_cast<C>(row_max[g]);
        if (!(m > minus_inf && m < -minus_inf)) {
          for (std::int64_t c = j % softmax_lanes; c < n; c += softmax_lanes)
            out.v(r, c) = to_storage<storage>(nan);
          return;
        }
        const C value = static_cast<C>(row_value[g]);
        for_lane_elements(
            j % softmax_lanes, n, [&](std::int64_t c) { return static_cast<C>(in.v(r, c)); },
            [&](std::int64_t c, const C v) { out.v(r, c) = to_storage<storage>(row_output<Op>(v, m, value)); });
      });
    }
  }
};

template <softmax_backward_op Op, class DyView, class YView, class DxView, class Space>
struct team_backward_kernel {
  using T = typename DyView::non_const_value_type;
  using C = compute_type_t<T>;
  using A = accumulate_type_t<T>;
  row_access<DyView> dy;
  row_access<YView> y;
  row_access<DxView> dx;
  std::int64_t rows, cols;

  KOKKOS_INLINE_FUNCTION void operator()(const softmax_team_member_t<Space>& member) const {
    const std::int64_t first = member.league_rank() * softmax_rows_per_team;
    const std::int64_t count = rows - first < softmax_rows_per_team ? rows - first : softmax_rows_per_team;
    const softmax_team_scratch_t<Space> scratch(member.team_scratch(0), static_cast<std::size_t>(softmax_team_scratch_values));
    double* const lane_sum = scratch.data();
    double* const row_sum = lane_sum + softmax_rows_per_team * softmax_lanes;
    const std::int64_t n = cols;
    const row_access<DyView>& g_in = dy;
    const row_access<YView>& y_in = y;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, count * softmax_lanes), [&](std::int64_t j) {
      const std::int64_t r = first + j / softmax_lanes;
      A s = 0;
      // Each term is formed alone, so forming a batch of them first keeps the sum's order.
      for_lane_elements(
          j % softmax_lanes, n,
          [&](std::int64_t c) {
            if constexpr (Op == softmax_backward_op::softmax) {
              return static_cast<A>(static_cast<C>(g_in.v(r, c))) * static_cast<A>(static_cast<C>(y_in.v(r, c)));
            } else {
              return static_cast<A>(static_cast<C>(g_in.v(r, c)));
            }
          },
          [&](std::int64_t, const A term) { s += term; });
      lane_sum[j] = static_cast<double>(s);
    });
    member.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, count), [&](std::int64_t g) {
      A lanes[softmax_lanes];
      for (int l = 0; l < softmax_lanes; ++l) lanes[l] = static_cast<A>(lane_sum[g * softmax_lanes + l]);
      row_sum[g] = static_cast<double>(static_cast<C>(sum_lanes(lanes)));
    });
    member.team_barrier();
    const row_access<DxView>& out = dx;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, count * softmax_lanes), [&](std::int64_t j) {
      const std::int64_t g = j / softmax_lanes, r = first + g;
      using storage = typename row_access<DxView>::storage;
      const C s = static_cast<C>(row_sum[g]);
      for_lane_elements(
          j % softmax_lanes, n,
          [&](std::int64_t c) {
            return softmax_element_pair<C>{static_cast<C>(g_in.v(r, c)), static_cast<C>(y_in.v(r, c))};
          },
          [&](std::int64_t c, const softmax_element_pair<C> gy) {
            if constexpr (Op == softmax_backward_op::softmax) {
              out.v(r, c) = to_storage<storage>(gy.second * (gy.first - s));
            } else {
              out.v(r, c) = to_storage<storage>(gy.first - softmax_exp<C>(gy.second) * s);
            }
          });
    });
  }
};

}  // namespace ordo::nn::detail

ORDO_IMPL_FP_CONTRACT_OFF_END

#endif
