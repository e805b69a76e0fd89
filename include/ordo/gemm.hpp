#ifndef ORDO_GEMM_HPP
#define ORDO_GEMM_HPP

// ordo::gemm(space, alpha, A, B, beta, C): C = alpha * A * B + beta * C on any Kokkos execution
// space, dispatched to BLAS on host spaces, cuBLAS on Kokkos::Cuda, and a portable team-tiled
// Kokkos kernel otherwise.

#include <ordo/detail/blas.hpp>
#include <ordo/detail/portable_gemm.hpp>
#include <ordo/execution.hpp>
#include <ordo/matrix.hpp>

#include <Kokkos_Core.hpp>

#include <climits>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#if defined(KOKKOS_ENABLE_CUDA) && defined(ORDO_HAS_CUBLAS)
#include <cublas_v2.h>
#endif

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

// How a rank-2 View looks to column-major BLAS: its data is op(M) for a column-major M with
// leading dimension ld, where transposed says whether the View is the transpose of M.
struct blas_operand {
  bool usable = false;
  bool transposed = false;
  int ld = 1;
};

template <class View>
blas_operand describe_for_blas(const View& v) {
  blas_operand d;
  const std::size_t rows = v.extent(0), cols = v.extent(1);
  if (rows > INT_MAX || cols > INT_MAX) return d;
  const std::size_t s0 = static_cast<std::size_t>(v.stride(0)), s1 = static_cast<std::size_t>(v.stride(1));
  // A dimension of extent <= 1 has an arbitrary stride; only the other one matters.
  if (s0 == 1 || rows <= 1) {
    const std::size_t ld = cols <= 1 ? (rows > 1 ? rows : 1) : s1;
    if (ld >= rows && ld <= INT_MAX) return {true, false, static_cast<int>(ld > 0 ? ld : 1)};
  }
  if (s1 == 1 || cols <= 1) {
    const std::size_t ld = rows <= 1 ? (cols > 1 ? cols : 1) : s0;
    if (ld >= cols && ld <= INT_MAX) return {true, true, static_cast<int>(ld > 0 ? ld : 1)};
  }
  return d;
}

template <class T>
inline constexpr bool blas_scalar_v = std::is_same_v<T, float> || std::is_same_v<T, double>;

#if defined(ORDO_HAS_BLAS)
template <class T>
void call_blas_gemm(char ta, char tb, int m, int n, int k, T alpha, const T* a, int lda, const T* b, int ldb, T beta,
                    T* c, int ldc) {
  if constexpr (std::is_same_v<T, float>) {
    sgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
  } else {
    dgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
  }
}

// Returns false when the Views' layouts do not suit BLAS.
template <class AView, class BView, class CView, class T>
bool try_blas_gemm(T alpha, const AView& a, const BView& b, T beta, const CView& c) {
  const blas_operand da = describe_for_blas(a), db = describe_for_blas(b), dc = describe_for_blas(c);
  if (!da.usable || !db.usable || !dc.usable) return false;
  const int m = static_cast<int>(a.extent(0)), k = static_cast<int>(a.extent(1)), n = static_cast<int>(b.extent(1));
  if (m == 0 || n == 0) return true;
  if (!dc.transposed) {
    // Column-major C = op(A) op(B).
    call_blas_gemm<T>(da.transposed ? 'T' : 'N', db.transposed ? 'T' : 'N', m, n, k, alpha, a.data(), da.ld, b.data(),
                      db.ld, beta, c.data(), dc.ld);
  } else {
    // Row-major C is a column-major C^T = B^T A^T.
    call_blas_gemm<T>(db.transposed ? 'N' : 'T', da.transposed ? 'N' : 'T', n, m, k, alpha, b.data(), db.ld, a.data(),
                      da.ld, beta, c.data(), dc.ld);
  }
  return true;
}
#endif

#if defined(KOKKOS_ENABLE_CUDA) && defined(ORDO_HAS_CUBLAS)
// One handle per host thread, created on first use and bound to the space's stream per call.
inline cublasHandle_t cublas_handle() {
  thread_local struct holder {
    cublasHandle_t handle = nullptr;
    holder() {
      if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) handle = nullptr;
    }
    ~holder() {
      if (handle != nullptr) cublasDestroy(handle);
    }
  } h;
  if (h.handle == nullptr) throw std::runtime_error("ordo::gemm: cublasCreate failed");
  return h.handle;
}

template <class AView, class BView, class CView, class T>
bool try_cublas_gemm(const Kokkos::Cuda& space, T alpha, const AView& a, const BView& b, T beta, const CView& c) {
  const blas_operand da = describe_for_blas(a), db = describe_for_blas(b), dc = describe_for_blas(c);
  if (!da.usable || !db.usable || !dc.usable) return false;
  const int m = static_cast<int>(a.extent(0)), k = static_cast<int>(a.extent(1)), n = static_cast<int>(b.extent(1));
  if (m == 0 || n == 0) return true;
  cublasHandle_t handle = cublas_handle();
  cublasSetStream(handle, space.cuda_stream());
  const auto op = [](bool transposed) { return transposed ? CUBLAS_OP_T : CUBLAS_OP_N; };
  cublasStatus_t status;
  const bool row_major = dc.transposed;
  const auto call = [&](cublasOperation_t ta, cublasOperation_t tb, int mm, int nn, const T* x, int ldx, const T* y,
                        int ldy) {
    if constexpr (std::is_same_v<T, float>) {
      return cublasSgemm(handle, ta, tb, mm, nn, k, &alpha, x, ldx, y, ldy, &beta, c.data(), dc.ld);
    } else {
      return cublasDgemm(handle, ta, tb, mm, nn, k, &alpha, x, ldx, y, ldy, &beta, c.data(), dc.ld);
    }
  };
  if (!row_major) {
    status = call(op(da.transposed), op(db.transposed), m, n, a.data(), da.ld, b.data(), db.ld);
  } else {
    status = call(op(!db.transposed), op(!da.transposed), n, m, b.data(), db.ld, a.data(), da.ld);
  }
  if (status != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("ordo::gemm: cuBLAS gemm failed");
  return true;
}
#endif

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
    throw std::invalid_argument("ordo::gemm: A is " + std::to_string(a.extent(0)) + "x" + std::to_string(a.extent(1)) +
                                ", B is " + std::to_string(b.extent(0)) + "x" + std::to_string(b.extent(1)) +
                                " and C is " + std::to_string(c.extent(0)) + "x" + std::to_string(c.extent(1)) +
                                "; C = A B needs A m x k, B k x n, C m x n");
  }
  const std::size_t m = a.extent(0), k = a.extent(1), n = b.extent(1);

#if defined(ORDO_FORCE_PORTABLE_GEMM)
  if (backend == gemm_backend::automatic) backend = gemm_backend::portable;
#endif

  if (backend == gemm_backend::automatic || backend == gemm_backend::blas) {
#if defined(ORDO_HAS_BLAS)
    if constexpr (is_host_space_v<ExecutionSpace> && detail::blas_scalar_v<value_type>) {
      detail::gemm_region region(m, k, n, gemm_backend::blas);
      space.fence();
      if (detail::try_blas_gemm(alpha, a, b, beta, c)) return;
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
      detail::gemm_region region(m, k, n, gemm_backend::cublas);
      if (detail::try_cublas_gemm(space, alpha, a, b, beta, c)) return;
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
