#ifndef ORDO_PLATFORM_STORAGE_CONVERSION_HPP
#define ORDO_PLATFORM_STORAGE_CONVERSION_HPP

// widen(x): a storage value in its compute type, exactly, as to_compute does, written so that a
// loop of them vectorizes (and narrow(x), the rounding back, below). half's own conversion branches on the kind of value (normal,
// subnormal, Inf/NaN), which keeps compilers from vectorizing the loops of the reductions and of
// batch norm; here every kind is computed and the right one selected. Integer work and one exact
// product, so flush-to-zero and denormals-are-zero modes do not change the result. float, double
// and bfloat16 (a shift) convert as they are.

#include <ordo/core/config.hpp>
#include <ordo/core/float16.hpp>
#include <ordo/core/scalar_traits.hpp>

#include <cstdint>
#include <type_traits>

namespace ordo::detail {

// Every half as a float: fraction and exponent moved into place and rebiased (15 -> 127); Inf
// and NaN rebiased once more to float's all-ones exponent; subnormals (exponent 0) are
// fraction * 2^-24, an exact product of normal floats. Selections by masks, not conditionals:
// g++ 12 keeps conditionals here as branches and then does not vectorize the loop.
ORDO_HOST_DEVICE constexpr float widen_half_bits(std::uint32_t h) {
  const std::uint32_t sign = (h & 0x8000U) << 16;
  const std::uint32_t magnitude = h & 0x7fffU;
  const std::uint32_t special = 0U - static_cast<std::uint32_t>(magnitude >= 0x7c00U);  // all ones for Inf, NaN
  const std::uint32_t tiny = 0U - static_cast<std::uint32_t>(magnitude < 0x0400U);     // all ones for subnormals
  const std::uint32_t normal = (magnitude << 13) + 0x3800'0000U + (special & 0x3800'0000U);
  const float subnormal = static_cast<float>(static_cast<std::int32_t>(magnitude)) * 0x1p-24f;
  return float_from_bits(((bits_of(subnormal) & tiny) | (normal & ~tiny)) | sign);
}

template <class S>
ORDO_HOST_DEVICE constexpr compute_type_t<S> widen(S value) {
  if constexpr (std::is_same_v<std::remove_cv_t<S>, half>) {
    return widen_half_bits(value.bits());
  } else {
    return to_compute(value);
  }
}

// float -> half rounded to nearest-even, the bits of binary16_from_float, selected by masks so
// that loops of stores vectorize. Normal results: the integer rounding of binary16_from_float.
// Subnormal and zero results (|x| < 2^-14): |x| + 0.5 rounds |x| to a multiple of 2^-24, half's
// subnormal unit and float's spacing in [0.5, 1), by the hardware's nearest-even rounding; the
// bits above 0.5's are the result (up to 0x400, the smallest normal, when it rounds up). Float
// subnormal inputs read as zero under denormals-are-zero round to zero either way.
ORDO_HOST_DEVICE constexpr std::uint16_t narrow_half_bits(float value) {
  const std::uint32_t bits = bits_of(value);
  const std::uint32_t sign = (bits >> 16) & 0x8000U;
  const std::uint32_t magnitude = bits & 0x7fff'ffffU;
  const std::uint32_t rebiased = magnitude - 0x3800'0000U;  // exponent 127 -> 15; wraps where unused
  const std::uint32_t normal = (rebiased + 0x0fffU + ((rebiased >> 13) & 1U)) >> 13;
  const std::uint32_t subnormal = bits_of(float_from_bits(magnitude) + 0.5f) - 0x3f00'0000U;
  const std::uint32_t tiny = 0U - static_cast<std::uint32_t>(magnitude < 0x3880'0000U);
  const std::uint32_t overflow = 0U - static_cast<std::uint32_t>(magnitude >= 0x477f'f000U);  // >= 65520
  const std::uint32_t nan = 0U - static_cast<std::uint32_t>(magnitude > 0x7f80'0000U);
  std::uint32_t r = (subnormal & tiny) | (normal & ~tiny);
  r = (0x7c00U & overflow) | (r & ~overflow);
  r = ((0x7e00U | ((magnitude >> 13) & 0x3ffU)) & nan) | (r & ~nan);
  return static_cast<std::uint16_t>(sign | r);
}

// narrow<S>(x): x in S's compute type rounded once to S, as to_storage does; half's written to
// vectorize. For float and double, nothing.
template <class S>
ORDO_HOST_DEVICE constexpr S narrow(compute_type_t<S> value) {
  if constexpr (std::is_same_v<S, half>) {
    return half::from_bits(narrow_half_bits(value));
  } else {
    return to_storage<S>(value);
  }
}

}  // namespace ordo::detail

#endif
