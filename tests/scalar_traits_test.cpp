#include <ordo/core/scalar_traits.hpp>

#include <doctest/doctest.h>

#include <type_traits>

namespace {

// A storage type of the user's own, as a 16-bit type will be: it stores a float truncated to
// whole numbers (so a rounding on store is visible) and converts to float exactly.
struct whole_float {
  float value = 0;
  constexpr whole_float() = default;
  constexpr explicit whole_float(float v) : value(static_cast<float>(static_cast<long long>(v))) {}
  constexpr operator float() const { return value; }
};

struct not_convertible {};

}  // namespace

template <>
struct ordo::scalar_traits<whole_float> {
  using storage_type = whole_float;
  using compute_type = float;
  using accumulate_type = double;
};

template <>
struct ordo::scalar_traits<not_convertible> {
  using storage_type = not_convertible;
  using compute_type = float;
  using accumulate_type = double;
};

TEST_CASE("scalar traits name the compute and accumulate types of a storage type") {
  static_assert(ordo::floating_storage<float> && ordo::floating_storage<double>);
  static_assert(ordo::floating_storage<const float>);
  static_assert(!ordo::floating_storage<int> && !ordo::floating_storage<long double>);
  static_assert(std::is_same_v<ordo::compute_type_t<float>, float>);
  static_assert(std::is_same_v<ordo::compute_type_t<double>, double>);
  static_assert(std::is_same_v<ordo::accumulate_type_t<float>, double>);
  static_assert(std::is_same_v<ordo::accumulate_type_t<const double>, double>);
  // A user's specialization makes a type usable; one that does not convert to its compute type is refused.
  static_assert(ordo::floating_storage<whole_float>);
  static_assert(!ordo::floating_storage<not_convertible>);
  static_assert(std::is_same_v<ordo::compute_type_t<whole_float>, float>);
  static_assert(ordo::to_compute(whole_float(2.0f)) == 2.0f);
  static_assert(ordo::to_storage<whole_float>(2.75f).value == 2.0f);

  // The same conversions at run time, from values the compiler does not know.
  volatile float input = 5.5f;
  const float in = input;
  CHECK(ordo::to_storage<whole_float>(in).value == 5.0f);
  CHECK(ordo::to_compute(ordo::to_storage<whole_float>(in)) == 5.0f);
  CHECK(ordo::to_storage<float>(in) == 5.5f);
  CHECK(ordo::to_compute(in) == 5.5f);
}
