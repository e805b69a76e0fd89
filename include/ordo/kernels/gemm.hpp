#ifndef ORDO_KERNELS_GEMM_HPP
#define ORDO_KERNELS_GEMM_HPP

// ordo::gemm(space, alpha, A, B, beta, C): C = alpha * A * B + beta * C on any Kokkos execution
// space, dispatched to BLAS on host spaces, cuBLAS on Kokkos::Cuda, and a portable team-tiled
// Kokkos kernel otherwise (16-bit storage, and float or double computed in another type, always).

#include <ordo/core/detail/shape_text.hpp>
#include <ordo/core/precision.hpp>
#include <ordo/kernels/detail/blas_gemm.hpp>
#include <ordo/kernels/detail/blas_gemv.hpp>
#include <ordo/kernels/detail/blas_operand.hpp>
#include <ordo/kernels/detail/cublas_gemm.hpp>
#include <ordo/kernels/detail/portable_gemm.hpp>
#include <ordo/kernels/detail/portable_gemv.hpp>
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

// A Kokkos Tools region for as long as it lives, when a tool is loaded.
struct profiling_region {
  bool active;
  explicit profiling_region(const std::string& name) : active(Kokkos::Profiling::profileLibraryLoaded()) {
    if (active) Kokkos::Profiling::pushRegion(name);
  }
  ~profiling_region() {
    if (active) Kokkos::Profiling::popRegion();
  }
  profiling_region(const profiling_region&) = delete;
  profiling_region& operator=(const profiling_region&) = delete;
};

// Announces each product to Kokkos Tools as a region "ordo::gemm MxKxN backend", so profilers
// (and ordo's tests) see the sequence of products an evaluation issues. A product that runs as a
// matrix-vector product, a dot product or BLAS's outer product opens a nested region "ordo::gemv",
// "ordo::dot" or "ordo::ger".
struct gemm_region : profiling_region {
  gemm_region(std::size_t m, std::size_t k, std::size_t n, gemm_backend backend)
      : profiling_region(Kokkos::Profiling::profileLibraryLoaded() ? gemm_region_name(m, k, n, backend)
                                                                   : std::string()) {}
};

// The routine host BLAS runs for a vector product: DOT only for a 1 x 1 double result
// (blas_gemv.hpp says why not for float).
template <class T>
const char* blas_vector_routine(vector_product kind) noexcept {
  return kind == vector_product::dot && std::is_same_v<T, double> ? "ordo::dot" : "ordo::gemv";
}

// The portable matrix-vector product for C with one row or one column.
template <class Compute, class ExecutionSpace, class AView, class BView, class CView>
void portable_vector_product(const ExecutionSpace& space, Compute alpha, const AView& a, const BView& b, Compute beta,
                             const CView& c) {
  constexpr launch_shape shape = default_launch_shape_v<ExecutionSpace>;
  if (c.extent(1) == 1) {
    portable_gemv<shape, Compute, false>(space, alpha, a, Kokkos::subview(b, Kokkos::ALL, 0), beta,
                                         Kokkos::subview(c, Kokkos::ALL, 0));
  } else {
    portable_gemv<shape, Compute, true>(space, alpha, b, Kokkos::subview(a, 0, Kokkos::ALL), beta,
                                        Kokkos::subview(c, 0, Kokkos::ALL));
  }
}

}  // namespace detail

namespace detail {

// ordo::gemm with products and sums in Compute (void: gemm_scalar_t of the Views' type). BLAS and
// cuBLAS take only float and double computed in their own type; everything else, 16-bit storage
// and precision<float, double> included, runs the portable kernel (a forced BLAS or cuBLAS path
// refuses it with the messages below).
template <class Compute, class ExecutionSpace, class AView, class BView, class CView>
void gemm_dispatch(const ExecutionSpace& space, gemm_compute_t<Compute, CView> alpha, const AView& a, const BView& b,
                   gemm_compute_t<Compute, CView> beta, const CView& c, gemm_backend backend) {
  using value_type = typename CView::non_const_value_type;
  using compute_type = gemm_compute_t<Compute, CView>;
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
  [[maybe_unused]] constexpr bool blas_types = blas_scalar_v<value_type> && std::is_same_v<compute_type, value_type>;
  if (a.extent(1) != b.extent(0) || c.extent(0) != a.extent(0) || c.extent(1) != b.extent(1)) {
    throw std::invalid_argument("ordo::gemm: A is " + shape_text(a.extent(0), a.extent(1)) + ", B is " +
                                shape_text(b.extent(0), b.extent(1)) + " and C is " +
                                shape_text(c.extent(0), c.extent(1)) + "; C = A B needs A m x k, B k x n, C m x n");
  }
  const std::size_t m = a.extent(0), k = a.extent(1), n = b.extent(1);
  // C with one row or one column: a matrix-vector product (or a dot product) on every backend.
  const vector_product vector_kind = vector_product_of(m, k, n);

#if defined(ORDO_FORCE_PORTABLE_GEMM)
  if (backend == gemm_backend::automatic) backend = gemm_backend::portable;
#endif

  if (backend == gemm_backend::automatic || backend == gemm_backend::blas) {
#if defined(ORDO_HAS_BLAS)
    if constexpr (is_host_space_v<ExecutionSpace> && blas_types) {
      // Announced only when BLAS takes the call, so that profilers see one region per product.
      if (blas_can_take(a, b, c)) {
        gemm_region region(m, k, n, gemm_backend::blas);
        space.fence();
        if (vector_kind != vector_product::none) {
          const profiling_region inner(blas_vector_routine<value_type>(vector_kind));
          if (try_blas_vector_product(alpha, a, b, beta, c)) return;
        }
        if (is_outer_product(m, k, n) && (beta == compute_type(0) || beta == compute_type(1))) {
          const profiling_region inner("ordo::ger");
          if (try_blas_outer_product(alpha, a, b, beta, c)) return;
        }
        try_blas_gemm(alpha, a, b, beta, c);
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
    if constexpr (std::is_same_v<ExecutionSpace, Kokkos::Cuda> && blas_types) {
      if (blas_can_take(a, b, c)) {
        gemm_region region(m, k, n, gemm_backend::cublas);
        if (vector_kind != vector_product::none) {
          const profiling_region inner("ordo::gemv");
          if (try_cublas_vector_product(space, alpha, a, b, beta, c)) return;
        }
        try_cublas_gemm(space, alpha, a, b, beta, c);
        return;
      }
    }
#endif
    if (backend == gemm_backend::cublas) {
      throw std::invalid_argument(
          "ordo::gemm: the cuBLAS backend needs Kokkos::Cuda, float or double, and a build with ORDO_HAS_CUBLAS");
    }
  }
  gemm_region region(m, k, n, gemm_backend::portable);
  if (vector_kind != vector_product::none) {
    const profiling_region inner("ordo::gemv");  // a 1 x 1 C too: the same kernel with one row
    portable_vector_product<compute_type>(space, alpha, a, b, beta, c);
    return;
  }
  portable_gemm<Compute>(space, alpha, a, b, beta, c);
}

}  // namespace detail

// C = alpha * A * B + beta * C for rank-2 Views (any layout) in memory ExecutionSpace can access.
// When beta == 0, C is not read. Throws std::invalid_argument if the extents do not conform.
// Asynchronous like a Kokkos kernel on the portable and cuBLAS paths; the BLAS path fences the
// space first and returns when done. Views of ordo::half or ordo::bfloat16 multiply and add in
// float (alpha and beta are floats) and round each element of C once.
template <class ExecutionSpace, class AView, class BView, class CView>
  requires(Kokkos::is_view<AView>::value && Kokkos::is_view<BView>::value && Kokkos::is_view<CView>::value)
void gemm(const ExecutionSpace& space, detail::gemm_scalar_t<typename CView::non_const_value_type> alpha,
          const AView& a, const BView& b, detail::gemm_scalar_t<typename CView::non_const_value_type> beta,
          const CView& c, gemm_backend backend = gemm_backend::automatic) {
  detail::gemm_dispatch<void>(space, alpha, a, b, beta, c, backend);
}

// The same with the pair named: Storage must be the Views' scalar type, and products and sums
// run in Compute (ordo::precision<float, double>: float data accumulated in double, one rounding
// per element of C).
template <class ExecutionSpace, class AView, class BView, class CView, class Storage, class Compute>
  requires(Kokkos::is_view<AView>::value && Kokkos::is_view<BView>::value && Kokkos::is_view<CView>::value)
void gemm(const ExecutionSpace& space, std::type_identity_t<Compute> alpha, const AView& a, const BView& b,
          std::type_identity_t<Compute> beta, const CView& c, precision<Storage, Compute>,
          gemm_backend backend = gemm_backend::automatic) {
  static_assert(std::is_same_v<typename CView::non_const_value_type, Storage>,
                "ordo::gemm(space, alpha, A, B, beta, C, ordo::precision<Storage, Compute>) requires Storage to be "
                "the scalar type of A, B and C");
  detail::gemm_dispatch<Compute>(space, alpha, a, b, beta, c, backend);
}

// The same for ordo::matrix operands, on their execution space.
template <any_matrix A, any_matrix B, any_matrix C>
void gemm(detail::gemm_scalar_t<typename std::remove_cvref_t<C>::value_type> alpha, const A& a, const B& b,
          detail::gemm_scalar_t<typename std::remove_cvref_t<C>::value_type> beta, const C& c,
          gemm_backend backend = gemm_backend::automatic) {
  gemm(typename std::remove_cvref_t<C>::execution_space{}, alpha, a.view(), b.view(), beta, c.view(), backend);
}

template <any_matrix A, any_matrix B, any_matrix C, class Storage, class Compute>
void gemm(std::type_identity_t<Compute> alpha, const A& a, const B& b, std::type_identity_t<Compute> beta, const C& c,
          precision<Storage, Compute> p, gemm_backend backend = gemm_backend::automatic) {
  gemm(typename std::remove_cvref_t<C>::execution_space{}, alpha, a.view(), b.view(), beta, c.view(), p, backend);
}

}  // namespace ordo

#endif
