#ifndef ORDO_KERNELS_GEMM_HPP
#define ORDO_KERNELS_GEMM_HPP

// ordo::gemm(space, alpha, A, B, beta, C): C = alpha * A * B + beta * C on any Kokkos execution
// space, dispatched to BLAS on host spaces, cuBLAS on Kokkos::Cuda, and a portable team-tiled
// Kokkos kernel otherwise (16-bit storage, and float or double computed in another type, always).

#include <ordo/core/precision.hpp>
#include <ordo/kernels/detail/backends/blas.hpp>
#include <ordo/kernels/detail/backends/cublas.hpp>
#include <ordo/kernels/detail/backends/portable.hpp>
#include <ordo/kernels/detail/blas_gemv.hpp>
#include <ordo/kernels/detail/gemm_regions.hpp>
#include <ordo/kernels/detail/portable_gemm.hpp>
#include <ordo/kernels/gemm_backend.hpp>
#include <ordo/kernels/matrix.hpp>
#include <ordo/platform/shape_text.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace ordo {

namespace detail {

template <gemm_backend... Backends>
struct gemm_backend_list {};

// The backends `automatic` tries, in this order (kernels/gemm_backend.hpp); the portable kernel,
// last, takes every call. A new backend: its header under kernels/detail/backends/, included
// above, and its name here.
using automatic_gemm_backends = gemm_backend_list<gemm_backend::blas, gemm_backend::cublas, gemm_backend::portable>;

// A, B and C as every backend receives them: unmanaged, A and B const, with the caller's layout,
// so that the dispatch and the kernels are instantiated once per scalar type, layout and space,
// not once per View type (a subview, a const View, an ordo::matrix's View).
template <class View>
using gemm_input_t = Kokkos::View<const typename View::non_const_value_type**, typename View::array_layout,
                                  typename View::memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class View>
using gemm_output_t = Kokkos::View<typename View::non_const_value_type**, typename View::array_layout,
                                   typename View::memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// Backend takes the call if its traits serve these types and its can_take these operands.
template <gemm_backend Backend, class Compute, class Space, class A, class B, class C>
bool try_gemm_backend([[maybe_unused]] const Space& space, [[maybe_unused]] Compute alpha,
                      [[maybe_unused]] const A& a, [[maybe_unused]] const B& b, [[maybe_unused]] Compute beta,
                      [[maybe_unused]] const C& c, [[maybe_unused]] vector_product kind) {
  using traits = gemm_backend_traits<Backend>;
  if constexpr (traits::available && traits::template serves<Space, typename C::non_const_value_type, Compute>) {
    if (!traits::can_take(a, b, c)) return false;
    gemm_region region(a.extent(0), a.extent(1), b.extent(1), Backend);  // announced only when taken
    traits::run(space, alpha, a, b, beta, c, kind);
    return true;
  } else {
    return false;
  }
}

// The first backend of the list that takes the call (automatic), or the requested one, which
// must take it.
template <class Compute, class Space, class A, class B, class C, gemm_backend... Backends>
void run_gemm_backends(gemm_backend_list<Backends...>, gemm_backend requested, const Space& space, Compute alpha,
                       const A& a, const B& b, Compute beta, const C& c) {
  const vector_product kind = vector_product_of(a.extent(0), a.extent(1), b.extent(1));
  if (requested == gemm_backend::automatic) {
    if ((try_gemm_backend<Backends>(space, alpha, a, b, beta, c, kind) || ...)) return;
    throw std::logic_error("ordo::gemm: no backend took the call (the portable backend takes every call)");
  }
  bool taken = false;
  std::string refusal;
  const auto try_requested = [&]<gemm_backend Backend>() {
    if (Backend != requested) return false;
    taken = try_gemm_backend<Backend>(space, alpha, a, b, beta, c, kind);
    if (!taken) {
      refusal = "ordo::gemm: the " + std::string(gemm_backend_traits<Backend>::display_name) + " backend needs " +
                std::string(gemm_backend_traits<Backend>::requirement);
    }
    return true;
  };
  (try_requested.template operator()<Backends>() || ...);
  if (!taken) throw std::invalid_argument(refusal);
}

// ordo::gemm with products and sums in Compute (void: gemm_scalar_t of the Views' type). BLAS and
// cuBLAS take only float and double computed in their own type; everything else, 16-bit storage
// and precision<float, double> included, runs the portable kernel (a forced BLAS or cuBLAS path
// refuses it with the messages of their traits).
template <class Compute, class ExecutionSpace, class AView, class BView, class CView>
void gemm_dispatch(const ExecutionSpace& space, gemm_compute_t<Compute, CView> alpha, const AView& a, const BView& b,
                   gemm_compute_t<Compute, CView> beta, const CView& c, gemm_backend backend) {
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
    throw std::invalid_argument("ordo::gemm: A is " + shape_text(a.extent(0), a.extent(1)) + ", B is " +
                                shape_text(b.extent(0), b.extent(1)) + " and C is " +
                                shape_text(c.extent(0), c.extent(1)) + "; C = A B needs A m x k, B k x n, C m x n");
  }
#if defined(ORDO_FORCE_PORTABLE_GEMM)
  if (backend == gemm_backend::automatic) backend = gemm_backend::portable;
#endif
  run_gemm_backends<gemm_compute_t<Compute, CView>>(automatic_gemm_backends{}, backend, space, alpha,
                                                    gemm_input_t<AView>(a), gemm_input_t<BView>(b), beta,
                                                    gemm_output_t<CView>(c));
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
