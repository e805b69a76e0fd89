#ifndef ORDO_KERNELS_GEMM_HPP
#define ORDO_KERNELS_GEMM_HPP

// ordo::gemm(space, alpha, A, B, beta, C): C = alpha * A * B + beta * C on any Kokkos execution
// space, dispatched to BLAS on host spaces, cuBLAS on Kokkos::Cuda, and a portable team-tiled
// Kokkos kernel otherwise.

#include <ordo/core/detail/shape_text.hpp>
#include <ordo/kernels/detail/blas_gemm.hpp>
#include <ordo/kernels/detail/blas_operand.hpp>
#include <ordo/kernels/detail/cublas_gemm.hpp>
#include <ordo/kernels/detail/portable_gemm.hpp>
#include <ordo/kernels/execution.hpp>
#include <ordo/kernels/matrix.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace ordo {

// Which implementation ordo::gemm uses. automatic picks the fastest available for the space and
// scalar type; the others force a path (a forced BLAS or cuBLAS path that cannot serve the call
// throws std::invalid_argument).
enum class gemm_backend { automatic, blas, cublas, portable };

constexpr std::string_view to_string(gemm_backend backend) noexcept {
  switch (backend) {
    case gemm_backend::blas: return "blas";
    case gemm_backend::cublas: return "cublas";
    case gemm_backend::portable: return "portable";
    default: return "automatic";
  }
}

namespace detail {

inline std::string gemm_region_name(std::size_t m, std::size_t k, std::size_t n, gemm_backend backend) {
  std::string name = "ordo::gemm ";
  name += std::to_string(m);
  name += 'x';
  name += std::to_string(k);
  name += 'x';
  name += std::to_string(n);
  name += ' ';
  name += to_string(backend);
  return name;
}

// Announces each product to Kokkos Tools as a region "ordo::gemm MxKxN backend", so profilers
// (and ordo's tests) see the sequence of products an evaluation issues.
struct gemm_region {
  bool active;
  gemm_region(std::size_t m, std::size_t k, std::size_t n, gemm_backend backend)
      : active(Kokkos::Profiling::profileLibraryLoaded()) {
    if (active) Kokkos::Profiling::pushRegion(gemm_region_name(m, k, n, backend));
  }
  ~gemm_region() {
    if (active) Kokkos::Profiling::popRegion();
  }
  gemm_region(const gemm_region&) = delete;
  gemm_region& operator=(const gemm_region&) = delete;
};

}  // namespace detail

// C = alpha * A * B + beta * C for rank-2 Views (any layout) in memory ExecutionSpace can access.
// When beta == 0, C is not read. Throws std::invalid_argument if the extents do not conform.
// Asynchronous like a Kokkos kernel on the portable and cuBLAS paths; the BLAS path fences the
// space first and returns when done.
template <class ExecutionSpace, class AView, class BView, class CView>
  requires(Kokkos::is_view<AView>::value && Kokkos::is_view<BView>::value && Kokkos::is_view<CView>::value)
void gemm(const ExecutionSpace& space, typename CView::non_const_value_type alpha, const AView& a, const BView& b,
          typename CView::non_const_value_type beta, const CView& c, gemm_backend backend = gemm_backend::automatic) {
  using value_type = typename CView::non_const_value_type;
  static_assert(AView::rank == 2 && BView::rank == 2 && CView::rank == 2,
                "ordo::gemm(space, alpha, A, B, beta, C) requires rank-2 Views");
  static_assert(std::is_same_v<typename AView::non_const_value_type, value_type> &&
                    std::is_same_v<typename BView::non_const_value_type, value_type>,
                "ordo::gemm(space, alpha, A, B, beta, C) requires A, B and C of one scalar type");
  static_assert(!std::is_const_v<typename CView::value_type>, "ordo::gemm: C must be writable");
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, typename AView::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecutionSpace, typename BView::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecutionSpace, typename CView::memory_space>::accessible,
                "ordo::gemm: the execution space must be able to access the memory of A, B and C");
  if (a.extent(1) != b.extent(0) || c.extent(0) != a.extent(0) || c.extent(1) != b.extent(1)) {
    throw std::invalid_argument("ordo::gemm: A is " + detail::shape_text(a.extent(0), a.extent(1)) + ", B is " +
                                detail::shape_text(b.extent(0), b.extent(1)) + " and C is " +
                                detail::shape_text(c.extent(0), c.extent(1)) + "; C = A B needs A m x k, B k x n, C m x n");
  }
  const std::size_t m = a.extent(0), k = a.extent(1), n = b.extent(1);

#if defined(ORDO_FORCE_PORTABLE_GEMM)
  if (backend == gemm_backend::automatic) backend = gemm_backend::portable;
#endif

  if (backend == gemm_backend::automatic || backend == gemm_backend::blas) {
#if defined(ORDO_HAS_BLAS)
    if constexpr (is_host_space_v<ExecutionSpace> && detail::blas_scalar_v<value_type>) {
      // Announced only when BLAS takes the call, so that profilers see one region per product.
      if (detail::blas_can_take(a, b, c)) {
        detail::gemm_region region(m, k, n, gemm_backend::blas);
        space.fence();
        detail::try_blas_gemm(alpha, a, b, beta, c);
        return;
      }
    }
#endif
    if (backend == gemm_backend::blas) {
      throw std::invalid_argument(
          "ordo::gemm: the BLAS backend needs a host space, float or double, layouts with a unit stride, and a "
          "build that found BLAS (ORDO_HAS_BLAS)");
    }
  }
  if (backend == gemm_backend::automatic || backend == gemm_backend::cublas) {
#if defined(KOKKOS_ENABLE_CUDA) && defined(ORDO_HAS_CUBLAS)
    if constexpr (std::is_same_v<ExecutionSpace, Kokkos::Cuda> && detail::blas_scalar_v<value_type>) {
      if (detail::blas_can_take(a, b, c)) {
        detail::gemm_region region(m, k, n, gemm_backend::cublas);
        detail::try_cublas_gemm(space, alpha, a, b, beta, c);
        return;
      }
    }
#endif
    if (backend == gemm_backend::cublas) {
      throw std::invalid_argument(
          "ordo::gemm: the cuBLAS backend needs Kokkos::Cuda, float or double, and a build with ORDO_HAS_CUBLAS");
    }
  }
  detail::gemm_region region(m, k, n, gemm_backend::portable);
  detail::portable_gemm(space, alpha, a, b, beta, c);
}

// The same for ordo::matrix operands, on their execution space.
template <any_matrix A, any_matrix B, any_matrix C>
void gemm(typename std::remove_cvref_t<C>::value_type alpha, const A& a, const B& b,
          typename std::remove_cvref_t<C>::value_type beta, const C& c, gemm_backend backend = gemm_backend::automatic) {
  gemm(typename std::remove_cvref_t<C>::execution_space{}, alpha, a.view(), b.view(), beta, c.view(), backend);
}

}  // namespace ordo

#endif
