#ifndef ORDO_CORE_SCALAR_TRAITS_HPP
#define ORDO_CORE_SCALAR_TRAITS_HPP

// The one place where a floating-point storage type meets the types ordo's kernels compute and
// accumulate it in. Kernels ask for compute_type_t<T> and accumulate_type_t<T> instead of naming
// float or double, so a 16-bit storage type becomes usable by specializing scalar_traits:
//
//   template <> struct ordo::scalar_traits<my_half> {
//     using storage_type = my_half;      // what Views hold
//     using compute_type = float;        // what element-wise arithmetic runs in
//     using accumulate_type = double;    // what statistics and sums are accumulated in
//     static constexpr const char* name = "my_half";  // optional: how error messages name it
//   };
//
// Converting storage -> compute must be exact and compute -> storage must round once (to nearest
// even); both are plain conversions (static_cast) of the storage type.

#include <ordo/core/config.hpp>

#include <concepts>
#include <type_traits>

namespace ordo {

// Not a floating-point storage type ordo knows: no members.
template <class T>
struct scalar_traits {};

template <>
struct scalar_traits<float> {
  using storage_type = float;
  using compute_type = float;
  using accumulate_type = double;  // batch norm's statistics; reductions choose per policy
  static constexpr const char* name = "float";
};

template <>
struct scalar_traits<double> {
  using storage_type = double;
  using compute_type = double;
  using accumulate_type = double;
  static constexpr const char* name = "double";
};

// A type that scalar_traits describes: its compute type is float or double, it converts to it
// and back.
template <class T>
concept floating_storage = requires {
  typename scalar_traits<std::remove_cv_t<T>>::storage_type;
  typename scalar_traits<std::remove_cv_t<T>>::compute_type;
  typename scalar_traits<std::remove_cv_t<T>>::accumulate_type;
} && std::floating_point<typename scalar_traits<std::remove_cv_t<T>>::compute_type> &&
    std::convertible_to<std::remove_cv_t<T>, typename scalar_traits<std::remove_cv_t<T>>::compute_type>;

template <floating_storage T>
using compute_type_t = typename scalar_traits<std::remove_cv_t<T>>::compute_type;

template <floating_storage T>
using accumulate_type_t = typename scalar_traits<std::remove_cv_t<T>>::accumulate_type;

// How error messages name a scalar type: scalar_traits' `name` where it has one.
template <class T>
constexpr const char* scalar_name() {
  if constexpr (requires { scalar_traits<std::remove_cv_t<T>>::name; }) {
    return scalar_traits<std::remove_cv_t<T>>::name;
  } else {
    return "another scalar type";
  }
}

// The compute type of a storage type, and Otherwise (T itself unless given) for any other type:
// what a reduction or a GEMM of T values works in, and the type an entry point passes on so that
// its own static_assert, not a substitution failure, says what is wrong with a type.
template <class T, class Otherwise = T>
struct compute_type_or {
  using type = Otherwise;
};
template <floating_storage T, class Otherwise>
struct compute_type_or<T, Otherwise> {
  using type = compute_type_t<T>;
};
template <class T, class Otherwise = T>
using compute_type_or_t = typename compute_type_or<T, Otherwise>::type;

// Storage -> compute, exact.
template <floating_storage T>
ORDO_HOST_DEVICE constexpr compute_type_t<T> to_compute(T value) {
  return static_cast<compute_type_t<T>>(value);
}

// Compute -> storage, rounded once. Takes the compute type only: a double rounded to float and
// then to a 16-bit type would be rounded twice, which is not always the nearest value.
template <floating_storage T>
ORDO_HOST_DEVICE constexpr std::remove_cv_t<T> to_storage(std::type_identity_t<compute_type_t<T>> value) {
  return static_cast<std::remove_cv_t<T>>(value);
}

}  // namespace ordo

#endif
