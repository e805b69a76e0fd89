#ifndef ORDO_KERNELS_DETAIL_BLAS_OPERAND_HPP
#define ORDO_KERNELS_DETAIL_BLAS_OPERAND_HPP

// How a Kokkos View is passed to a column-major BLAS (host BLAS and cuBLAS alike).

#include <climits>
#include <cstddef>
#include <type_traits>

namespace ordo::detail {

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

// Whether column-major BLAS can read A and B and write C as they are laid out.
template <class AView, class BView, class CView>
bool blas_can_take(const AView& a, const BView& b, const CView& c) {
  return describe_for_blas(a).usable && describe_for_blas(b).usable && describe_for_blas(c).usable;
}

template <class T>
inline constexpr bool blas_scalar_v = std::is_same_v<T, float> || std::is_same_v<T, double>;

}  // namespace ordo::detail

#endif
