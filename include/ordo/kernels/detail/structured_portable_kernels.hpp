#ifndef ORDO_KERNELS_DETAIL_STRUCTURED_PORTABLE_KERNELS_HPP
#define ORDO_KERNELS_DETAIL_STRUCTURED_PORTABLE_KERNELS_HPP

// The products of a structured chain plan as Kokkos kernels, for what the host's BLAS and LAPACK
// cannot serve: device memory (CUDA, HIP), 16-bit storage, a build without LAPACK. One backend of
// detail::evaluate_structured_plan (structured_evaluator.hpp); nodes are read where they live.
//
// Arithmetic runs in compute_type_t<T> (float for half and bfloat16), each result rounded once to
// T. The products go to ordo::gemm; the rest are the textbook kernels, written for correctness
// on every space first:
//   products (GEMM, GEMV, SYRK, TRMM)  ordo::gemm (cuBLAS, the host BLAS or its portable tiled
//                                      kernel) on strided Views of the operands, SYRK's lower
//                                      triangle copied to the upper (exactly symmetric); one thread
//                                      per result element where a triangle must be masked (a
//                                      user's triangular operand, whose other half is not read);
//   triangular solves                  one thread per right-hand side column, substitution;
//   POSV, GESV (and SYSV)              one team factors a copy of A (right-looking Cholesky, or LU
//                                      with partial pivoting, as LAPACK's GETRF), then one thread
//                                      per right-hand side column solves; a symmetric indefinite A
//                                      takes the LU path;
//   scalings                           one thread per element; an inverted diagonal divides.
// A factorization in one team does not fill a GPU: on Kokkos::Cuda, float and double solves go to
// cuBLAS TRSM and cuSOLVER's POTRF/POTRS and GETRF/GETRS instead (cuda_solvers.hpp), on the same
// compute-type copies, with the same errors.

#include <ordo/core/scalar_traits.hpp>
#include <ordo/core/structured_product.hpp>
#include <ordo/kernels/detail/cuda_solvers.hpp>
#include <ordo/kernels/detail/structured_node.hpp>
#include <ordo/kernels/gemm.hpp>
#include <ordo/kernels/gemm_backend.hpp>
#include <ordo/platform/kokkos_math.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace ordo::detail::portable_structured {

using index = std::int64_t;

template <class Space>
Kokkos::RangePolicy<Space, Kokkos::IndexType<index>> range(const Space& space, std::size_t count) {
  return Kokkos::RangePolicy<Space, Kokkos::IndexType<index>>(space, 0, static_cast<index>(count));
}

// The first i in [0, count) with is_zero(i), or -1: the entry a solve or a division refuses.
template <class Space, class Predicate>
index first_zero(const Space& space, std::size_t count, const Predicate& is_zero) {
  if (count == 0) return -1;
  index first = static_cast<index>(count);
  Kokkos::parallel_reduce(
      "ordo::evaluate structured: zero check", range(space, count),
      KOKKOS_LAMBDA(index i, index& found) {
        if (is_zero(i) && i < found) found = i;
      },
      Kokkos::Min<index>(first));
  return first < static_cast<index>(count) ? first : -1;
}

// to(i, j) = from(i, j) as a triangle reads it, in T.
template <class Space, class T>
void copy_masked(const Space& space, const structured_node<T>& from, const structured_node<T>& to) {
  const std::size_t rows = to.rows;
  if (rows == 0 || to.cols == 0) return;
  Kokkos::parallel_for(
      "ordo::evaluate structured: copy", range(space, rows * to.cols), KOKKOS_LAMBDA(index e) {
        const auto i = static_cast<std::size_t>(e) % rows, j = static_cast<std::size_t>(e) / rows;
        to.data[to.offset(i, j)] = from.masked_at(i, j);
      });
}

// A node as an unmanaged strided View of its memory (element (i, j) at node.offset(i, j)).
template <class Space, class Value, class T>
auto strided_view(const structured_node<T>& node) {
  using view = Kokkos::View<Value**, Kokkos::LayoutStride, typename Space::memory_space,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const Kokkos::LayoutStride layout(node.rows, node.transposed ? node.ld : 1, node.cols, node.transposed ? 1 : node.ld);
  return view(node.data, layout);
}

// Whether ordo::gemm can read the node as it is: stored in full, no triangle to mask.
template <class T>
bool dense_operand(const structured_node<T>& node) {
  return !node.diagonal_vector && !(is_triangular(node.kind) && !node.clean);
}

// c = l r (GEMM, GEMV, a dot product, TRMM with the triangle masked, SYRK with r = l^T), one
// thread per element: for what ordo::gemm cannot take (a triangle to mask, a stored diagonal).
template <class Space, class T>
void elementwise_product(const Space& space, const structured_node<T>& l, const structured_node<T>& r,
                         const structured_node<T>& c) {
  using C = compute_type_t<T>;
  const std::size_t rows = c.rows, inner = l.cols;
  if (rows == 0 || c.cols == 0) return;
  Kokkos::parallel_for(
      "ordo::evaluate structured: product", range(space, rows * c.cols), KOKKOS_LAMBDA(index e) {
        const auto i = static_cast<std::size_t>(e) % rows, j = static_cast<std::size_t>(e) / rows;
        C sum(0);
        for (std::size_t k = 0; k < inner; ++k) sum += static_cast<C>(l.masked_at(i, k)) * static_cast<C>(r.masked_at(k, j));
        c.data[c.offset(i, j)] = static_cast<T>(sum);
      });
}

// c = l r: ordo::gemm (cuBLAS on CUDA, the host BLAS or the portable tiled kernel, as `backend`
// says) for dense operands, else the element-wise kernel.
template <class Space, class T>
void general_product(const Space& space, const structured_node<T>& l, const structured_node<T>& r,
                     const structured_node<T>& c, gemm_backend backend) {
  if (c.rows == 0 || c.cols == 0) return;
  if (!dense_operand(l) || !dense_operand(r) || l.cols == 0) return elementwise_product(space, l, r, c);
  ordo::gemm(space, 1, strided_view<Space, const T>(l), strided_view<Space, const T>(r), 0, strided_view<Space, T>(c),
             backend);
}

// c = l l^T with both triangles the same bits: a GEMM, then the lower triangle copied to the upper.
template <class Space, class T>
void gram_product(const Space& space, const structured_node<T>& l, const structured_node<T>& c, gemm_backend backend) {
  general_product(space, l, l.flipped(), c, backend);
  const std::size_t n = c.rows;
  if (n == 0) return;
  Kokkos::parallel_for(
      "ordo::evaluate structured: symmetrize", range(space, n * n), KOKKOS_LAMBDA(index e) {
        const auto i = static_cast<std::size_t>(e) % n, j = static_cast<std::size_t>(e) / n;
        if (i < j) c.data[c.offset(i, j)] = c.data[c.offset(j, i)];
      });
}

// A column-major workspace of compute_type_t<T> (the right-hand sides being solved).
template <class Space, class T>
using solve_workspace = Kokkos::View<compute_type_t<T>**, Kokkos::LayoutLeft, typename Space::memory_space>;

template <class Space, class T>
solve_workspace<Space, T> load_compute_copy(const Space& space, const structured_node<T>& b) {
  using C = compute_type_t<T>;
  solve_workspace<Space, T> y(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ordo::evaluate structured: compute copy"), b.rows,
                              b.cols);
  const std::size_t rows = b.rows;
  if (rows > 0 && b.cols > 0) {
    Kokkos::parallel_for(
        "ordo::evaluate structured: load rhs", range(space, rows * b.cols), KOKKOS_LAMBDA(index e) {
          const auto i = static_cast<std::size_t>(e) % rows, j = static_cast<std::size_t>(e) / rows;
          y(i, j) = static_cast<C>(b.masked_at(i, j));
        });
  }
  return y;
}

template <class Space, class T>
void store_result(const Space& space, const solve_workspace<Space, T>& y, const structured_node<T>& c) {
  const std::size_t rows = c.rows;
  if (rows == 0 || c.cols == 0) return;
  Kokkos::parallel_for(
      "ordo::evaluate structured: store", range(space, rows * c.cols), KOKKOS_LAMBDA(index e) {
        const auto i = static_cast<std::size_t>(e) % rows, j = static_cast<std::size_t>(e) / rows;
        c.data[c.offset(i, j)] = static_cast<T>(y(i, j));
      });
}

// c = tri^-1 b, tri triangular (as its node reads it: lower or upper, unit or not).
template <class Space, class T>
void triangular_solve_left(const Space& space, const structured_node<T>& tri, const structured_node<T>& b,
                           const structured_node<T>& c) {
  using C = compute_type_t<T>;
  const std::size_t n = tri.rows;
  const bool unit = tri.unit_diagonal(), lower = is_lower_family(tri.kind);
  if (!unit) {
    const index zero = first_zero(space, n, KOKKOS_LAMBDA(index i) {
      return static_cast<C>(tri.at(static_cast<std::size_t>(i), static_cast<std::size_t>(i))) == C(0);
    });
    if (zero >= 0) throw_singular(tri, "is singular: a zero on its diagonal at " + std::to_string(zero + 1));
  }
  const auto y = load_compute_copy(space, b);
#if defined(ORDO_IMPL_CUDA_SOLVERS)
  if constexpr (std::is_same_v<Space, Kokkos::Cuda> && cuda_solver_type_v<T>) {
    if (cuda_solver_extents_fit({n, b.cols, tri.ld, static_cast<std::size_t>(y.stride(1))})) {
      cuda_triangular_solve(space, tri, y.data(), static_cast<int>(n), static_cast<int>(b.cols),
                            static_cast<int>(y.stride(1)));
      store_result(space, y, c);
      return;
    }
  }
#endif
  if (n > 0 && b.cols > 0) {
    Kokkos::parallel_for(
        "ordo::evaluate structured: triangular solve", range(space, b.cols), KOKKOS_LAMBDA(index column) {
          const auto j = static_cast<std::size_t>(column);
          for (std::size_t step = 0; step < n; ++step) {
            const std::size_t i = lower ? step : n - 1 - step;
            C s = y(i, j);
            if (lower) {
              for (std::size_t k = 0; k < i; ++k) s -= static_cast<C>(tri.at(i, k)) * y(k, j);
            } else {
              for (std::size_t k = i + 1; k < n; ++k) s -= static_cast<C>(tri.at(i, k)) * y(k, j);
            }
            y(i, j) = unit ? s : s / static_cast<C>(tri.at(i, i));
          }
        });
  }
  store_result(space, y, c);
}

// Factors the n x n compute-type copy `factor` in place in one team: lower Cholesky (cholesky
// true; the upper triangle is left as it was) or LU with partial pivoting as LAPACK's GETRF (row
// swaps in pivots). Returns 0, or the 1-based column where it stopped: a pivot that is not
// positive (Cholesky) or no nonzero pivot (LU).
template <class Space, class Factor, class Pivots>
int factor_in_place(const Space& space, const Factor& factor, const Pivots& pivots, bool cholesky) {
  using C = typename Factor::non_const_value_type;
  using member = typename Kokkos::TeamPolicy<Space>::member_type;
  Kokkos::View<int, typename Space::memory_space> failed("ordo::evaluate structured: failed column");
  const int order = static_cast<int>(factor.extent(0));
  Kokkos::parallel_for(
      cholesky ? "ordo::evaluate structured: Cholesky" : "ordo::evaluate structured: LU",
      Kokkos::TeamPolicy<Space>(space, 1, Kokkos::AUTO), KOKKOS_LAMBDA(const member& team) {
        for (int k = 0; k < order; ++k) {
          if (cholesky) {
            // Every thread reads the same pivot after the last barrier, so all stop together.
            const C d = factor(k, k);
            if (!(d > C(0))) {
              Kokkos::single(Kokkos::PerTeam(team), [&]() { failed() = k + 1; });
              break;
            }
            const C root = math::sqrt(d);
            team.team_barrier();
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k, order),
                                 [&](int i) { factor(i, k) = i == k ? root : factor(i, k) / root; });
            team.team_barrier();
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k + 1, order), [&](int j) {
              for (int i = j; i < order; ++i) factor(i, j) -= factor(i, k) * factor(j, k);
            });
            team.team_barrier();
          } else {
            Kokkos::single(Kokkos::PerTeam(team), [&]() {
              int p = k;  // the first largest |a(i, k)|, i >= k, as LAPACK's IAMAX
              C largest = math::fabs(factor(k, k));
              for (int i = k + 1; i < order; ++i) {
                if (math::fabs(factor(i, k)) > largest) largest = math::fabs(factor(i, k)), p = i;
              }
              pivots(k) = p;
              if (largest == C(0)) failed() = k + 1;
            });
            team.team_barrier();
            if (failed() != 0) break;
            const int p = pivots(k);
            if (p != k) {
              Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 0, order), [&](int j) {
                const C t = factor(k, j);
                factor(k, j) = factor(p, j);
                factor(p, j) = t;
              });
              team.team_barrier();
            }
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k + 1, order),
                                 [&](int i) { factor(i, k) /= factor(k, k); });
            team.team_barrier();
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k + 1, order), [&](int j) {
              for (int i = k + 1; i < order; ++i) factor(i, j) -= factor(i, k) * factor(k, j);
            });
            team.team_barrier();
          }
        }
      });
  int failed_column = 0;
  Kokkos::deep_copy(failed_column, failed);
  return failed_column;
}

inline std::string cholesky_failure(int column) {
  return "is not positive definite (Cholesky: pivot " + std::to_string(column) + " is not positive)";
}

// c = a^-1 b for a square a read in full: Cholesky (cholesky true; a declared SPD) or LU with
// partial pivoting, of a compute-type copy of a in one team, then one thread per column of b.
template <class Space, class T>
void dense_solve_left(const Space& space, const structured_node<T>& a, const structured_node<T>& b,
                      const structured_node<T>& c, bool cholesky) {
  using C = compute_type_t<T>;
  const std::size_t n = a.rows;
  if (n == 0) return;
  const auto factor = load_compute_copy(space, a);  // n x n, factored in place
  Kokkos::View<int*, typename Space::memory_space> pivots(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "ordo::evaluate structured: pivots"), n);
  const auto refuse = [&](int failed_column) {
    throw_singular(a, cholesky ? cholesky_failure(failed_column)
                               : "is singular (LU: no nonzero pivot for column " + std::to_string(failed_column) + ")");
  };
#if defined(ORDO_IMPL_CUDA_SOLVERS)
  if constexpr (std::is_same_v<Space, Kokkos::Cuda> && cuda_solver_type_v<T>) {
    if (cuda_solver_extents_fit({n, b.cols, static_cast<std::size_t>(factor.stride(1))})) {
      const int lda = static_cast<int>(factor.stride(1));
      const int failed_column = cuda_factor(space, factor.data(), static_cast<int>(n), lda, pivots.data(), cholesky);
      if (failed_column != 0) refuse(failed_column);
      const auto y = load_compute_copy(space, b);
      cuda_factored_solve(space, factor.data(), static_cast<int>(n), lda, pivots.data(), y.data(),
                          static_cast<int>(b.cols), static_cast<int>(y.stride(1)), cholesky);
      store_result(space, y, c);
      return;
    }
  }
#endif
  const int failed_column = factor_in_place(space, factor, pivots, cholesky);
  if (failed_column != 0) refuse(failed_column);
  const int order = static_cast<int>(n);
  const auto y = load_compute_copy(space, b);
  Kokkos::parallel_for(
      "ordo::evaluate structured: factored solve", range(space, b.cols), KOKKOS_LAMBDA(index column) {
        const auto j = static_cast<std::size_t>(column);
        if (!cholesky) {
          for (int k = 0; k < order; ++k) {
            const int p = pivots(k);
            if (p != k) {
              const C t = y(k, j);
              y(k, j) = y(p, j);
              y(p, j) = t;
            }
          }
        }
        for (int i = 0; i < order; ++i) {  // L z = y: unit diagonal for LU
          C s = y(i, j);
          for (int k = 0; k < i; ++k) s -= factor(i, k) * y(k, j);
          y(i, j) = cholesky ? s / factor(i, i) : s;
        }
        for (int i = order - 1; i >= 0; --i) {  // U x = z, or L^T x = z
          C s = y(i, j);
          for (int k = i + 1; k < order; ++k) s -= (cholesky ? factor(k, i) : factor(i, k)) * y(k, j);
          y(i, j) = s / factor(i, i);
        }
      });
  store_result(space, y, c);
}

// l = the lower Cholesky factor of s (zeros above its diagonal): 0, or the 1-based column of the
// pivot that is not positive.
template <class Space, class T>
int cholesky_lower(const Space& space, const structured_node<T>& s, const structured_node<T>& l) {
  const std::size_t n = s.rows;
  if (n == 0) return 0;
  const auto factor = load_compute_copy(space, s);
  const Kokkos::View<int*, typename Space::memory_space> no_pivots("ordo::cholesky_factor: no pivots", 0);
  const int failed_column = factor_in_place(space, factor, no_pivots, true);
  if (failed_column != 0) return failed_column;
  Kokkos::parallel_for(
      "ordo::cholesky_factor: store", range(space, n * n), KOKKOS_LAMBDA(index e) {
        const auto i = static_cast<std::size_t>(e) % n, j = static_cast<std::size_t>(e) / n;
        l.data[l.offset(i, j)] = i >= j ? static_cast<T>(factor(i, j)) : T(0);
      });
  space.fence();
  return 0;
}

// Refuses an inverted diagonal with a zero entry, naming the entry.
template <class Space, class T>
void require_invertible_diagonal(const Space& space, const structured_node<T>& d) {
  using C = compute_type_t<T>;
  const index zero = first_zero(space, d.rows, KOKKOS_LAMBDA(index i) { return static_cast<C>(d.data[i]) == C(0); });
  if (zero >= 0) throw_singular(d, "is singular: its diagonal entry " + std::to_string(zero + 1) + " is 0");
}

// c = D_left m D_right; a missing side (null data) is the identity.
template <class Space, class T>
void scale(const Space& space, const structured_node<T>& left, bool left_inverted, const structured_node<T>& m,
           const structured_node<T>& right, bool right_inverted, const structured_node<T>& c) {
  using C = compute_type_t<T>;
  if (left.data && left_inverted) require_invertible_diagonal(space, left);
  if (right.data && right_inverted) require_invertible_diagonal(space, right);
  const std::size_t rows = c.rows;
  if (rows == 0 || c.cols == 0) return;
  const T* row_factors = left.data;
  const T* col_factors = right.data;
  Kokkos::parallel_for(
      "ordo::evaluate structured: scaling", range(space, rows * c.cols), KOKKOS_LAMBDA(index e) {
        const auto i = static_cast<std::size_t>(e) % rows, j = static_cast<std::size_t>(e) / rows;
        C x = static_cast<C>(m.masked_at(i, j));
        if (row_factors) x = apply_diagonal(x, static_cast<C>(row_factors[i]), left_inverted);
        if (col_factors) x = apply_diagonal(x, static_cast<C>(col_factors[j]), right_inverted);
        c.data[c.offset(i, j)] = static_cast<T>(x);
      });
}

// c = l r for two diagonals, each maybe inverted: c's diagonal (r's data null: l alone).
template <class Space, class T>
void diagonal_product(const Space& space, const structured_node<T>& l, bool l_inverted, const structured_node<T>& r,
                      bool r_inverted, const structured_node<T>& c) {
  using C = compute_type_t<T>;
  if (l_inverted) require_invertible_diagonal(space, l);
  if (r_inverted) require_invertible_diagonal(space, r);
  const T* ld = l.data;
  const T* rd = r.data;
  T* out = c.data;
  Kokkos::parallel_for(
      "ordo::evaluate structured: diagonal product", range(space, c.rows), KOKKOS_LAMBDA(index e) {
        const auto i = static_cast<std::size_t>(e);
        const C left_entry = static_cast<C>(ld[i]);
        out[i] = static_cast<T>(rd ? diagonal_entry_product(left_entry, l_inverted, static_cast<C>(rd[i]), r_inverted)
                                   : apply_diagonal(C(1), left_entry, l_inverted));
      });
}

}  // namespace ordo::detail::portable_structured

namespace ordo::detail {

// The portable backend of evaluate_structured_plan, on the execution space instance `space`.
template <class Space>
struct portable_structured_kernels {
  Space space;
  gemm_backend products = gemm_backend::automatic;  // what ordo::gemm runs the dense products on

  template <class T>
  struct buffer {
    Kokkos::View<T*, typename Space::memory_space> values;
  };

  template <class T>
  T* allocate(buffer<T>& storage, std::size_t elements) const {
    storage.values = Kokkos::View<T*, typename Space::memory_space>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "ordo::evaluate structured: workspace"), elements);
    return storage.values.data();
  }
  template <class T>
  void copy_masked(const structured_node<T>& from, const structured_node<T>& to) const {
    portable_structured::copy_masked(space, from, to);
  }
  // Before the workspace is released: the kernels run asynchronously on device spaces.
  void finish() const { space.fence(); }
  template <class T>
  void scale_both(const structured_node<T>& left, bool left_inverted, const structured_node<T>& m,
                  const structured_node<T>& right, bool right_inverted, const structured_node<T>& c) const {
    portable_structured::scale(space, left, left_inverted, m, right, right_inverted, c);
  }

  // A^-1 formed explicitly, owned by storage: a diagonal's reciprocals, else A^-1 I by the solve
  // A's kind calls for; a symmetric or SPD inverse gets its lower triangle in both (exactly
  // symmetric, as the host's POTRI and SYTRI results).
  template <class T>
  structured_node<T> explicit_inverse(const structured_node<T>& a, buffer<T>& storage) const {
    const std::size_t n = a.rows;
    if (a.diagonal_vector) {
      structured_node<T> d = a;
      d.data = allocate(storage, n > 0 ? n : 1), d.operand = not_an_operand;
      portable_structured::diagonal_product(space, a, true, structured_node<T>{}, false, d);
      return d;
    }
    structured_node<T> w = column_major_node(allocate(storage, n * n > 0 ? n * n : 1), n, n, a.kind);
    if (n == 0) return w;
    T* data = w.data;
    Kokkos::parallel_for(
        "ordo::evaluate structured: identity", portable_structured::range(space, n * n),
        KOKKOS_LAMBDA(portable_structured::index e) {
          data[e] = static_cast<T>(static_cast<std::size_t>(e) % n == static_cast<std::size_t>(e) / n ? 1 : 0);
        });
    if (is_triangular(a.kind)) {
      portable_structured::triangular_solve_left(space, a, w, w);
    } else {
      portable_structured::dense_solve_left(space, a, w, w, a.kind == matrix_kind::spd);
      if (a.kind == matrix_kind::spd || a.kind == matrix_kind::symmetric) {
        Kokkos::parallel_for(
            "ordo::evaluate structured: symmetrize", portable_structured::range(space, n * n),
            KOKKOS_LAMBDA(portable_structured::index e) {
              const auto i = static_cast<std::size_t>(e) % n, j = static_cast<std::size_t>(e) / n;
              if (i < j) data[i + j * n] = data[j + i * n];
            });
      }
    }
    return w;
  }

  // One product into column-major c (inverted factors to be used explicitly already replaced).
  template <class T>
  void column_major_product(const structured_product& step, const structured_node<T>& l, const structured_node<T>& r,
                            const structured_node<T>& c) const {
    namespace ps = portable_structured;
    const bool left = step.side == factor_side::left;
    const bool l_inverted = step.left_inverse == inverse_use::solve, r_inverted = step.right_inverse == inverse_use::solve;
    switch (step.kernel) {
      case chain_kernel::gemm:
      case chain_kernel::gemv:
      case chain_kernel::dot:
      case chain_kernel::trmm:
      case chain_kernel::trmv: return ps::general_product(space, l, r, c, products);
      case chain_kernel::syrk: return ps::gram_product(space, l, c, products);
      case chain_kernel::trsm:
      case chain_kernel::trsv:
        // X T^-1 = (T^-T X^T)^T: the right-side solve is the left one of the transposes.
        return left ? ps::triangular_solve_left(space, l, r, c)
                    : ps::triangular_solve_left(space, r.flipped(), l.flipped(), c.flipped());
      case chain_kernel::posv:
      case chain_kernel::sysv:
      case chain_kernel::gesv: {
        const bool cholesky = step.kernel == chain_kernel::posv;
        return left ? ps::dense_solve_left(space, l, r, c, cholesky)
                    : ps::dense_solve_left(space, r.flipped(), l.flipped(), c.flipped(), cholesky);
      }
      case chain_kernel::diagonal_product: return ps::diagonal_product(space, l, l_inverted, r, r_inverted, c);
      case chain_kernel::scale_rows: return ps::scale(space, l, l_inverted, r, structured_node<T>{}, false, c);
      default: return ps::scale(space, structured_node<T>{}, false, l, r, r_inverted, c);  // scale_cols
    }
  }
};

}  // namespace ordo::detail

#endif
