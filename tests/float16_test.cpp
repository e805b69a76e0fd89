#include <ordo/precision.hpp>

#include "support/fixtures.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>

namespace {

// The formats' published facts (IEEE 754-2008 table 3.5 for binary16; bfloat16 is float's top
// half), stated at compile time.
static_assert(sizeof(ordo::half) == 2 && sizeof(ordo::bfloat16) == 2);
static_assert(std::is_trivially_copyable_v<ordo::half> && std::is_trivially_copyable_v<ordo::bfloat16>);
static_assert(std::numeric_limits<ordo::half>::digits == 11 && std::numeric_limits<ordo::bfloat16>::digits == 8);
static_assert(float(std::numeric_limits<ordo::half>::epsilon()) == 0x1p-10f);
static_assert(float(std::numeric_limits<ordo::half>::min()) == 0x1p-14f);
static_assert(float(std::numeric_limits<ordo::half>::max()) == 65504.0f);
static_assert(float(std::numeric_limits<ordo::half>::lowest()) == -65504.0f);
static_assert(float(std::numeric_limits<ordo::half>::denorm_min()) == 0x1p-24f);
static_assert(float(std::numeric_limits<ordo::bfloat16>::epsilon()) == 0x1p-7f);
static_assert(float(std::numeric_limits<ordo::bfloat16>::min()) == std::numeric_limits<float>::min());
static_assert(float(std::numeric_limits<ordo::bfloat16>::max()) == 0x1.fep127f);
static_assert(float(std::numeric_limits<ordo::bfloat16>::denorm_min()) == 0x1p-133f);
static_assert(std::numeric_limits<ordo::half>::max_exponent == 16 && std::numeric_limits<ordo::half>::min_exponent == -13);
static_assert(std::numeric_limits<ordo::bfloat16>::max_exponent == std::numeric_limits<float>::max_exponent);
static_assert(std::numeric_limits<ordo::bfloat16>::min_exponent == std::numeric_limits<float>::min_exponent);
static_assert(std::numeric_limits<ordo::half>::is_iec559 && !std::numeric_limits<ordo::bfloat16>::is_iec559);
// The overflow thresholds: half's largest finite value is 65504, and 65520 (half an ulp above) is
// a tie that rounds to the even neighbour, 2^16, which is infinity.
static_assert(ordo::half(65519.99f).bits() == 0x7bff && ordo::half(65520.0f).is_inf());
static_assert(ordo::half(65519.99999).bits() == 0x7bff && ordo::half(65520.0).is_inf());
static_assert(ordo::bfloat16(std::numeric_limits<float>::max()).is_inf());
static_assert(ordo::bfloat16(1e38f).bits() == 0x7e96);
// Known encodings.
static_assert(ordo::half(1.0f).bits() == 0x3c00 && ordo::half(-2.0f).bits() == 0xc000);
static_assert(ordo::half(0.1f).bits() == 0x2e66 && ordo::bfloat16(0.1f).bits() == 0x3dcd);
static_assert(ordo::bfloat16(1.0f).bits() == 0x3f80 && ordo::bfloat16(3.140625f).bits() == 0x4049);
static_assert(ordo::half(-0.0f).bits() == 0x8000 && ordo::bfloat16(-0.0f).bits() == 0x8000);
static_assert(ordo::half(0x1p-24f).bits() == 0x0001 && ordo::half(0x1p-25f).bits() == 0x0000);
static_assert(ordo::half(2048) == 2048.0f && ordo::half(2049).bits() == ordo::half(2048).bits());
static_assert(ordo::bfloat16(257) == 256.0f && ordo::bfloat16(259) == 260.0f);
// Compute types and the precision policy.
static_assert(std::is_same_v<ordo::compute_type_t<ordo::half>, float>);
static_assert(std::is_same_v<ordo::accumulate_type_t<ordo::bfloat16>, double>);
static_assert(std::is_same_v<ordo::precision<ordo::bfloat16>::compute_type, float>);
static_assert(std::is_same_v<ordo::precision<float, double>::storage_type, float>);
static_assert(ordo::holds_exactly_v<ordo::half, float> && ordo::holds_exactly_v<ordo::bfloat16, float>);
static_assert(!ordo::holds_exactly_v<float, ordo::bfloat16> && !ordo::holds_exactly_v<double, float>);
// half's exponent range fits float, bfloat16's precision fits half, but not its range.
static_assert(!ordo::holds_exactly_v<ordo::bfloat16, ordo::half> && !ordo::holds_exactly_v<ordo::half, ordo::bfloat16>);

// The value of a 16-bit pattern computed from its fields with ldexp: an oracle independent of the
// bit manipulation in float16.hpp.
template <int ExponentBits, int FractionBits>
double decode(unsigned bits) {
  const int bias = (1 << (ExponentBits - 1)) - 1;
  const unsigned exponent = (bits >> FractionBits) & ((1U << ExponentBits) - 1);
  const unsigned fraction = bits & ((1U << FractionBits) - 1);
  const double sign = (bits & 0x8000U) != 0 ? -1.0 : 1.0;
  if (exponent == (1U << ExponentBits) - 1) {
    return fraction == 0 ? sign * std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  }
  if (exponent == 0) return sign * std::ldexp(static_cast<double>(fraction), 1 - bias - FractionBits);
  return sign * std::ldexp(static_cast<double>(fraction | (1U << FractionBits)),
                           static_cast<int>(exponent) - bias - FractionBits);
}

template <class T>
struct format_of;
template <>
struct format_of<ordo::half> {
  static constexpr int exponent_bits = 5, fraction_bits = 10;
  static constexpr const char* name = "half";
};
template <>
struct format_of<ordo::bfloat16> {
  static constexpr int exponent_bits = 8, fraction_bits = 7;
  static constexpr const char* name = "bfloat16";
};

template <class T>
T from_bits(unsigned bits) {
  return T::from_bits(static_cast<std::uint16_t>(bits));
}

std::uint32_t bits_of(float f) { return __builtin_bit_cast(std::uint32_t, f); }

template <class T>
void check_round_trips() {
  using format = format_of<T>;
  constexpr unsigned quiet = 1U << (format::fraction_bits - 1);
  for (unsigned bits = 0; bits < 0x10000U; ++bits) {
    const T value = from_bits<T>(bits);
    const float f = value;
    const double expected = decode<format::exponent_bits, format::fraction_bits>(bits);
    if (std::isnan(expected)) {
      // NaN stays NaN: quieted, sign and payload kept.
      REQUIRE(std::isnan(f));
      REQUIRE(value.is_nan());
      REQUIRE(T(f).bits() == (bits | quiet));
      REQUIRE(T(static_cast<double>(f)).bits() == (bits | quiet));
      continue;
    }
    // 16-bit -> float is exact, and float or double -> 16-bit gives the pattern back.
    REQUIRE(static_cast<double>(f) == expected);
    REQUIRE(std::signbit(f) == ((bits & 0x8000U) != 0));
    REQUIRE(T(f).bits() == bits);
    REQUIRE(T(static_cast<double>(f)).bits() == bits);
  }
}

// Every rounding boundary: between neighbouring 16-bit values lo < hi (consecutive patterns; above
// the largest finite value, hi is the next power of two, whose pattern is infinity), the midpoint
// and the closest float and double either side of it. Below the midpoint is lo, above is hi, and
// the midpoint itself goes to the pattern whose last bit is 0. Negative values mirror.
template <class T>
void check_rounding_boundaries() {
  using format = format_of<T>;
  constexpr unsigned infinity = ((1U << format::exponent_bits) - 1) << format::fraction_bits;
  const double above_max = std::ldexp(1.0, (1 << (format::exponent_bits - 1)));
  for (unsigned lo = 0; lo < infinity; ++lo) {
    const unsigned hi = lo + 1;
    const double lo_value = decode<format::exponent_bits, format::fraction_bits>(lo);
    const double hi_value = hi == infinity ? above_max : decode<format::exponent_bits, format::fraction_bits>(hi);
    const double mid = (lo_value + hi_value) / 2;  // exact: both have few significant bits
    const unsigned tie = (lo & 1U) == 0 ? lo : hi;
    const float mid_f = static_cast<float>(mid);
    REQUIRE(static_cast<double>(mid_f) == mid);  // midpoints are floats too
    for (const unsigned sign : {0U, 0x8000U}) {
      const double s = sign != 0 ? -1.0 : 1.0;
      const float below_f = std::nextafter(mid_f, 0.0f), above_f = std::nextafter(mid_f, 2 * mid_f);
      const double below_d = std::nextafter(mid, 0.0), above_d = std::nextafter(mid, 2 * mid);
      INFO(format::name, " lo=", lo, " hi=", hi);
      REQUIRE(T(static_cast<float>(s * lo_value)).bits() == (sign | lo));
      REQUIRE(T(static_cast<float>(s) * below_f).bits() == (sign | lo));
      REQUIRE(T(static_cast<float>(s) * mid_f).bits() == (sign | tie));
      REQUIRE(T(static_cast<float>(s) * above_f).bits() == (sign | hi));
      REQUIRE(T(s * below_d).bits() == (sign | lo));
      REQUIRE(T(s * mid).bits() == (sign | tie));
      REQUIRE(T(s * above_d).bits() == (sign | hi));
    }
  }
  // Beyond the overflow threshold everything is infinity; infinity stays infinity.
  for (const float big : {std::numeric_limits<float>::max(), std::numeric_limits<float>::infinity()}) {
    CHECK(T(big).bits() == infinity);
    CHECK(T(-big).bits() == (0x8000U | infinity));
    CHECK(T(static_cast<double>(big)).bits() == infinity);
  }
  CHECK(T(1e300).bits() == infinity);
  CHECK(T(-1e-300).bits() == 0x8000U);
  CHECK(T(std::numeric_limits<double>::denorm_min()).bits() == 0U);
}

// A peer's casts: numpy's float32 -> float16 and PyTorch's float32 -> bfloat16, written by
// tests/fixtures/float16/make_fixtures.py.
template <class T>
void check_against_peer(const std::string& file) {
  std::ifstream in(ordo_test::fixture_path("float16/" + file));
  REQUIRE(in.good());
  std::string line;
  int checked = 0, nans = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::uint32_t input = 0, expected = 0;
    fields >> std::hex >> input >> expected;
    REQUIRE(!fields.fail());
    const float x = __builtin_bit_cast(float, input);
    const T rounded(x);
    if (std::isnan(x)) {
      CHECK(rounded.is_nan());
      ++nans;
    } else {
      INFO(file, ": input ", line);
      REQUIRE(rounded.bits() == expected);
    }
    ++checked;
  }
  CHECK(checked > 5000);
  CHECK(nans > 0);
}

}  // namespace

TEST_CASE_TEMPLATE("every 16-bit pattern converts to float exactly and back", T, ordo::half, ordo::bfloat16) {
  check_round_trips<T>();
}

TEST_CASE_TEMPLATE("float and double round to nearest-even at every boundary", T, ordo::half, ordo::bfloat16) {
  check_rounding_boundaries<T>();
}

TEST_CASE("float -> half matches numpy's float16 casts") { check_against_peer<ordo::half>("half.txt"); }

TEST_CASE("float -> bfloat16 matches PyTorch's casts") { check_against_peer<ordo::bfloat16>("bfloat16.txt"); }

TEST_CASE("the limits and conversions hold at run time too") {
  // The static_asserts above, again from values the compiler does not see.
  volatile float overflow = 65520.0f, just_below = 65519.99f, tenth = 0.1f;
  CHECK(ordo::half(overflow).is_inf());
  CHECK(ordo::half(just_below).bits() == 0x7bff);
  CHECK(ordo::half(tenth).bits() == 0x2e66);
  CHECK(ordo::bfloat16(tenth).bits() == 0x3dcd);
  CHECK(bits_of(std::numeric_limits<ordo::half>::epsilon()) == bits_of(0x1p-10f));
  CHECK(bits_of(std::numeric_limits<ordo::bfloat16>::denorm_min()) == bits_of(0x1p-133f));
  CHECK(std::isnan(static_cast<float>(std::numeric_limits<ordo::half>::signaling_NaN())));
  CHECK(std::numeric_limits<ordo::bfloat16>::quiet_NaN().is_nan());
  CHECK(std::numeric_limits<ordo::half>::infinity().is_inf());
  // Arithmetic is float arithmetic; comparisons are IEEE comparisons.
  const ordo::half a(1.5f), b(2.25f);
  CHECK(a + b == 3.75f);
  CHECK(ordo::half(-0.0f) == ordo::half(0.0f));
  CHECK(std::numeric_limits<ordo::half>::quiet_NaN() != std::numeric_limits<ordo::half>::quiet_NaN());
  CHECK(ordo::to_storage<ordo::bfloat16>(ordo::to_compute(ordo::bfloat16(3.0f))).bits() == 0x4040);
  // Rounding a double directly is not the same as rounding it to float first: 1 + 2^-11 + 2^-40 is
  // above half's midpoint 1 + 2^-11, but float rounds it onto the midpoint, which then ties to 1.
  const double just_above_midpoint = 1.0 + 0x1p-11 + 0x1p-40;
  CHECK(ordo::half(just_above_midpoint).bits() == 0x3c01);
  CHECK(ordo::half(static_cast<float>(just_above_midpoint)).bits() == 0x3c00);
}
