#ifndef ORDO_CORE_FLOAT16_HPP
#define ORDO_CORE_FLOAT16_HPP

// ordo::half (IEEE 754 binary16) and ordo::bfloat16 (the top 16 bits of a float): 2-byte storage
// types with the same bits on every compiler and execution space. Kokkos' half_t and bhalf_t are
// plain 4-byte floats on host-only builds, which would make a mixed-precision result depend on
// where it ran.
//
//   ordo::half h(0.1f);                 // rounded to nearest-even, once
//   float f = h;                        // exact
//   static_assert(ordo::half(65520.0f).is_inf());   // half's overflow threshold
//
// Arithmetic happens in float: the types convert to float implicitly, so `a + b` is a float sum
// and comparisons follow IEEE 754 (NaN != NaN, -0 == +0). Going back is explicit, because it
// rounds. Conversions are integer code, constexpr, and callable on host and device alike.

#include <ordo/core/config.hpp>
#include <ordo/core/scalar_traits.hpp>

#include <concepts>
#include <cstdint>
#include <limits>

namespace ordo {

namespace detail {

ORDO_HOST_DEVICE constexpr std::uint32_t bits_of(float value) { return __builtin_bit_cast(std::uint32_t, value); }
ORDO_HOST_DEVICE constexpr std::uint64_t bits_of(double value) { return __builtin_bit_cast(std::uint64_t, value); }
ORDO_HOST_DEVICE constexpr float float_from_bits(std::uint32_t bits) { return __builtin_bit_cast(float, bits); }

// x / 2^shift rounded to nearest, ties to even; 1 <= shift <= 63.
ORDO_HOST_DEVICE constexpr std::uint64_t shift_right_nearest_even(std::uint64_t x, int shift) {
  const std::uint64_t kept = x >> shift;
  const std::uint64_t rest = x & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t half_unit = std::uint64_t{1} << (shift - 1);
  return kept + ((rest > half_unit || (rest == half_unit && (kept & 1) != 0)) ? 1 : 0);
}

// A binary interchange format with exponent_bits and fraction_bits, stored in 16 bits.
template <int ExponentBits, int FractionBits>
struct format16 {
  static_assert(1 + ExponentBits + FractionBits == 16, "a 16-bit format");
  static constexpr int exponent_bits = ExponentBits;
  static constexpr int fraction_bits = FractionBits;
  static constexpr int bias = (1 << (ExponentBits - 1)) - 1;
  static constexpr std::uint16_t sign_mask = 0x8000;
  static constexpr std::uint16_t exponent_mask = static_cast<std::uint16_t>(((1 << ExponentBits) - 1) << FractionBits);
  static constexpr std::uint16_t fraction_mask = static_cast<std::uint16_t>((1 << FractionBits) - 1);
  static constexpr std::uint16_t quiet_bit = static_cast<std::uint16_t>(1 << (FractionBits - 1));

  // A double rounded once to this format: nearest, ties to even; overflow to infinity; NaN stays
  // NaN, quieted, keeping the payload's leading bits (as x86 and Arm conversions do).
  ORDO_HOST_DEVICE static constexpr std::uint16_t round_from(double value) {
    const std::uint64_t bits = bits_of(value);
    const auto sign = static_cast<std::uint16_t>((bits >> 48) & sign_mask);
    const std::uint64_t magnitude = bits & 0x7fff'ffff'ffff'ffffULL;
    constexpr std::uint64_t double_infinity = 0x7ff0'0000'0000'0000ULL;
    constexpr std::uint64_t double_fraction = (std::uint64_t{1} << 52) - 1;
    if (magnitude > double_infinity) {
      const auto payload = static_cast<std::uint16_t>((magnitude & double_fraction) >> (52 - FractionBits));
      return static_cast<std::uint16_t>(sign | exponent_mask | quiet_bit | payload);
    }
    if (magnitude == double_infinity) return static_cast<std::uint16_t>(sign | exponent_mask);
    const int double_exponent = static_cast<int>(magnitude >> 52);
    // Double subnormals are far below half a unit of either format's smallest subnormal.
    if (double_exponent == 0) return sign;
    const int exponent = double_exponent - 1023 + bias;  // biased in this format
    std::uint64_t rounded;
    if (exponent >= 1) {
      // Exponent and fraction side by side, so that a carry out of the fraction bumps the exponent.
      const std::uint64_t joined = (static_cast<std::uint64_t>(exponent) << 52) | (magnitude & double_fraction);
      rounded = shift_right_nearest_even(joined, 52 - FractionBits);
    } else {
      // Subnormal in this format: the significand in units of the smallest subnormal. Rounding up
      // to 1 << FractionBits gives the smallest normal's encoding, as it should.
      const int shift = 52 - FractionBits + 1 - exponent;
      if (shift > 54) return sign;  // below a quarter of the smallest subnormal
      rounded = shift_right_nearest_even((magnitude & double_fraction) | (std::uint64_t{1} << 52), shift);
    }
    if (rounded >= exponent_mask) return static_cast<std::uint16_t>(sign | exponent_mask);
    return static_cast<std::uint16_t>(sign | rounded);
  }

  // Exact: every value of a 16-bit format is a float.
  ORDO_HOST_DEVICE static constexpr float to_float(std::uint16_t bits) {
    const std::uint32_t sign = static_cast<std::uint32_t>(bits & sign_mask) << 16;
    const int exponent = (bits & exponent_mask) >> FractionBits;
    std::uint32_t fraction = bits & fraction_mask;
    constexpr int max_exponent = (1 << ExponentBits) - 1;
    if (exponent == max_exponent) return float_from_bits(sign | 0x7f80'0000U | (fraction << (23 - FractionBits)));
    if (exponent != 0) {
      const auto float_exponent = static_cast<std::uint32_t>(exponent - bias + 127);
      return float_from_bits(sign | (float_exponent << 23) | (fraction << (23 - FractionBits)));
    }
    if (fraction == 0) return float_from_bits(sign);
    // Subnormal here. bfloat16's are float subnormals with the same bits; half's are normal floats,
    // fraction * 2^-24 exactly (a product, not a normalization loop: no branches on a GPU).
    if constexpr (ExponentBits == 8) {
      return float_from_bits(sign | (fraction << (23 - FractionBits)));
    } else {
      constexpr float unit = float_from_bits(static_cast<std::uint32_t>(127 + 1 - bias - FractionBits) << 23);
      const float magnitude = static_cast<float>(fraction) * unit;
      return sign != 0 ? -magnitude : magnitude;
    }
  }
};

using binary16_format = format16<5, 10>;
using bfloat16_format = format16<8, 7>;

// float -> binary16, the same result as binary16_format::round_from(double(value)) with 32-bit
// integer work only: the path that kernels take for every stored element.
ORDO_HOST_DEVICE constexpr std::uint16_t binary16_from_float(float value) {
  const std::uint32_t bits = bits_of(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000U);
  const std::uint32_t magnitude = bits & 0x7fff'ffffU;
  if (magnitude > 0x7f80'0000U) return static_cast<std::uint16_t>(sign | 0x7e00U | ((magnitude >> 13) & 0x3ffU));
  if (magnitude >= 0x477f'f000U) return static_cast<std::uint16_t>(sign | 0x7c00U);  // >= 65520: infinity
  if (magnitude >= 0x3880'0000U) {                                                  // >= 2^-14: normal
    const std::uint32_t rebiased = magnitude - 0x3800'0000U;                        // exponent 127 -> 15
    return static_cast<std::uint16_t>(sign | ((rebiased + 0x0fffU + ((rebiased >> 13) & 1U)) >> 13));
  }
  if (magnitude <= 0x3300'0000U) return sign;  // <= 2^-25, half the smallest subnormal: ties to zero
  const int shift = 126 - static_cast<int>(magnitude >> 23);  // 14 .. 24
  const std::uint32_t significand = (magnitude & 0x007f'ffffU) | 0x0080'0000U;
  return static_cast<std::uint16_t>(sign | shift_right_nearest_even(significand, shift));
}

// float -> bfloat16: drop the low 16 bits, rounding to nearest-even; overflow reaches infinity
// through the carry.
ORDO_HOST_DEVICE constexpr std::uint16_t bfloat16_from_float(float value) {
  const std::uint32_t bits = bits_of(value);
  if ((bits & 0x7fff'ffffU) > 0x7f80'0000U) return static_cast<std::uint16_t>((bits >> 16) | 0x0040U);
  return static_cast<std::uint16_t>((bits + 0x7fffU + ((bits >> 16) & 1U)) >> 16);
}

// Integers of up to 32 bits are exact in double, so they too are rounded once.
template <class T>
concept exact_in_double = std::integral<T> && std::numeric_limits<T>::digits <= 53;

}  // namespace detail

// IEEE 754 binary16: 1 sign, 5 exponent, 10 fraction bits. Range ±65504, epsilon 2^-10.
class half {
 public:
  half() = default;
  ORDO_HOST_DEVICE constexpr explicit half(float value) : bits_(detail::binary16_from_float(value)) {}
  ORDO_HOST_DEVICE constexpr explicit half(double value) : bits_(detail::binary16_format::round_from(value)) {}
  template <detail::exact_in_double I>
  ORDO_HOST_DEVICE constexpr explicit half(I value) : half(static_cast<double>(value)) {}

  ORDO_HOST_DEVICE constexpr operator float() const { return detail::binary16_format::to_float(bits_); }

  ORDO_HOST_DEVICE static constexpr half from_bits(std::uint16_t bits) {
    half h;
    h.bits_ = bits;
    return h;
  }
  ORDO_HOST_DEVICE constexpr std::uint16_t bits() const { return bits_; }
  ORDO_HOST_DEVICE constexpr bool is_nan() const { return (bits_ & 0x7fffU) > 0x7c00U; }
  ORDO_HOST_DEVICE constexpr bool is_inf() const { return (bits_ & 0x7fffU) == 0x7c00U; }

 private:
  std::uint16_t bits_;
};

// bfloat16: 1 sign, 8 exponent, 7 fraction bits; float's range, epsilon 2^-7.
class bfloat16 {
 public:
  bfloat16() = default;
  ORDO_HOST_DEVICE constexpr explicit bfloat16(float value) : bits_(detail::bfloat16_from_float(value)) {}
  ORDO_HOST_DEVICE constexpr explicit bfloat16(double value) : bits_(detail::bfloat16_format::round_from(value)) {}
  template <detail::exact_in_double I>
  ORDO_HOST_DEVICE constexpr explicit bfloat16(I value) : bfloat16(static_cast<double>(value)) {}

  ORDO_HOST_DEVICE constexpr operator float() const {
    return detail::float_from_bits(static_cast<std::uint32_t>(bits_) << 16);
  }

  ORDO_HOST_DEVICE static constexpr bfloat16 from_bits(std::uint16_t bits) {
    bfloat16 b;
    b.bits_ = bits;
    return b;
  }
  ORDO_HOST_DEVICE constexpr std::uint16_t bits() const { return bits_; }
  ORDO_HOST_DEVICE constexpr bool is_nan() const { return (bits_ & 0x7fffU) > 0x7f80U; }
  ORDO_HOST_DEVICE constexpr bool is_inf() const { return (bits_ & 0x7fffU) == 0x7f80U; }

 private:
  std::uint16_t bits_;
};

static_assert(sizeof(half) == 2 && alignof(half) == 2);
static_assert(sizeof(bfloat16) == 2 && alignof(bfloat16) == 2);

// Element-wise work in float. Sums and statistics in double: a float accumulator of 16-bit
// values would be exact only for short runs, and double costs the memory-bound kernels nothing.
template <>
struct scalar_traits<half> {
  using storage_type = half;
  using compute_type = float;
  using accumulate_type = double;
  static constexpr const char* name = "ordo::half";
};
template <>
struct scalar_traits<bfloat16> {
  using storage_type = bfloat16;
  using compute_type = float;
  using accumulate_type = double;
  static constexpr const char* name = "ordo::bfloat16";
};

}  // namespace ordo

namespace ordo::detail {

// What std::numeric_limits says of both 16-bit types; the values come from the bit patterns, so
// the specializations below only name them.
template <class T, class Format, int Digits10, int MaxDigits10>
struct float16_limits {
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr std::float_denorm_style has_denorm = std::denorm_present;
  static constexpr bool has_denorm_loss = false;
  static constexpr std::float_round_style round_style = std::round_to_nearest;
  static constexpr bool is_iec559 = Format::exponent_bits == 5;  // bfloat16 is not an IEEE format
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int digits = Format::fraction_bits + 1;
  static constexpr int digits10 = Digits10;
  static constexpr int max_digits10 = MaxDigits10;
  static constexpr int radix = 2;
  static constexpr int min_exponent = 2 - Format::bias;
  static constexpr int min_exponent10 = Format::exponent_bits == 5 ? -4 : -37;
  static constexpr int max_exponent = Format::bias + 1;
  static constexpr int max_exponent10 = Format::exponent_bits == 5 ? 4 : 38;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;

  static constexpr T from(unsigned bits) { return T::from_bits(static_cast<std::uint16_t>(bits)); }
  static constexpr T min() noexcept { return from(1U << Format::fraction_bits); }
  static constexpr T lowest() noexcept { return from(0x8000U | (Format::exponent_mask - 1U)); }
  static constexpr T max() noexcept { return from(Format::exponent_mask - 1U); }
  static constexpr T epsilon() noexcept { return from(static_cast<unsigned>(Format::bias - Format::fraction_bits) << Format::fraction_bits); }
  static constexpr T round_error() noexcept { return from(static_cast<unsigned>(Format::bias - 1) << Format::fraction_bits); }
  static constexpr T infinity() noexcept { return from(Format::exponent_mask); }
  static constexpr T quiet_NaN() noexcept { return from(Format::exponent_mask | Format::quiet_bit); }
  static constexpr T signaling_NaN() noexcept { return from(Format::exponent_mask | (Format::quiet_bit >> 1)); }
  static constexpr T denorm_min() noexcept { return from(1U); }
};

}  // namespace ordo::detail

template <>
class std::numeric_limits<ordo::half> : public ordo::detail::float16_limits<ordo::half, ordo::detail::binary16_format, 3, 5> {};
template <>
class std::numeric_limits<ordo::bfloat16>
    : public ordo::detail::float16_limits<ordo::bfloat16, ordo::detail::bfloat16_format, 2, 4> {};

#endif
