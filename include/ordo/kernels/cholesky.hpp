#ifndef ORDO_KERNELS_CHOLESKY_HPP
#define ORDO_KERNELS_CHOLESKY_HPP

// ordo::cholesky_factor(S): the lower triangular L with S = L L^T, for an SPD matrix that several
// structured chains solve against. Each chain that holds spd.inverse() factors S itself; factoring
// once and passing lower.inverse() (a triangular solve per use) shares that work, as a
// hand-written sequence would (docs/structured_chains.md, "Sharing a factorization").
// LAPACK's POTRF for float or double in host memory; ordo's portable Cholesky (one team, in
// compute_type_t) for device memory, half and bfloat16, or a build without LAPACK.

#include <ordo/kernels/detail/host_lapack.hpp>
#include <ordo/kernels/detail/structured_host_kernels.hpp>
#include <ordo/kernels/detail/structured_portable_kernels.hpp>
#include <ordo/kernels/matrix.hpp>
#include <ordo/platform/shape_text.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ordo {

// L, lower triangular with zeros above its diagonal, such that S = L L^T. Throws
// std::invalid_argument for a matrix that is not square and std::runtime_error when S is not
// positive definite (the order of the leading minor that is not: LAPACK's info, or the portable
// factorization's pivot).
template <any_matrix M>
auto cholesky_factor(const M& s) {
  using value_type = typename M::value_type;
  using execution_space = typename M::execution_space;
  using result_type = matrix<value_type, dynamic, dynamic, execution_space>;
  if (s.rows() != s.cols()) {
    throw std::invalid_argument("ordo::cholesky_factor(S): S is " + detail::shape_text(s.rows(), s.cols()) +
                                " but an SPD matrix is square");
  }
  const std::size_t n = s.rows();
  result_type l(uninitialized, n, n);
  if constexpr (detail::lapack_serves<value_type, typename M::memory_space>) {
#if defined(ORDO_HAS_LAPACK)
    Kokkos::fence();
    Kokkos::deep_copy(l.view(), s.view());
    // Row-major S is column-major S (symmetric); column-major U with S = U^T U is row-major L = U^T.
    value_type* data = l.view().data();
    const int order = static_cast<int>(n);
    int info = 0;
    if (n > 0) detail::lapack<value_type>::potrf("U", &order, data, &order, &info);
    if (info > 0) {
      throw std::runtime_error("ordo::cholesky_factor(S): S (" + detail::shape_text(n, n) +
                               ") is not positive definite (POTRF info " + std::to_string(info) + ")");
    }
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j) data[i * n + j] = value_type(0);
#endif
  } else {
    // Both row-major: S^T (= S) and L^T as column-major nodes, L read through its transpose.
    const auto node = [n](value_type* data) {
      detail::structured_node<value_type> x = detail::column_major_node(data, n, n, matrix_kind::general);
      x.transposed = true;
      return x;
    };
    const int failed = detail::portable_structured::cholesky_lower(
        execution_space{}, node(const_cast<value_type*>(s.view().data())), node(l.view().data()));
    if (failed != 0) {
      throw std::runtime_error("ordo::cholesky_factor(S): S (" + detail::shape_text(n, n) + ") " +
                               detail::portable_structured::cholesky_failure(failed));
    }
  }
  return l;
}

}  // namespace ordo

#endif
