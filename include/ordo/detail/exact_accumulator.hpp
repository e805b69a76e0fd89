#ifndef ORDO_DETAIL_EXACT_ACCUMULATOR_HPP
#define ORDO_DETAIL_EXACT_ACCUMULATOR_HPP

// A superaccumulator: the exact sum of any number of floats or doubles as a fixed-point integer
// spanning the whole exponent range (after R. Neal, "Fast exact summation using small and large
// superaccumulators", arXiv:1505.05571). The sum is
//   sum over i of chunk[i] * 2^(32 i + scale),  scale = -149 (float) or -1074 (double),
// the value of the least significant bit of a subnormal. Each value is split into 32-bit pieces
// added to two (float) or three (double) chunks without carrying; a chunk absorbs 2^31 such adds
// before normalize() must propagate carries. Adding two normalized accumulators is exact, so
// sums merge exactly across threads, devices and ranks, in any order.

#include <Kokkos_Core.hpp>

#include <cfloat>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(__SSE2__) && !defined(__CUDA_ARCH__)
#include <emmintrin.h>
#define ORDO_IMPL_EXACT_SSE2 1
// The same kernels for AVX2, compiled for it whatever the flags and chosen at run time.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__)
#include <ordo/detail/cpu_dispatch.hpp>

#include <immintrin.h>
#define ORDO_IMPL_EXACT_AVX2 1
#define ORDO_IMPL_TARGET_AVX2 __attribute__((target("avx2")))
#endif
#endif

namespace ordo::detail {

template <class T>
struct float_format;

template <>
struct float_format<float> {
  using bits_type = std::uint32_t;
  static constexpr int mantissa_bits = 23;  // stored, without the implicit bit
  static constexpr int exponent_mask = 0xff;
  static constexpr int bias = 127;
  static constexpr int scale = -149;
  // Positions 0..253 of the mantissa's last bit plus 55 bits of value, plus 31 bits of carries.
  static constexpr int chunks = 10;
};

template <>
struct float_format<double> {
  using bits_type = std::uint64_t;
  static constexpr int mantissa_bits = 52;
  static constexpr int exponent_mask = 0x7ff;
  static constexpr int bias = 1023;
  static constexpr int scale = -1074;
  // Positions 0..2045 plus 84 bits of value, plus 31 bits of carries.
  static constexpr int chunks = 67;
};

enum exact_flags : std::uint32_t { has_nan = 1, has_positive_infinity = 2, has_negative_infinity = 4 };

template <class T>
struct exact_accumulator {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "ordo's exact summation takes float or double values");
  using format = float_format<T>;
  static constexpr int chunk_count = format::chunks;
  // Adds allowed between two normalize() calls: each add changes a chunk by less than 2^32.
  static constexpr std::int64_t adds_between_normalizations = std::int64_t{1} << 30;

  std::int64_t chunk[chunk_count];
  std::uint32_t flags;

  KOKKOS_INLINE_FUNCTION constexpr exact_accumulator() : chunk{}, flags(0) {}

  KOKKOS_INLINE_FUNCTION void add(T x) {
    typename format::bits_type bits;
    memcpy(&bits, &x, sizeof bits);
    const int exponent = static_cast<int>(bits >> format::mantissa_bits) & format::exponent_mask;
    const bool negative = (bits >> (sizeof(bits) * 8 - 1)) != 0;
    std::uint64_t mantissa =
        static_cast<std::uint64_t>(bits & ((typename format::bits_type{1} << format::mantissa_bits) - 1));
    if (exponent == format::exponent_mask) {
      flags |= mantissa != 0 ? has_nan : (negative ? has_negative_infinity : has_positive_infinity);
      return;
    }
    // Subnormals (exponent 0) share the scale of the smallest normal exponent.
    int position = exponent - 1;
    if (exponent != 0) {
      mantissa |= std::uint64_t{1} << format::mantissa_bits;
    } else {
      position = 0;
    }
    deposit(mantissa, position, negative);
  }

  // Adds mantissa * 2^(position + scale); mantissa < 2^53.
  KOKKOS_INLINE_FUNCTION void deposit(std::uint64_t mantissa, int position, bool negative) {
    const int index = position >> 5;
    const int shift = position & 31;
    // mantissa << shift has at most 84 bits: split it into three 32-bit pieces.
    const std::uint64_t low = mantissa << shift;
    const std::uint64_t high = shift == 0 ? 0 : mantissa >> (64 - shift);
    const std::int64_t piece0 = static_cast<std::int64_t>(low & 0xffffffffu);
    const std::int64_t piece1 = static_cast<std::int64_t>(low >> 32);
    const std::int64_t piece2 = static_cast<std::int64_t>(high);
    // Branch-free: signs of mixed data are random, and a mispredicted branch costs more than the
    // adds. (p ^ m) - m is p for m = 0 and -p for m = -1; chunk[index + 2] always exists.
    const std::int64_t m = -static_cast<std::int64_t>(negative);
    chunk[index] += (piece0 ^ m) - m;
    chunk[index + 1] += (piece1 ^ m) - m;
    chunk[index + 2] += (piece2 ^ m) - m;
  }

  // Adds a finite double that is a multiple of 2^scale, such as an exact sum of Ts.
  KOKKOS_INLINE_FUNCTION void add_multiple_of_quantum(double d) {
    if constexpr (std::is_same_v<T, double>) {
      add(d);
    } else {
      std::uint64_t bits;
      memcpy(&bits, &d, sizeof bits);
      const int exponent = static_cast<int>(bits >> 52) & 0x7ff;
      // A double subnormal is never a multiple of 2^-149: exponent 0 means the sum is 0.
      if (exponent == 0) return;
      std::uint64_t mantissa = (bits & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{1} << 52);
      int position = exponent - 1075 - format::scale;  // d = mantissa * 2^(position + scale)
      if (position < 0) {
        mantissa >>= -position;  // the bits shifted out are zero
        position = 0;
      }
      deposit(mantissa, position, (bits >> 63) != 0);
    }
  }

  // Propagates carries so that every chunk but the last lies in [0, 2^32); the last carries the
  // sign. The value is unchanged.
  KOKKOS_INLINE_FUNCTION void normalize() {
    std::int64_t carry = 0;
    for (int i = 0; i < chunk_count - 1; ++i) {
      const std::int64_t v = chunk[i] + carry;
      chunk[i] = v & 0xffffffff;
      carry = (v - chunk[i]) / (std::int64_t{1} << 32);  // exact: v - chunk[i] is a multiple of 2^32
    }
    chunk[chunk_count - 1] += carry;
  }

  // Both normalized: the sum of each pair of chunks is below 2^33 in magnitude. The result is
  // normalized again, so merges can be chained.
  KOKKOS_INLINE_FUNCTION void merge(const exact_accumulator& other) {
    for (int i = 0; i < chunk_count; ++i) chunk[i] += other.chunk[i];
    flags |= other.flags;
    normalize();
  }
};

// Blocks: most blocks of real data add a few exact double sums to the superaccumulator instead
// of every element. A block of n elements is summed in exact_block_lanes lanes of at most
// 2^L >= n / lanes elements each. With |x| < 2^e for every element and every element a multiple
// of 2^q (the last bit of the smallest nonzero magnitude), a lane's plain double sum is a
// multiple of 2^q below 2^(e + L): exact when e + L - q <= 53 ("level 0", nearly every block of
// float data). Otherwise extraction levels (Rump, Ogita and Oishi's ExtractVector, "Accurate
// floating-point summation part I", SIAM J. Sci. Comput. 31, 2008) first split each element x
// against sigma = 2^(e + L): h = (sigma + x) - sigma is exact by Sterbenz's lemma, x - h is the
// rounding error of sigma + x and so exact too, h is a multiple of 2^(e + L - 53) with
// |h| <= 2^e, and a lane's sum of h stays a multiple of 2^(e + L - 53) below 2^(e + L): exact.
// The remainders x - h are at most 2^(e + L - 53) in magnitude and still multiples of 2^q, so
// the same test applies to them with e lowered by 53 - L. Every bound holds with equality too.
//
// Extraction relies on every addition being rounded to nearest in double, in the order written;
// under -ffast-math (reassociation) or x87 excess precision only level 0, which is exact in any
// order, is used.
#if defined(__FAST_MATH__) || (defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0)
inline constexpr int exact_block_max_levels = 0;
#else
inline constexpr int exact_block_max_levels = 3;
#endif
inline constexpr int exact_block_lanes = 8;

// Every sum above needs subnormals kept as they are. Flush-to-zero or denormals-are-zero (set by
// the startup code -ffast-math links in, or by hand) would lose them, so blocks then take the
// per-element path, which is integer-only. nvcc's --use_fast_math flushes single-precision
// subnormals, the float inputs, on the device.
KOKKOS_INLINE_FUNCTION bool exact_blocks_keep_subnormals() {
#if defined(ORDO_IMPL_EXACT_SSE2)
  return (_mm_getcsr() & 0x8040u) == 0;  // MXCSR: FTZ is bit 15, DAZ bit 6
#elif defined(__CUDA_ARCH__) && defined(__USE_FAST_MATH__)
  return false;
#else
  return true;
#endif
}

KOKKOS_INLINE_FUNCTION double power_of_two(int e) {  // a normal double: -1022 <= e <= 1023
  const std::uint64_t bits = static_cast<std::uint64_t>(e + 1023) << 52;
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

KOKKOS_INLINE_FUNCTION bool is_finite_bits(double d) {  // by bits: -ffinite-math-only folds isfinite
  std::uint64_t bits;
  memcpy(&bits, &d, sizeof bits);
  return ((bits >> 52) & 0x7ff) != 0x7ff;
}

// From the block's largest magnitude and smallest nonzero magnitude (+Inf if there is none), the
// number of extraction levels and their sigmas. False: the block needs the per-element path (an
// Inf, sigma beyond double's range, or more than exact_block_max_levels levels). A NaN need not
// show here: it reaches the sums, which then are not finite.
template <class T>
KOKKOS_INLINE_FUNCTION bool exact_block_levels(T largest, T smallest, std::int64_t count, int& levels, double* sigma) {
  using format = float_format<T>;
  using bits_type = typename format::bits_type;
  bits_type top_bits, bottom_bits;
  memcpy(&top_bits, &largest, sizeof top_bits);
  memcpy(&bottom_bits, &smallest, sizeof bottom_bits);
  const int top_exponent = static_cast<int>(top_bits >> format::mantissa_bits);
  const int bottom_exponent = static_cast<int>(bottom_bits >> format::mantissa_bits);
  const std::int64_t per_lane = (count + exact_block_lanes - 1) / exact_block_lanes;
  int lane_bits = 1;
  while ((std::int64_t{1} << lane_bits) < per_lane) ++lane_bits;
  int e = top_exponent - format::bias + 1;  // |x| < 2^e, subnormals (exponent field 0) included
  levels = 0;
  if (top_exponent >= format::exponent_mask || e + lane_bits > 1023) return false;
  if (bottom_exponent >= format::exponent_mask) return true;  // all zero (or NaN): level 0
  const int quantum = (bottom_exponent > 1 ? bottom_exponent : 1) - format::bias - format::mantissa_bits;
  while (e + lane_bits - quantum > 53) {
    if (levels == exact_block_max_levels) return false;
    sigma[levels++] = power_of_two(e + lane_bits);
    e = e + lane_bits - 53;
  }
  return true;
}

// Adds the lane sums of every level to acc; false, adding nothing, if one is not finite.
template <int levels, class T>
KOKKOS_INLINE_FUNCTION bool exact_add_lane_sums(exact_accumulator<T>& acc, const double (&s)[levels + 1][exact_block_lanes]) {
  bool finite = true;
  for (int j = 0; j <= levels; ++j) {
    for (int l = 0; l < exact_block_lanes; ++l) finite = finite && is_finite_bits(s[j][l]);
  }
  if (!finite) return false;
  for (int j = 0; j <= levels; ++j) {
    for (int l = 0; l < exact_block_lanes; ++l) acc.add_multiple_of_quantum(s[j][l]);
  }
  return true;
}

// Element i of the block goes to lane (i - first) mod lanes, level by level.
template <int levels, class T, class Data>
KOKKOS_INLINE_FUNCTION void exact_lane_sums(const Data& x, std::int64_t first, std::int64_t begin, std::int64_t end,
                                            const double* sigma, double (&s)[levels + 1][exact_block_lanes]) {
  for (std::int64_t i = begin; i < end; ++i) {
    double r = static_cast<double>(x[i]);
    const int l = static_cast<int>((i - first) % exact_block_lanes);
    for (int j = 0; j < levels; ++j) {
      const double h = (sigma[j] + r) - sigma[j];
      r -= h;
      s[j][l] += h;
    }
    s[levels][l] += r;
  }
}

template <class T>
KOKKOS_INLINE_FUNCTION void magnitude_range_step(T v, T& high, T& low) {
  using bits_type = typename float_format<T>::bits_type;
  constexpr bits_type magnitude_mask = ~bits_type{0} >> 1;
  constexpr bits_type infinity_bits = static_cast<bits_type>(float_format<T>::exponent_mask)
                                      << float_format<T>::mantissa_bits;
  bits_type bits;
  memcpy(&bits, &v, sizeof bits);
  bits &= magnitude_mask;
  const bits_type nonzero_bits = bits == 0 ? infinity_bits : bits;  // zeros do not set the quantum
  T magnitude, nonzero;
  memcpy(&magnitude, &bits, sizeof magnitude);
  memcpy(&nonzero, &nonzero_bits, sizeof nonzero);
  high = magnitude > high ? magnitude : high;
  low = nonzero < low ? nonzero : low;
}

template <class T>
KOKKOS_INLINE_FUNCTION T infinity_of() {
  using bits_type = typename float_format<T>::bits_type;
  constexpr bits_type bits = static_cast<bits_type>(float_format<T>::exponent_mask) << float_format<T>::mantissa_bits;
  T v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

#if defined(ORDO_IMPL_EXACT_SSE2)
// The same steps with SSE2 intrinsics, 8 elements (4 pairs of doubles) at a time: compilers do
// not vectorize the portable loops' selects and lane-wise sums well.
inline void load_as_doubles(const float* p, __m128d (&d)[4]) {
  const __m128 a = _mm_loadu_ps(p), b = _mm_loadu_ps(p + 4);
  d[0] = _mm_cvtps_pd(a);
  d[1] = _mm_cvtps_pd(_mm_movehl_ps(a, a));
  d[2] = _mm_cvtps_pd(b);
  d[3] = _mm_cvtps_pd(_mm_movehl_ps(b, b));
}
inline void load_as_doubles(const double* p, __m128d (&d)[4]) {
  for (int k = 0; k < 4; ++k) d[k] = _mm_loadu_pd(p + 2 * k);
}

// _mm_max/_mm_min return their second operand when one is NaN: a NaN element is skipped here.
// Zeros count as +Inf only with zeros_as_infinity, which costs three more instructions a vector:
// blocks are first scanned without, and again with it only if their smallest magnitude is 0.
template <bool zeros_as_infinity>
inline void magnitude_range_sse2(__m128 v, __m128& high, __m128& low) {
  const __m128 magnitude = _mm_and_ps(v, _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff)));
  high = _mm_max_ps(magnitude, high);
  if constexpr (zeros_as_infinity) {
    const __m128 zero_to_infinity =
        _mm_and_ps(_mm_cmpeq_ps(magnitude, _mm_setzero_ps()), _mm_castsi128_ps(_mm_set1_epi32(0x7f800000)));
    low = _mm_min_ps(_mm_or_ps(magnitude, zero_to_infinity), low);
  } else {
    low = _mm_min_ps(magnitude, low);
  }
}
template <bool zeros_as_infinity>
inline void magnitude_range_sse2(__m128d v, __m128d& high, __m128d& low) {
  const __m128d magnitude = _mm_and_pd(v, _mm_castsi128_pd(_mm_set1_epi64x(0x7fffffffffffffff)));
  high = _mm_max_pd(magnitude, high);
  if constexpr (zeros_as_infinity) {
    const __m128d zero_to_infinity = _mm_and_pd(_mm_cmpeq_pd(magnitude, _mm_setzero_pd()),
                                                _mm_castsi128_pd(_mm_set1_epi64x(0x7ff0000000000000)));
    low = _mm_min_pd(_mm_or_pd(magnitude, zero_to_infinity), low);
  } else {
    low = _mm_min_pd(magnitude, low);
  }
}
inline float horizontal_max(__m128 a, __m128 b) {
  float v[8];
  _mm_storeu_ps(v, a);
  _mm_storeu_ps(v + 4, b);
  float m = v[0];
  for (int k = 1; k < 8; ++k) m = v[k] > m ? v[k] : m;
  return m;
}
inline float horizontal_min(__m128 a, __m128 b) {
  float v[8];
  _mm_storeu_ps(v, a);
  _mm_storeu_ps(v + 4, b);
  float m = v[0];
  for (int k = 1; k < 8; ++k) m = v[k] < m ? v[k] : m;
  return m;
}
inline double horizontal_max(__m128d a, __m128d b) {
  double v[4];
  _mm_storeu_pd(v, a);
  _mm_storeu_pd(v + 2, b);
  double m = v[0];
  for (int k = 1; k < 4; ++k) m = v[k] > m ? v[k] : m;
  return m;
}
inline double horizontal_min(__m128d a, __m128d b) {
  double v[4];
  _mm_storeu_pd(v, a);
  _mm_storeu_pd(v + 2, b);
  double m = v[0];
  for (int k = 1; k < 4; ++k) m = v[k] < m ? v[k] : m;
  return m;
}

// The range of x[begin, end) into largest and smallest (which start at 0 and +Inf).
template <bool zeros_as_infinity>
inline void magnitude_range_sse2(const float* x, std::int64_t begin, std::int64_t end, float& largest, float& smallest) {
  __m128 high[2] = {_mm_set1_ps(largest), _mm_set1_ps(largest)}, low[2] = {_mm_set1_ps(smallest), _mm_set1_ps(smallest)};
  std::int64_t i = begin;
  for (; i + exact_block_lanes <= end; i += exact_block_lanes) {
    magnitude_range_sse2<zeros_as_infinity>(_mm_loadu_ps(x + i), high[0], low[0]);
    magnitude_range_sse2<zeros_as_infinity>(_mm_loadu_ps(x + i + 4), high[1], low[1]);
  }
  largest = horizontal_max(high[0], high[1]);
  smallest = horizontal_min(low[0], low[1]);
  for (; i < end; ++i) magnitude_range_step(x[i], largest, smallest);
}
template <bool zeros_as_infinity>
inline void magnitude_range_sse2(const double* x, std::int64_t begin, std::int64_t end, double& largest, double& smallest) {
  // Four independent maxima and minima: one pair would wait on max/min latency.
  __m128d high[4], low[4];
  for (int k = 0; k < 4; ++k) {
    high[k] = _mm_set1_pd(largest);
    low[k] = _mm_set1_pd(smallest);
  }
  std::int64_t i = begin;
  for (; i + exact_block_lanes <= end; i += exact_block_lanes) {
    for (int k = 0; k < 4; ++k) magnitude_range_sse2<zeros_as_infinity>(_mm_loadu_pd(x + i + 2 * k), high[k], low[k]);
  }
  largest = horizontal_max(_mm_max_pd(high[0], high[1]), _mm_max_pd(high[2], high[3]));
  smallest = horizontal_min(_mm_min_pd(low[0], low[1]), _mm_min_pd(low[2], low[3]));
  for (; i < end; ++i) magnitude_range_step(x[i], largest, smallest);
}

template <int levels, class T>
inline void exact_lane_sums_sse2(const T* x, std::int64_t begin, std::int64_t end, const double* sigma,
                                 double (&s)[levels + 1][exact_block_lanes]) {
  __m128d sum[levels + 1][4], sig[levels > 0 ? levels : 1];
  for (int j = 0; j <= levels; ++j) {
    for (int k = 0; k < 4; ++k) sum[j][k] = _mm_setzero_pd();
  }
  for (int j = 0; j < levels; ++j) sig[j] = _mm_set1_pd(sigma[j]);
  std::int64_t i = begin;
  for (; i + exact_block_lanes <= end; i += exact_block_lanes) {
    __m128d r[4];
    load_as_doubles(x + i, r);
    // The level pass reads the block from L1; meanwhile, fetch the next block from memory.
    _mm_prefetch(reinterpret_cast<const char*>(x + i + 2048), _MM_HINT_T0);
    for (int j = 0; j < levels; ++j) {
      for (int k = 0; k < 4; ++k) {
        const __m128d h = _mm_sub_pd(_mm_add_pd(sig[j], r[k]), sig[j]);
        r[k] = _mm_sub_pd(r[k], h);
        sum[j][k] = _mm_add_pd(sum[j][k], h);
      }
    }
    for (int k = 0; k < 4; ++k) sum[levels][k] = _mm_add_pd(sum[levels][k], r[k]);
  }
  for (int j = 0; j <= levels; ++j) {
    for (int k = 0; k < 4; ++k) _mm_storeu_pd(&s[j][2 * k], sum[j][k]);
  }
  exact_lane_sums<levels, T>(x, begin, i, end, sigma, s);
}
#endif

#if defined(ORDO_IMPL_EXACT_AVX2)
// AVX2 kernels when the build targets AVX2, or when the CPU has AVX2 and ORDO_CPU_CAPABILITY does
// not ask for the baseline (the choice batch norm's kernels make too, detail/cpu_dispatch.hpp).
inline bool exact_blocks_use_avx2() {
#if defined(__AVX2__)
  return true;
#else
  return host_capability() == cpu_capability::avx2;
#endif
}

ORDO_IMPL_TARGET_AVX2 inline void load_as_doubles_avx2(const float* p, __m256d (&d)[2]) {
  const __m256 a = _mm256_loadu_ps(p);
  d[0] = _mm256_cvtps_pd(_mm256_castps256_ps128(a));
  d[1] = _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1));
}
ORDO_IMPL_TARGET_AVX2 inline void load_as_doubles_avx2(const double* p, __m256d (&d)[2]) {
  d[0] = _mm256_loadu_pd(p);
  d[1] = _mm256_loadu_pd(p + 4);
}

template <bool zeros_as_infinity>
ORDO_IMPL_TARGET_AVX2 inline void magnitude_range_avx2(__m256 v, __m256& high, __m256& low) {
  const __m256 magnitude = _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
  high = _mm256_max_ps(magnitude, high);
  if constexpr (zeros_as_infinity) {
    const __m256 zero_to_infinity = _mm256_and_ps(_mm256_cmp_ps(magnitude, _mm256_setzero_ps(), _CMP_EQ_OQ),
                                                  _mm256_castsi256_ps(_mm256_set1_epi32(0x7f800000)));
    low = _mm256_min_ps(_mm256_or_ps(magnitude, zero_to_infinity), low);
  } else {
    low = _mm256_min_ps(magnitude, low);
  }
}
template <bool zeros_as_infinity>
ORDO_IMPL_TARGET_AVX2 inline void magnitude_range_avx2(__m256d v, __m256d& high, __m256d& low) {
  const __m256d magnitude = _mm256_and_pd(v, _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffff)));
  high = _mm256_max_pd(magnitude, high);
  if constexpr (zeros_as_infinity) {
    const __m256d zero_to_infinity = _mm256_and_pd(_mm256_cmp_pd(magnitude, _mm256_setzero_pd(), _CMP_EQ_OQ),
                                                   _mm256_castsi256_pd(_mm256_set1_epi64x(0x7ff0000000000000)));
    low = _mm256_min_pd(_mm256_or_pd(magnitude, zero_to_infinity), low);
  } else {
    low = _mm256_min_pd(magnitude, low);
  }
}

template <class T, class V>
ORDO_IMPL_TARGET_AVX2 inline void horizontal_range_avx2(const V (&high)[2], const V (&low)[2], T& largest, T& smallest) {
  constexpr int width = static_cast<int>(sizeof(V) / sizeof(T));
  T h[2 * width], l[2 * width];
  memcpy(h, high, sizeof h);
  memcpy(l, low, sizeof l);
  for (int k = 0; k < 2 * width; ++k) {
    largest = h[k] > largest ? h[k] : largest;
    smallest = l[k] < smallest ? l[k] : smallest;
  }
}

// The range of x[begin, end) into largest and smallest (which start at 0 and +Inf).
template <bool zeros_as_infinity>
ORDO_IMPL_TARGET_AVX2 inline void magnitude_range_avx2(const float* x, std::int64_t begin, std::int64_t end,
                                                       float& largest, float& smallest) {
  __m256 high[2] = {_mm256_set1_ps(largest), _mm256_set1_ps(largest)};
  __m256 low[2] = {_mm256_set1_ps(smallest), _mm256_set1_ps(smallest)};
  std::int64_t i = begin;
  for (; i + 16 <= end; i += 16) {
    for (int k = 0; k < 2; ++k) magnitude_range_avx2<zeros_as_infinity>(_mm256_loadu_ps(x + i + 8 * k), high[k], low[k]);
  }
  horizontal_range_avx2(high, low, largest, smallest);
  for (; i < end; ++i) magnitude_range_step(x[i], largest, smallest);
}
template <bool zeros_as_infinity>
ORDO_IMPL_TARGET_AVX2 inline void magnitude_range_avx2(const double* x, std::int64_t begin, std::int64_t end,
                                                       double& largest, double& smallest) {
  __m256d high[2] = {_mm256_set1_pd(largest), _mm256_set1_pd(largest)};
  __m256d low[2] = {_mm256_set1_pd(smallest), _mm256_set1_pd(smallest)};
  std::int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    for (int k = 0; k < 2; ++k) magnitude_range_avx2<zeros_as_infinity>(_mm256_loadu_pd(x + i + 4 * k), high[k], low[k]);
  }
  horizontal_range_avx2(high, low, largest, smallest);
  for (; i < end; ++i) magnitude_range_step(x[i], largest, smallest);
}

// Float blocks: the range and the level-0 sums in one pass. Returns where the sums stopped.
ORDO_IMPL_TARGET_AVX2 inline std::int64_t magnitude_range_and_sums_avx2(const float* x, std::int64_t begin,
                                                                        std::int64_t end, float& largest,
                                                                        float& smallest,
                                                                        double (&s)[1][exact_block_lanes]) {
  __m256 high[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  __m256 low[2] = {_mm256_set1_ps(smallest), _mm256_set1_ps(smallest)};
  __m256d sum[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
  std::int64_t i = begin;
  for (; i + 2 * exact_block_lanes <= end; i += 2 * exact_block_lanes) {
    for (int k = 0; k < 2; ++k) {
      const __m256 a = _mm256_loadu_ps(x + i + 8 * k);
      magnitude_range_avx2<false>(a, high[k], low[k]);
      sum[2 * k] = _mm256_add_pd(sum[2 * k], _mm256_cvtps_pd(_mm256_castps256_ps128(a)));
      sum[2 * k + 1] = _mm256_add_pd(sum[2 * k + 1], _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1)));
    }
  }
  horizontal_range_avx2(high, low, largest, smallest);
  // Elements 8k..8k+7 of each 16 went to sum[2k] and sum[2k + 1]: lane i mod 8 either way.
  double part[4][4];
  for (int k = 0; k < 4; ++k) _mm256_storeu_pd(part[k], sum[k]);
  for (int l = 0; l < 4; ++l) {
    s[0][l] += part[0][l] + part[2][l];
    s[0][l + 4] += part[1][l] + part[3][l];
  }
  return i;
}

template <int levels, class T>
ORDO_IMPL_TARGET_AVX2 inline void exact_lane_sums_avx2(const T* x, std::int64_t begin, std::int64_t end,
                                                       const double* sigma, double (&s)[levels + 1][exact_block_lanes]) {
  __m256d sum[levels + 1][2], sig[levels > 0 ? levels : 1];
  for (int j = 0; j <= levels; ++j) {
    for (int k = 0; k < 2; ++k) sum[j][k] = _mm256_setzero_pd();
  }
  for (int j = 0; j < levels; ++j) sig[j] = _mm256_set1_pd(sigma[j]);
  std::int64_t i = begin;
  for (; i + exact_block_lanes <= end; i += exact_block_lanes) {
    __m256d r[2];
    load_as_doubles_avx2(x + i, r);
    // The level pass reads the block from L1; meanwhile, fetch the next block from memory.
    _mm_prefetch(reinterpret_cast<const char*>(x + i + 2048), _MM_HINT_T0);
    for (int j = 0; j < levels; ++j) {
      for (int k = 0; k < 2; ++k) {
        const __m256d h = _mm256_sub_pd(_mm256_add_pd(sig[j], r[k]), sig[j]);
        r[k] = _mm256_sub_pd(r[k], h);
        sum[j][k] = _mm256_add_pd(sum[j][k], h);
      }
    }
    for (int k = 0; k < 2; ++k) sum[levels][k] = _mm256_add_pd(sum[levels][k], r[k]);
  }
  for (int j = 0; j <= levels; ++j) {
    for (int k = 0; k < 2; ++k) _mm256_storeu_pd(&s[j][4 * k], sum[j][k]);
  }
  exact_lane_sums<levels, T>(x, begin, i, end, sigma, s);
}
#endif

template <int levels, class T, class Data>
KOKKOS_INLINE_FUNCTION bool exact_add_block_levels(exact_accumulator<T>& acc, const Data& x, std::int64_t begin,
                                                   std::int64_t end, const double* sigma) {
  double s[levels + 1][exact_block_lanes] = {};
#if defined(ORDO_IMPL_EXACT_SSE2)
  if constexpr (std::is_pointer_v<Data>) {
#if defined(ORDO_IMPL_EXACT_AVX2)
    if (exact_blocks_use_avx2()) {
      exact_lane_sums_avx2<levels, T>(x, begin, end, sigma, s);
      return exact_add_lane_sums<levels>(acc, s);
    }
#endif
    exact_lane_sums_sse2<levels, T>(x, begin, end, sigma, s);
  } else {
    exact_lane_sums<levels, T>(x, begin, begin, end, sigma, s);
  }
#else
  exact_lane_sums<levels, T>(x, begin, begin, end, sigma, s);
#endif
  return exact_add_lane_sums<levels>(acc, s);
}

// Adds x[begin, end) (at most 2^20 elements; x a pointer or a rank-1 View) to acc, exactly:
// the lane sums of a block's levels when possible, else element by element.
template <class T, class Data>
KOKKOS_INLINE_FUNCTION void exact_add_block(exact_accumulator<T>& acc, const Data& x, std::int64_t begin,
                                            std::int64_t end) {
  if (!exact_blocks_keep_subnormals()) {
    for (std::int64_t i = begin; i < end; ++i) acc.add(x[i]);
    return;
  }
  T largest = T(0), smallest = infinity_of<T>();
  bool fast = false;
  int levels = 0;
  double sigma[exact_block_max_levels > 0 ? exact_block_max_levels : 1] = {};
#if defined(ORDO_IMPL_EXACT_SSE2)
  if constexpr (std::is_pointer_v<Data>) {
    constexpr int lanes = exact_block_lanes;
    std::int64_t i = begin;
#if defined(ORDO_IMPL_EXACT_AVX2)
    if (exact_blocks_use_avx2()) {
      if constexpr (std::is_same_v<T, float>) {
        double s[1][lanes] = {};
        i = magnitude_range_and_sums_avx2(x, begin, end, largest, smallest, s);
        for (std::int64_t k = i; k < end; ++k) magnitude_range_step(x[k], largest, smallest);
        if (smallest == 0.0f) {
          largest = 0.0f;
          smallest = infinity_of<T>();
          magnitude_range_avx2<true>(x, begin, end, largest, smallest);
        }
        fast = exact_block_levels(largest, smallest, end - begin, levels, sigma);
        if (fast && levels == 0) {
          exact_lane_sums<0, T>(x, begin, i, end, sigma, s);
          if (exact_add_lane_sums<0>(acc, s)) return;
          fast = false;
        }
      } else {
        magnitude_range_avx2<false>(x, begin, end, largest, smallest);
        if (smallest == 0.0) {
          largest = 0.0;
          smallest = infinity_of<T>();
          magnitude_range_avx2<true>(x, begin, end, largest, smallest);
        }
        fast = exact_block_levels(largest, smallest, end - begin, levels, sigma);
      }
    } else
#endif
    if constexpr (std::is_same_v<T, float>) {
      // One pass for the range and the level-0 sums, which nearly every float block needs.
      __m128 high[2] = {_mm_setzero_ps(), _mm_setzero_ps()};
      __m128 low[2] = {_mm_set1_ps(smallest), _mm_set1_ps(smallest)};
      __m128d sum[4] = {_mm_setzero_pd(), _mm_setzero_pd(), _mm_setzero_pd(), _mm_setzero_pd()};
      for (; i + lanes <= end; i += lanes) {
        const __m128 a = _mm_loadu_ps(x + i), b = _mm_loadu_ps(x + i + 4);
        magnitude_range_sse2<false>(a, high[0], low[0]);
        magnitude_range_sse2<false>(b, high[1], low[1]);
        sum[0] = _mm_add_pd(sum[0], _mm_cvtps_pd(a));
        sum[1] = _mm_add_pd(sum[1], _mm_cvtps_pd(_mm_movehl_ps(a, a)));
        sum[2] = _mm_add_pd(sum[2], _mm_cvtps_pd(b));
        sum[3] = _mm_add_pd(sum[3], _mm_cvtps_pd(_mm_movehl_ps(b, b)));
      }
      largest = horizontal_max(high[0], high[1]);
      smallest = horizontal_min(low[0], low[1]);
      for (std::int64_t k = i; k < end; ++k) magnitude_range_step(x[k], largest, smallest);
      if (smallest == 0.0f) {
        largest = 0.0f;
        smallest = infinity_of<T>();
        magnitude_range_sse2<true>(x, begin, end, largest, smallest);
      }
      fast = exact_block_levels(largest, smallest, end - begin, levels, sigma);
      if (fast && levels == 0) {
        double s[1][lanes] = {};
        for (int k = 0; k < 4; ++k) _mm_storeu_pd(&s[0][2 * k], sum[k]);
        exact_lane_sums<0, T>(x, begin, i, end, sigma, s);
        if (exact_add_lane_sums<0>(acc, s)) return;
        fast = false;
      }
    } else {
      magnitude_range_sse2<false>(x, begin, end, largest, smallest);
      if (smallest == 0.0) {
        largest = 0.0;
        smallest = infinity_of<T>();
        magnitude_range_sse2<true>(x, begin, end, largest, smallest);
      }
      fast = exact_block_levels(largest, smallest, end - begin, levels, sigma);
    }
  } else
#endif
  {
    constexpr int lanes = exact_block_lanes;
    T high[lanes], low[lanes];
    for (int l = 0; l < lanes; ++l) {
      high[l] = largest;
      low[l] = smallest;
    }
    std::int64_t i = begin;
    for (; i + lanes <= end; i += lanes) {
      for (int l = 0; l < lanes; ++l) magnitude_range_step(x[i + l], high[l], low[l]);
    }
    for (int l = 0; i < end; ++i, ++l) magnitude_range_step(x[i], high[l], low[l]);
    for (int l = 0; l < lanes; ++l) {
      largest = high[l] > largest ? high[l] : largest;
      smallest = low[l] < smallest ? low[l] : smallest;
    }
    fast = exact_block_levels(largest, smallest, end - begin, levels, sigma);
  }
  if (fast) {
    switch (levels) {
      case 0: fast = exact_add_block_levels<0>(acc, x, begin, end, sigma); break;
      case 1: fast = exact_add_block_levels<1>(acc, x, begin, end, sigma); break;
      case 2: fast = exact_add_block_levels<2>(acc, x, begin, end, sigma); break;
      default: fast = exact_add_block_levels<3>(acc, x, begin, end, sigma); break;
    }
  }
  if (!fast) {
    for (std::int64_t i = begin; i < end; ++i) acc.add(x[i]);
  }
}

}  // namespace ordo::detail

#endif
