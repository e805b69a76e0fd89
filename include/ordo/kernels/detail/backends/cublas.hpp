#ifndef ORDO_KERNELS_DETAIL_BACKENDS_CUBLAS_HPP
#define ORDO_KERNELS_DETAIL_BACKENDS_CUBLAS_HPP

// ordo::gemm's cuBLAS backend (kernels/gemm_backend.hpp says what a backend declares): float and
// double on Kokkos::Cuda, on the space's stream (cublas_gemm.hpp), in CUDA builds that found
// cuBLAS (ORDO_HAS_CUBLAS).

#include <ordo/kernels/detail/blas_gemv.hpp>
#include <ordo/kernels/detail/blas_operand.hpp>
#include <ordo/kernels/detail/cublas_gemm.hpp>
#include <ordo/kernels/detail/gemm_regions.hpp>
#include <ordo/kernels/gemm_backend.hpp>

#include <Kokkos_Core.hpp>

#include <string_view>
#include <type_traits>

namespace ordo {

template <>
struct gemm_backend_traits<gemm_backend::cublas> {
#if defined(KOKKOS_ENABLE_CUDA) && defined(ORDO_HAS_CUBLAS)
  static constexpr bool available = true;
  template <class Space, class Value, class Compute>
  static constexpr bool serves =
      std::is_same_v<Space, Kokkos::Cuda> && detail::blas_scalar_v<Value> && std::is_same_v<Compute, Value>;
#else
  static constexpr bool available = false;
  template <class Space, class Value, class Compute>
  static constexpr bool serves = false;
#endif
  static constexpr std::string_view display_name = "cuBLAS";
  static constexpr std::string_view requirement =
      "Kokkos::Cuda, float or double, and a build with ORDO_HAS_CUBLAS";

  template <class A, class B, class C>
  static bool can_take(const A& a, const B& b, const C& c) {
    return detail::blas_can_take(a, b, c);
  }

  template <class Space, class T, class A, class B, class C>
  static void run([[maybe_unused]] const Space& space, [[maybe_unused]] T alpha, [[maybe_unused]] const A& a,
                  [[maybe_unused]] const B& b, [[maybe_unused]] T beta, [[maybe_unused]] const C& c,
                  [[maybe_unused]] detail::vector_product kind) {
#if defined(KOKKOS_ENABLE_CUDA) && defined(ORDO_HAS_CUBLAS)
    if (kind != detail::vector_product::none) {
      const detail::profiling_region inner("ordo::gemv");
      if (detail::try_cublas_vector_product(space, alpha, a, b, beta, c)) return;
    }
    detail::try_cublas_gemm(space, alpha, a, b, beta, c);
#endif
  }
};

}  // namespace ordo

#endif
