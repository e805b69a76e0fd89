#ifndef ORDO_CORE_PRECISION_HPP
#define ORDO_CORE_PRECISION_HPP

// ordo::precision<Storage, Compute>: the pair a mixed-precision kernel works with. Storage is what
// Views hold, Compute what every multiply-add and intermediate runs in; results are rounded to
// Storage once, on store.
//
//   ordo::multiply(a, b, c, ordo::precision<ordo::bfloat16, float>{});   // bf16 in, float FMAs
//   ordo::precision<float, double>                                       // float data, double work
//
// Compute defaults to scalar_traits' compute type (float for both 16-bit types).

#include <ordo/core/float16.hpp>
#include <ordo/core/scalar_traits.hpp>

#include <concepts>
#include <limits>
#include <type_traits>

namespace ordo {

// Compute holds every value of Storage exactly: at least as many significand digits and as wide
// an exponent range (subnormals included, which the wider range covers).
template <class Storage, class Compute>
inline constexpr bool holds_exactly_v =
    std::numeric_limits<Compute>::digits >= std::numeric_limits<Storage>::digits &&
    std::numeric_limits<Compute>::max_exponent >= std::numeric_limits<Storage>::max_exponent &&
    std::numeric_limits<Compute>::min_exponent - std::numeric_limits<Compute>::digits <=
        std::numeric_limits<Storage>::min_exponent - std::numeric_limits<Storage>::digits;

// Compute defaults to Storage's compute type, or void for a type that is not a storage type (so
// that precision's own static_assert, not a substitution failure, reports it).
template <class Storage, class Compute = compute_type_or_t<Storage, void>>
struct precision {
  static_assert(floating_storage<Storage>,
                "ordo::precision<Storage, Compute> requires Storage to be float, double, ordo::half, ordo::bfloat16 "
                "or a type ordo::scalar_traits describes");
  static_assert(std::is_floating_point_v<Compute>, "ordo::precision<Storage, Compute> requires Compute to be float or double");
  static_assert(!std::is_floating_point_v<Compute> || holds_exactly_v<Storage, Compute>,
                "ordo::precision<Storage, Compute> requires Compute to hold every Storage value exactly (as "
                "many digits and as wide an exponent range): float for half/bfloat16, float or double for "
                "float, double for double");
  using storage_type = Storage;
  using compute_type = Compute;
};

template <class P>
inline constexpr bool is_precision_v = false;
template <class Storage, class Compute>
inline constexpr bool is_precision_v<precision<Storage, Compute>> = true;

template <class P>
concept precision_policy = is_precision_v<std::remove_cvref_t<P>>;

// The default pair of a storage type.
template <floating_storage T>
using default_precision_t = precision<std::remove_cv_t<T>>;

}  // namespace ordo

#endif
