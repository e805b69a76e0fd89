#ifndef ORDO_KERNELS_DETAIL_EXACT_ROUNDING_HPP
#define ORDO_KERNELS_DETAIL_EXACT_ROUNDING_HPP

// Correct rounding (to nearest, ties to even) of a superaccumulator's exact value, and of that
// value divided by an integer count: the last step of ordo's exact sum and mean. Host code.

#include <ordo/kernels/detail/exact_accumulator.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace ordo::detail {

// |value| as little-endian 32-bit words, and its sign. Requires a normalized accumulator.
template <class T>
void magnitude_of(exact_accumulator<T> acc, std::vector<std::uint32_t>& words, bool& negative) {
  acc.normalize();
  negative = acc.chunk[exact_accumulator<T>::chunk_count - 1] < 0;
  if (negative) {
    // Two's complement negation across chunks: value = -(sum), each chunk then re-normalized.
    for (auto& c : acc.chunk) c = -c;
    acc.normalize();
  }
  words.assign(static_cast<std::size_t>(exact_accumulator<T>::chunk_count) + 1, 0);
  for (int i = 0; i < exact_accumulator<T>::chunk_count; ++i) {
    // After normalization all chunks but the last are in [0, 2^32) and the last is >= 0 here.
    const std::uint64_t c = static_cast<std::uint64_t>(acc.chunk[i]);
    words[static_cast<std::size_t>(i)] += static_cast<std::uint32_t>(c & 0xffffffffu);
    if (i == exact_accumulator<T>::chunk_count - 1) words[static_cast<std::size_t>(i) + 1] = static_cast<std::uint32_t>(c >> 32);
  }
}

inline int highest_bit(const std::vector<std::uint32_t>& words) {
  for (std::size_t w = words.size(); w-- > 0;) {
    if (words[w] != 0) {
      int bit = 31;
      while (((words[w] >> bit) & 1u) == 0) --bit;
      return static_cast<int>(w) * 32 + bit;
    }
  }
  return -1;
}

inline bool bit_at(const std::vector<std::uint32_t>& words, int position) {
  if (position < 0) return false;
  const std::size_t w = static_cast<std::size_t>(position) / 32;
  return w < words.size() && ((words[w] >> (position % 32)) & 1u) != 0;
}

inline bool any_bit_below(const std::vector<std::uint32_t>& words, int position) {
  for (int p = 0; p < position; ++p) {
    if (bit_at(words, p)) return true;
  }
  return false;
}

// Rounds (-1)^negative * M * 2^scale to Out, with M given as words and `inexact_below` set when
// the exact value has further nonzero bits below M's last bit (a division remainder).
template <class Out>
Out round_to_nearest_even(const std::vector<std::uint32_t>& words, int scale, bool negative, bool inexact_below) {
  constexpr int precision = std::numeric_limits<Out>::digits;  // 24 or 53
  constexpr int quantum = std::numeric_limits<Out>::min_exponent - precision;  // -149 or -1074
  const int high = highest_bit(words);
  if (high < 0) return negative ? -Out(0) : Out(0);
  const int leading = high + scale;                       // exponent of the leading bit
  int lsb = leading - (precision - 1);                     // exponent of the result's last bit
  if (lsb < quantum) lsb = quantum;                        // subnormal result
  const int dropped = lsb - scale;                         // bits of M below the result's last bit
  std::uint64_t kept = 0;
  for (int p = high; p >= (dropped > 0 ? dropped : 0); --p) kept = kept << 1 | (bit_at(words, p) ? 1u : 0u);
  if (dropped > 0) {
    const bool round = bit_at(words, dropped - 1);
    const bool sticky = inexact_below || any_bit_below(words, dropped - 1);
    if (round && (sticky || (kept & 1u) != 0)) ++kept;
  } else if (dropped < 0) {
    kept <<= -dropped;  // M fits exactly; express it on the result's last bit
  }
  // kept * 2^lsb, assembled from its bits rather than with ldexp: with flush-to-zero on (as
  // -ffast-math's startup code sets it), ldexp would flush a subnormal result to zero.
  using format = float_format<Out>;
  if (kept == std::uint64_t{1} << precision) {  // rounding carried into a new leading bit
    kept >>= 1;
    ++lsb;
  }
  typename format::bits_type bits;
  if (kept < std::uint64_t{1} << (precision - 1)) {
    bits = static_cast<typename format::bits_type>(kept);  // subnormal: lsb is the quantum
  } else {
    const int biased = lsb + precision - 1 + format::bias;
    if (biased >= format::exponent_mask) return negative ? -std::numeric_limits<Out>::infinity() : std::numeric_limits<Out>::infinity();
    bits = static_cast<typename format::bits_type>(static_cast<typename format::bits_type>(biased) << format::mantissa_bits) |
           static_cast<typename format::bits_type>(kept & ((std::uint64_t{1} << format::mantissa_bits) - 1));
  }
  if (negative) bits |= static_cast<typename format::bits_type>(typename format::bits_type{1} << (sizeof(bits) * 8 - 1));
  Out magnitude;
  std::memcpy(&magnitude, &bits, sizeof magnitude);
  return magnitude;
}

// Non-finite results follow IEEE: NaN anywhere, or +Inf with -Inf, give NaN; else the infinity.
template <class Out>
bool non_finite_result(std::uint32_t flags, Out& out) {
  if ((flags & has_nan) != 0 || ((flags & has_positive_infinity) != 0 && (flags & has_negative_infinity) != 0)) {
    out = std::numeric_limits<Out>::quiet_NaN();
    return true;
  }
  if ((flags & has_positive_infinity) != 0) {
    out = std::numeric_limits<Out>::infinity();
    return true;
  }
  if ((flags & has_negative_infinity) != 0) {
    out = -std::numeric_limits<Out>::infinity();
    return true;
  }
  return false;
}

// The exact sum, rounded once to Out.
template <class Out, class T>
Out round_exact_sum(const exact_accumulator<T>& acc) {
  Out out{};
  if (non_finite_result(acc.flags, out)) return out;
  std::vector<std::uint32_t> words;
  bool negative = false;
  magnitude_of(acc, words, negative);
  return round_to_nearest_even<Out>(words, float_format<T>::scale, negative, false);
}

// The exact sum divided by count, rounded once to Out: long division of M * 2^128 by count gives
// a quotient with at least 64 significant bits, and a nonzero remainder is the sticky bit.
template <class Out, class T>
Out round_exact_mean(const exact_accumulator<T>& acc, std::uint64_t count) {
  Out out{};
  if (non_finite_result(acc.flags, out)) return out;
  std::vector<std::uint32_t> words;
  bool negative = false;
  magnitude_of(acc, words, negative);
  std::vector<std::uint32_t> shifted(4, 0);
  shifted.insert(shifted.end(), words.begin(), words.end());
  __extension__ typedef unsigned __int128 u128;
  u128 remainder = 0;
  for (std::size_t w = shifted.size(); w-- > 0;) {
    const u128 current = remainder << 32 | shifted[w];
    shifted[w] = static_cast<std::uint32_t>(current / count);
    remainder = current % count;
  }
  return round_to_nearest_even<Out>(shifted, float_format<T>::scale - 128, negative, remainder != 0);
}

}  // namespace ordo::detail

#endif
