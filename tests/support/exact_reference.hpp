#ifndef ORDO_TESTS_SUPPORT_EXACT_REFERENCE_HPP
#define ORDO_TESTS_SUPPORT_EXACT_REFERENCE_HPP

// An independent oracle for sums: exact big-integer arithmetic on values scaled by 2^1074 (so
// every float and double is an integer), and a check that a floating-point result is the value
// nearest the exact sum (or the exact sum divided by n), ties to even. Shares no code with ordo.

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace ordo_test {

class big_integer {
 public:
  big_integer() = default;

  // x * 2^1074 for a finite x.
  template <class T>
  static big_integer scaled(T x) {
    big_integer r;
    if (x == 0) return r;
    int exponent = 0;
    const long double fraction = std::frexp(static_cast<long double>(x), &exponent);  // x = fraction * 2^exponent
    // fraction * 2^64 is an integer for float and double inputs.
    const long double integer = std::ldexp(std::fabs(fraction), 64);
    std::uint64_t mantissa = static_cast<std::uint64_t>(integer);
    int shift = exponent - 64 + 1074;
    if (shift < 0) {
      mantissa >>= -shift;  // subnormal doubles: the bits shifted out are zero
      shift = 0;
    }
    r.words_ = {static_cast<std::uint32_t>(mantissa), static_cast<std::uint32_t>(mantissa >> 32)};
    r.negative_ = x < 0;
    r.shift_left(shift);
    return r;
  }

  big_integer& operator+=(const big_integer& other) {
    if (negative_ == other.negative_) {
      add_magnitude(other.words_);
    } else if (compare_magnitude(words_, other.words_) >= 0) {
      subtract_magnitude(other.words_);
    } else {
      std::vector<std::uint32_t> larger = other.words_;
      std::swap(larger, words_);
      subtract_magnitude(larger);
      negative_ = other.negative_;
    }
    trim();
    return *this;
  }
  big_integer operator-() const {
    big_integer r = *this;
    if (!r.words_.empty()) r.negative_ = !r.negative_;
    return r;
  }
  big_integer& operator-=(const big_integer& other) { return *this += -other; }
  big_integer& multiply(std::uint64_t factor) {
    std::vector<std::uint32_t> out(words_.size() + 2, 0);
    for (int half = 0; half < 2; ++half) {
      const std::uint64_t f = half == 0 ? (factor & 0xffffffffu) : (factor >> 32);
      std::uint64_t carry = 0;
      for (std::size_t i = 0; i < words_.size(); ++i) {
        const std::uint64_t v = std::uint64_t{words_[i]} * f + out[i + static_cast<std::size_t>(half)] + carry;
        out[i + static_cast<std::size_t>(half)] = static_cast<std::uint32_t>(v);
        carry = v >> 32;
      }
      for (std::size_t i = words_.size() + static_cast<std::size_t>(half); carry != 0 && i < out.size(); ++i) {
        const std::uint64_t v = std::uint64_t{out[i]} + carry;
        out[i] = static_cast<std::uint32_t>(v);
        carry = v >> 32;
      }
    }
    words_ = out;
    trim();
    return *this;
  }
  bool is_zero() const { return words_.empty(); }
  // The value / 2^1074, to within a few long double ulps.
  long double to_long_double() const {
    long double r = 0;
    for (std::size_t i = words_.size(); i-- > 0;) r += std::ldexp(static_cast<long double>(words_[i]), static_cast<int>(32 * i) - 1074);
    return negative_ ? -r : r;
  }
  bool is_negative() const { return negative_; }
  // Compares |this| with |other|.
  int compare_magnitude_with(const big_integer& other) const { return compare_magnitude(words_, other.words_); }

 private:
  void shift_left(int bits) {
    const std::size_t whole = static_cast<std::size_t>(bits / 32);
    const int part = bits % 32;
    std::vector<std::uint32_t> out(words_.size() + whole + 1, 0);
    for (std::size_t i = 0; i < words_.size(); ++i) {
      const std::uint64_t v = std::uint64_t{words_[i]} << part;
      out[i + whole] |= static_cast<std::uint32_t>(v);
      out[i + whole + 1] |= static_cast<std::uint32_t>(v >> 32);
    }
    words_ = out;
    trim();
  }
  static int compare_magnitude(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b) {
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
    for (std::size_t i = a.size(); i-- > 0;) {
      if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    }
    return 0;
  }
  void add_magnitude(const std::vector<std::uint32_t>& b) {
    if (words_.size() < b.size()) words_.resize(b.size(), 0);
    std::uint64_t carry = 0;
    for (std::size_t i = 0; i < words_.size(); ++i) {
      const std::uint64_t v = std::uint64_t{words_[i]} + (i < b.size() ? b[i] : 0u) + carry;
      words_[i] = static_cast<std::uint32_t>(v);
      carry = v >> 32;
    }
    if (carry != 0) words_.push_back(static_cast<std::uint32_t>(carry));
  }
  // Requires |this| >= |b|.
  void subtract_magnitude(const std::vector<std::uint32_t>& b) {
    std::int64_t borrow = 0;
    for (std::size_t i = 0; i < words_.size(); ++i) {
      std::int64_t v = std::int64_t{words_[i]} - (i < b.size() ? std::int64_t{b[i]} : 0) - borrow;
      borrow = v < 0 ? 1 : 0;
      if (v < 0) v += std::int64_t{1} << 32;
      words_[i] = static_cast<std::uint32_t>(v);
    }
  }
  void trim() {
    while (!words_.empty() && words_.back() == 0) words_.pop_back();
    if (words_.empty()) negative_ = false;
  }

  std::vector<std::uint32_t> words_;
  bool negative_ = false;
};

template <class T>
big_integer exact_sum(const std::vector<T>& values) {
  big_integer s;
  for (T v : values) s += big_integer::scaled(v);
  return s;
}

// True when r is the T nearest to exact / divisor (exact scaled by 2^1074), ties to even, with
// overflow to infinity as IEEE rounding does.
template <class T>
bool is_correctly_rounded(T r, const big_integer& exact, std::uint64_t divisor = 1) {
  if (std::isnan(r)) return false;
  if (std::isinf(r)) {
    // Rounds to infinity only if |exact / divisor| >= max + half an ulp of max.
    const T max = std::numeric_limits<T>::max();
    const T half_ulp = max - std::nextafter(max, T(0));
    big_integer threshold = big_integer::scaled(max);
    threshold += big_integer::scaled(half_ulp / 2);
    threshold.multiply(divisor);
    if ((r > 0) == exact.is_negative()) return false;
    return exact.compare_magnitude_with(threshold) >= 0;
  }
  big_integer difference = exact;  // exact - divisor * r
  big_integer scaled_r = big_integer::scaled(r);
  scaled_r.multiply(divisor);
  difference -= scaled_r;
  if (difference.is_zero()) return true;
  // The neighbour of r towards the exact value, and half the gap to it, times divisor.
  const T toward = std::nextafter(r, difference.is_negative() ? -std::numeric_limits<T>::infinity()
                                                              : std::numeric_limits<T>::infinity());
  if (std::isinf(toward)) return false;
  big_integer gap = big_integer::scaled(toward);
  gap -= big_integer::scaled(r);  // exact: both are integers at this scale
  big_integer twice_difference = difference;
  twice_difference += difference;
  gap.multiply(divisor);
  const int c = twice_difference.compare_magnitude_with(gap);
  if (c < 0) return true;
  if (c > 0) return false;
  // A tie: r must have an even last bit.
  int exponent = 0;
  const long double fraction = std::frexp(static_cast<long double>(r), &exponent);
  const int digits = std::numeric_limits<T>::digits;
  const int lowest = std::numeric_limits<T>::min_exponent - digits;  // exponent of the smallest subnormal
  const int last_bit_exponent = exponent - digits > lowest ? exponent - digits : lowest;
  const long double units = std::ldexp(std::fabs(static_cast<long double>(r)), -last_bit_exponent);
  (void)fraction;
  return std::fmod(units, 2.0L) == 0.0L;
}

}  // namespace ordo_test

#endif
