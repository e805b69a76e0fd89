#ifndef ORDO_KERNELS_DETAIL_EXACT_ACCUMULATOR_HPP
#define ORDO_KERNELS_DETAIL_EXACT_ACCUMULATOR_HPP

// A superaccumulator: the exact sum of any number of floats or doubles as a fixed-point integer
// spanning the whole exponent range (after R. Neal, "Fast exact summation using small and large
// superaccumulators", arXiv:1505.05571). The sum is
//   sum over i of chunk[i] * 2^(32 i + scale),  scale = -149 (float) or -1074 (double),
// the value of the least significant bit of a subnormal. Each value is split into 32-bit pieces
// added to two (float) or three (double) chunks without carrying; a chunk absorbs 2^31 such adds
// before normalize() must propagate carries. Adding two normalized accumulators is exact, so
// sums merge exactly across threads, devices and ranks, in any order.
//
// This header is the accumulator alone; exact_blocks.hpp adds whole blocks to it quickly.

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

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

}  // namespace ordo::detail

#endif
