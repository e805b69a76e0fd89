#ifndef ORDO_KERNELS_DETAIL_BACKENDS_BLAS_HPP
#define ORDO_KERNELS_DETAIL_BACKENDS_BLAS_HPP

// ordo::gemm's host BLAS backend (kernels/gemm_backend.hpp says what a backend declares): float
// and double on host spaces, through the reference BLAS interface (blas_gemm.hpp, blas_gemv.hpp),
// in builds that found a BLAS (ORDO_HAS_BLAS).

#include <ordo/kernels/detail/blas_gemm.hpp>
#include <ordo/kernels/detail/blas_gemv.hpp>
#include <ordo/kernels/detail/blas_operand.hpp>
#include <ordo/kernels/detail/gemm_regions.hpp>
#include <ordo/kernels/gemm_backend.hpp>
#include <ordo/platform/execution.hpp>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace ordo {

template <>
struct gemm_backend_traits<gemm_backend::blas> {
#if defined(ORDO_HAS_BLAS)
  static constexpr bool available = true;
#else
  static constexpr bool available = false;
#endif
  static constexpr std::string_view display_name = "BLAS";
  static constexpr std::string_view requirement =
      "a host space, float or double, layouts with a unit stride, and a build that found BLAS (ORDO_HAS_BLAS)";

  template <class Space, class Value, class Compute>
  static constexpr bool serves =
      is_host_space_v<Space> && detail::blas_scalar_v<Value> && std::is_same_v<Compute, Value>;

  template <class A, class B, class C>
  static bool can_take(const A& a, const B& b, const C& c) {
    return detail::blas_can_take(a, b, c);
  }

  // BLAS runs on the calling thread, so the space's earlier work on A, B and C is fenced first.
  template <class Space, class T, class A, class B, class C>
  static void run([[maybe_unused]] const Space& space, [[maybe_unused]] T alpha, [[maybe_unused]] const A& a,
                  [[maybe_unused]] const B& b, [[maybe_unused]] T beta, [[maybe_unused]] const C& c,
                  [[maybe_unused]] detail::vector_product kind) {
#if defined(ORDO_HAS_BLAS)
    space.fence();
    const std::size_t m = a.extent(0), k = a.extent(1), n = b.extent(1);
    if (kind != detail::vector_product::none) {
      // DOT only for a 1 x 1 double result (blas_gemv.hpp says why not for float).
      const detail::profiling_region inner(
          kind == detail::vector_product::dot && std::is_same_v<T, double> ? "ordo::dot" : "ordo::gemv");
      if (detail::try_blas_vector_product(alpha, a, b, beta, c)) return;
    }
    if (detail::is_outer_product(m, k, n) && (beta == T(0) || beta == T(1))) {
      const detail::profiling_region inner("ordo::ger");
      if (detail::try_blas_outer_product(alpha, a, b, beta, c)) return;
    }
    detail::try_blas_gemm(alpha, a, b, beta, c);
#endif
  }
};

}  // namespace ordo

#endif
