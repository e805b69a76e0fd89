#ifndef ORDO_KERNELS_GEMM_BACKEND_HPP
#define ORDO_KERNELS_GEMM_BACKEND_HPP

// Which implementation ordo::gemm uses, and how an implementation declares itself.
//
// A backend (host BLAS, cuBLAS, ordo's portable kernel; next rocBLAS or oneMKL) is one header
// under kernels/detail/backends/ that specializes gemm_backend_traits<Backend>, as Kokkos Kernels
// declares its TPLs, plus its name in gemm.hpp's list of the backends `automatic` tries:
//
//   template <> struct gemm_backend_traits<gemm_backend::blas> {
//     static constexpr bool available;               // compiled into this build (its library found)
//     static constexpr std::string_view requirement; // what it needs: the error of a forced call it refuses
//     template <class Space, class Value, class Compute>
//     static constexpr bool serves;                  // the calls it takes, by type
//     static bool can_take(const A&, const B&, const C&);   // ... and by the operands' strides
//     static void run(const Space&, Compute alpha, const A&, const B&, Compute beta, const C&,
//                     vector_product kind);          // C = alpha A B + beta C, asynchronous on space
//   };
//
// A, B and C reach a backend as canonical Views (gemm.hpp): unmanaged, A and B const, so a
// backend is instantiated once per scalar type, layout and execution space.

#include <string_view>

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

template <gemm_backend Backend>
struct gemm_backend_traits;

}  // namespace ordo

#endif
