#ifndef ORDO_KERNELS_DETAIL_EXACT_BLOCK_SUMS_HPP
#define ORDO_KERNELS_DETAIL_EXACT_BLOCK_SUMS_HPP

// The portable steps of adding a block to an exact_accumulator: the block's extraction levels,
// its lane sums, and the magnitude range they depend on. The x86 kernels in x86/ vectorize the
// same steps; exact_blocks.hpp chooses between them.

#include <ordo/core/config.hpp>
#include <ordo/kernels/detail/exact_accumulator.hpp>

#include <Kokkos_Core.hpp>

#include <cfloat>
#include <cstdint>
#include <cstring>

#if ORDO_X86_HOST_SIMD
#include <emmintrin.h>  // _mm_getcsr, for the flush-to-zero check
#endif

namespace ordo::detail {

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
#if ORDO_X86_HOST_SIMD
  return (_mm_getcsr() & 0x8040u) == 0;  // MXCSR: FTZ is bit 15, DAZ bit 6
#elif ORDO_DEVICE_COMPILE && defined(__USE_FAST_MATH__)  // nvcc --use_fast_math
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

// One element's extraction into lane l, level by level.
template <int levels>
KOKKOS_FORCEINLINE_FUNCTION void exact_lane_step(double r, int l, const double* sigma,
                                                 double (&s)[levels + 1][exact_block_lanes]) {
  for (int j = 0; j < levels; ++j) {
    const double h = (sigma[j] + r) - sigma[j];
    r -= h;
    s[j][l] += h;
  }
  s[levels][l] += r;
}

// Element i of the block goes to lane (i - first) mod lanes, level by level. Every lane index is
// a constant once the loops over l unroll, so that a GPU keeps s in registers (an index computed
// at run time would put the whole array in local memory).
template <int levels, class T, class Data>
KOKKOS_INLINE_FUNCTION void exact_lane_sums(const Data& x, std::int64_t first, std::int64_t begin, std::int64_t end,
                                            const double* sigma, double (&s)[levels + 1][exact_block_lanes]) {
  constexpr int lanes = exact_block_lanes;
  std::int64_t i = begin;
  if (const int offset = static_cast<int>((begin - first) % lanes); offset != 0) {  // up to the next lane 0
    ORDO_IMPL_UNROLL
    for (int l = 0; l < lanes; ++l) {
      if (l >= offset && begin + (l - offset) < end) exact_lane_step<levels>(static_cast<double>(x[begin + (l - offset)]), l, sigma, s);
    }
    i = begin + (lanes - offset);
  }
  for (; i + lanes <= end; i += lanes) {
    ORDO_IMPL_UNROLL
    for (int l = 0; l < lanes; ++l) exact_lane_step<levels>(static_cast<double>(x[i + l]), l, sigma, s);
  }
  ORDO_IMPL_UNROLL
  for (int l = 0; l < lanes; ++l) {
    if (i + l < end) exact_lane_step<levels>(static_cast<double>(x[i + l]), l, sigma, s);
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


}  // namespace ordo::detail

#endif
