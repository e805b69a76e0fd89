#ifndef ORDO_PLATFORM_FAST_EXP_HPP
#define ORDO_PLATFORM_FAST_EXP_HPP

// exp for float on host threads, vectorizable: softmax spends most of its time here, and a call
// to the C library's expf per element runs at a fraction of memory speed (PyTorch uses Sleef).
//
// Cephes' expf (S. L. Moshier, Cephes Math Library, expf.c): n = round(x / ln 2), r = x - n ln 2
// with ln 2 split in two (C1 exact in 9 bits, so n C1 is exact), exp(r) by a degree-5 polynomial
// on [-ln2/2, ln2/2], and the result scaled by 2^n. The scaling multiplies by two powers of two,
// 2^floor(n/2) and 2^ceil(n/2), so that results in float's subnormal range are rounded once and
// results above FLT_MAX reach infinity, without branches.
//
// Accuracy (tests/softmax_test.cpp, against a long double exp on 2.36 million inputs spread over
// [-104.5, 89] plus the neighbourhoods of the overflow, smallest-normal and subnormal thresholds):
// below 1 ulp everywhere (largest 0.982 ulp; in the subnormal range an ulp is 2^-149).
// exp(-inf) = 0, exp(+inf) = +inf, exp(NaN) = NaN; below -103.97 the result is 0, above 88.72 +inf.
//
// fast_exp(float) is the scalar twin of the vector version below: the same operations in the
// same order, so the two give the same bits (tested). Both are plain arithmetic with no FMA, so
// the baseline, AVX2 and AVX-512 builds of a kernel agree too; on 16 lanes the AVX-512 kernels
// round to an integer and scale by 2^n with their own instructions, which give the same bits. Integer work is unsigned (wraps, no UB for
// NaN inputs).

#include <ordo/core/config.hpp>

#include <cstdint>
#include <limits>
#include <type_traits>

// GCC and clang vector extensions: portable SIMD that compiles to SSE2, AVX2 (under the AVX2
// dispatch attribute) or NEON. Not under nvcc, hipcc or clang-cuda, whose host passes then use
// the scalar twin; never in device code.
#if (defined(__GNUC__) || defined(__clang__)) && !ORDO_GPU_COMPILER
#define ORDO_IMPL_VECTOR_EXTENSIONS 1
#else
#define ORDO_IMPL_VECTOR_EXTENSIONS 0
#endif

ORDO_IMPL_FP_CONTRACT_OFF_BEGIN  // every level rounds alike (core/config.hpp)

namespace ordo::detail {

// Whether the vector code below compares 32-byte vectors as two halves: in code compiled without
// AVX, where g++ lowers such comparisons to scalar code (8 times slower). Kernels' AVX2 twins
// (platform/x86/cpu_dispatch.hpp) pass false.
#if defined(__AVX__)
inline constexpr bool split_compares_v = false;
#else
inline constexpr bool split_compares_v = true;
#endif

namespace exp_constants {
inline constexpr float lowest = -104.0f;  // exp(-104) < FLT_TRUE_MIN / 2: rounds to 0
inline constexpr float highest = 100.0f;  // exp(100) > FLT_MAX: +inf
inline constexpr float log2e = 1.44269504088896341f;
inline constexpr float round_magic = 12582912.0f;  // 1.5 * 2^23: t + magic rounds t to an integer
inline constexpr std::uint32_t round_magic_bits = 0x4b40'0000U;
inline constexpr std::uint32_t scale_bias = round_magic_bits - 254U;  // bits(t) - scale_bias = n + 254
inline constexpr float c1 = 0.693359375f;   // ln 2 = c1 + c2, c1 in 9 bits
inline constexpr float c2 = -2.12194440e-4f;
inline constexpr float p0 = 1.9875691500e-4f;
inline constexpr float p1 = 1.3981999507e-3f;
inline constexpr float p2 = 8.3334519073e-3f;
inline constexpr float p3 = 4.1665795894e-2f;
inline constexpr float p4 = 1.6666665459e-1f;
inline constexpr float p5 = 5.0000001201e-1f;
}  // namespace exp_constants

// NonPositive: the caller promises x <= 0 or NaN (softmax's x - max), which needs no upper clamp.
template <bool NonPositive = false>
ORDO_HOST_DEVICE inline float fast_exp(float x) {
  namespace k = exp_constants;
  x = x < k::lowest ? k::lowest : x;  // NaN passes both comparisons unchanged
  if constexpr (!NonPositive) x = x > k::highest ? k::highest : x;
  const float t = x * k::log2e + k::round_magic;
  const float n = t - k::round_magic;
  const float r = (x - n * k::c1) - n * k::c2;
  float p = k::p0;
  p = p * r + k::p1;
  p = p * r + k::p2;
  p = p * r + k::p3;
  p = p * r + k::p4;
  p = p * r + k::p5;
  const float e = (p * (r * r) + r) + 1.0f;
  // 2^n1 and 2^n2 with n1 = floor(n / 2), n2 = n - n1, both normal floats: their biased
  // exponents are h1 = (n + 254) >> 1 = n1 + 127 and h2 = n + 254 - h1 = n2 + 127, n + 254 in [104, 404].
  const std::uint32_t biased = __builtin_bit_cast(std::uint32_t, t) - k::scale_bias;
  const std::uint32_t h1 = biased >> 1, h2 = biased - h1;
  return (e * __builtin_bit_cast(float, h1 << 23)) * __builtin_bit_cast(float, h2 << 23);
}

#if ORDO_IMPL_VECTOR_EXTENSIONS
// Eight floats (two SSE registers, one AVX register). Passed by reference only: g++ warns
// (-Wpsabi) about 32-byte vectors passed by value without AVX.
typedef float float8 __attribute__((vector_size(32)));
typedef std::int32_t int8x32 __attribute__((vector_size(32)));
typedef std::uint32_t uint8x32 __attribute__((vector_size(32)));
typedef double double4 __attribute__((vector_size(32)));

typedef float float4x32 __attribute__((vector_size(16)));
typedef std::int32_t int4x32 __attribute__((vector_size(16)));

// Sixteen floats, one AVX-512 register: the AVX-512 twins' vectors (wide_vectors_for_v).
typedef float float32x16 __attribute__((vector_size(64)));
typedef std::int32_t int32x16 __attribute__((vector_size(64)));
typedef std::uint32_t uint32x16 __attribute__((vector_size(64)));
typedef double float64x8 __attribute__((vector_size(64)));

// The comparison mask and the bits of a float vector's lanes.
template <class V>
struct float_vector_lanes;
template <>
struct float_vector_lanes<float8> {
  using mask = int8x32;
  using bits = uint8x32;
};
template <>
struct float_vector_lanes<float32x16> {
  using mask = int32x16;
  using bits = uint32x16;
};

// a < b lane by lane, -1 or 0; Split: as two 16-byte comparisons (split_compares_v), for
// 32-byte vectors only.
template <bool Split = split_compares_v, class V>
[[gnu::always_inline]] inline void less(const V& a, const V& b, typename float_vector_lanes<V>::mask& out) {
  if constexpr (!Split) {
    out = a < b;
  } else {
    static_assert(std::is_same_v<V, float8>, "ordo: split comparisons are for code compiled without AVX");
    const float4x32 a0 = __builtin_shufflevector(a, a, 0, 1, 2, 3), a1 = __builtin_shufflevector(a, a, 4, 5, 6, 7);
    const float4x32 b0 = __builtin_shufflevector(b, b, 0, 1, 2, 3), b1 = __builtin_shufflevector(b, b, 4, 5, 6, 7);
    const int4x32 m0 = a0 < b0, m1 = a1 < b1;
    out = __builtin_shufflevector(m0, m1, 0, 1, 2, 3, 4, 5, 6, 7);
  }
}

// where ? a : b for a comparison's mask, in bit operations (`?:` on 32-byte vectors is scalar
// code without AVX too).
template <class V>
[[gnu::always_inline]] inline void select(const typename float_vector_lanes<V>::mask& where, const V& a, const V& b,
                                          V& out) {
  using mask = typename float_vector_lanes<V>::mask;
  out = __builtin_bit_cast(V, (where & __builtin_bit_cast(mask, a)) | (~where & __builtin_bit_cast(mask, b)));
}

// fast_exp's input clamped to [lowest, highest] (only from below for NonPositive); NaN compares
// false and stays NaN.
// Results through references, as everywhere here (-Wpsabi: wide vectors by value).
template <bool NonPositive, bool Split, class V>
[[gnu::always_inline]] inline void exp_clamped(const V& in, V& x) {
  namespace k = exp_constants;
  typename float_vector_lanes<V>::mask m;
  x = in;
  const V lowest = k::lowest + V{}, highest = k::highest + V{};
  less<Split>(x, lowest, m);
  select(m, lowest, x, x);
  if constexpr (!NonPositive) {
    less<Split>(highest, x, m);
    select(m, highest, x, x);
  }
}

// exp(r) for r = x - n ln 2 (ln 2 in two parts), by the degree-5 polynomial; n is an integer.
template <class V>
[[gnu::always_inline]] inline void exp_of_reduced(const V& x, const V& n, V& e) {
  namespace k = exp_constants;
  const V r = (x - n * k::c1) - n * k::c2;
  V p = k::p0 + V{};
  p = p * r + k::p1;
  p = p * r + k::p2;
  p = p * r + k::p3;
  p = p * r + k::p4;
  p = p * r + k::p5;
  e = (p * (r * r) + r) + 1.0f;
}

// Where the build targets AVX-512 itself, every function may use it and the helper is forced
// inline. In g++'s dispatching builds the helper carries the twins' target and the flattened twins
// inline it. clang's flatten leaves it out of line there (one call per 16 floats), so clang's
// dispatching builds keep the portable operations.
#if defined(__AVX512F__) && ORDO_IMPL_VECTOR_EXTENSIONS
#define ORDO_IMPL_AVX512_EXP 1
#define ORDO_IMPL_AVX512_EXP_FUNCTION [[gnu::always_inline]] inline
#elif defined(ORDO_IMPL_AVX512_FUNCTION) && !defined(__clang__) && ORDO_IMPL_VECTOR_EXTENSIONS
#define ORDO_IMPL_AVX512_EXP 1
#define ORDO_IMPL_AVX512_EXP_FUNCTION ORDO_IMPL_AVX512_FUNCTION inline
#else
#define ORDO_IMPL_AVX512_EXP 0
#endif

#if ORDO_IMPL_AVX512_EXP
// fast_exp on 16 lanes with AVX-512's own instructions, the same bits in 7 fewer operations a
// vector: n = vrndscaleps(x log2e) rounds to the nearest even integer as adding and subtracting the
// magic constant does, and vscalefps(e, n) = e 2^n rounded once, as the two power-of-two factors
// give it (e 2^floor(n/2) is exact, the second product rounds). Not always_inline in dispatching
// builds (compilers refuse to force a function with AVX-512 into one without).
template <bool NonPositive>
ORDO_IMPL_AVX512_EXP_FUNCTION void fast_exp_avx512(const float32x16& in, float32x16& out) {
  constexpr int current_rounding = 4;  // _MM_FROUND_CUR_DIRECTION: the MXCSR's, round to nearest
  constexpr auto all_lanes = static_cast<unsigned short>(0xffff);
  float32x16 x, e;
  exp_clamped<NonPositive, false>(in, x);
  const float32x16 scaled = x * exp_constants::log2e;
  const float32x16 n = __builtin_ia32_rndscaleps_mask(scaled, 0, scaled, all_lanes, current_rounding);
  exp_of_reduced(x, n, e);
  out = __builtin_ia32_scalefps512_mask(e, n, e, all_lanes, current_rounding);
}
#endif

// fast_exp(float) lane by lane, for 8 or 16 floats: the same operations, hence the same bits.
template <bool NonPositive = false, bool Split = split_compares_v, class V>
[[gnu::always_inline]] inline void fast_exp(const V& in, V& out) {
#if ORDO_IMPL_AVX512_EXP
  if constexpr (std::is_same_v<V, float32x16>) {
    fast_exp_avx512<NonPositive>(in, out);
    return;
  }
#endif
  namespace k = exp_constants;
  using bits = typename float_vector_lanes<V>::bits;
  V x, e;
  exp_clamped<NonPositive, Split>(in, x);
  const V t = x * k::log2e + k::round_magic;
  const V n = t - k::round_magic;
  exp_of_reduced(x, n, e);
  const bits biased = __builtin_bit_cast(bits, t) - k::scale_bias;
  const bits h1 = biased >> 1U, h2 = biased - h1;
  out = (e * __builtin_bit_cast(V, h1 << 23U)) * __builtin_bit_cast(V, h2 << 23U);
}
#endif

}  // namespace ordo::detail

ORDO_IMPL_FP_CONTRACT_OFF_END

#endif
