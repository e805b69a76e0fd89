#ifndef ORDO_KERNELS_DETAIL_BACKENDS_PORTABLE_HPP
#define ORDO_KERNELS_DETAIL_BACKENDS_PORTABLE_HPP

// ordo::gemm's portable backend (kernels/gemm_backend.hpp says what a backend declares): ordo's
// own Kokkos kernels, on every space, every scalar type and every layout; the last backend
// `automatic` tries, so it takes every call the others refuse.

#include <ordo/kernels/detail/blas_gemv.hpp>
#include <ordo/kernels/detail/gemm_regions.hpp>
#include <ordo/kernels/detail/portable_gemm.hpp>
#include <ordo/kernels/detail/portable_gemv.hpp>
#include <ordo/kernels/gemm_backend.hpp>
#include <ordo/platform/launch_shape.hpp>

#include <Kokkos_Core.hpp>

#include <string_view>

namespace ordo {

template <>
struct gemm_backend_traits<gemm_backend::portable> {
  static constexpr bool available = true;
  static constexpr std::string_view display_name = "portable";
  static constexpr std::string_view requirement = "nothing";

  template <class Space, class Value, class Compute>
  static constexpr bool serves = true;

  template <class A, class B, class C>
  static bool can_take(const A&, const B&, const C&) {
    return true;
  }

  template <class Space, class Compute, class A, class B, class C>
  static void run(const Space& space, Compute alpha, const A& a, const B& b, Compute beta, const C& c,
                  detail::vector_product kind) {
    if (kind != detail::vector_product::none) {
      // C with one row or one column (a 1 x 1 C too: the same kernel with one row).
      const detail::profiling_region inner("ordo::gemv");
      constexpr detail::launch_shape shape = detail::default_launch_shape_v<Space>;
      if (c.extent(1) == 1) {
        detail::portable_gemv<shape, Compute, false>(space, alpha, a, Kokkos::subview(b, Kokkos::ALL, 0), beta,
                                                     Kokkos::subview(c, Kokkos::ALL, 0));
      } else {
        detail::portable_gemv<shape, Compute, true>(space, alpha, b, Kokkos::subview(a, 0, Kokkos::ALL), beta,
                                                    Kokkos::subview(c, 0, Kokkos::ALL));
      }
      return;
    }
    detail::portable_gemm<Compute>(space, alpha, a, b, beta, c);
  }
};

}  // namespace ordo

#endif
