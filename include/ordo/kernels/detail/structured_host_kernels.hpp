#ifndef ORDO_KERNELS_DETAIL_STRUCTURED_HOST_KERNELS_HPP
#define ORDO_KERNELS_DETAIL_STRUCTURED_HOST_KERNELS_HPP

// The products of a structured chain plan on the host, with BLAS and LAPACK (host_lapack.hpp):
// one function per chain_kernel family, each writing a column-major result. A node is a matrix
// as column-major BLAS sees it: op(S) for a column-major S with leading dimension ld, as
// blas_operand.hpp describes Views; an ordo::matrix (row-major) is S^T. A result that is itself
// row-major (the root, written into the caller's matrix) is computed as its transpose: C = L R
// is C^T = R^T L^T, the mirrored product (run_structured_product, structured_evaluator.hpp).

#include <ordo/core/structured_product.hpp>
#include <ordo/kernels/detail/blas_gemm.hpp>
#include <ordo/kernels/detail/blas_gemv.hpp>
#include <ordo/kernels/detail/host_lapack.hpp>
#include <ordo/kernels/detail/huge_pages.hpp>
#include <ordo/kernels/detail/structured_node.hpp>
#include <ordo/kernels/factorization_cache.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace ordo::detail {

// Whether the host's BLAS and LAPACK serve T in Memory: a build with LAPACK, float or double,
// host-accessible memory (else the portable kernels do: structured_portable_kernels.hpp).
template <class T, class... Memory>
inline constexpr bool lapack_serves =
#if defined(ORDO_HAS_LAPACK)
    (std::is_same_v<T, float> || std::is_same_v<T, double>) &&
    (Kokkos::SpaceAccessibility<Kokkos::HostSpace, Memory>::accessible && ...);
#else
    false;
#endif

}  // namespace ordo::detail

#if defined(ORDO_HAS_LAPACK)

namespace ordo::detail {

// f(k) for k in [0, count) on the host execution space Space: the scalings are memory-bound,
// and one core does not reach the memory's bandwidth.
template <class Space, class F>
void for_each_index(std::size_t count, const F& f) {
  if (count == 0) return;
  Kokkos::parallel_for("ordo::evaluate structured scaling",
                       Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(0, static_cast<std::int64_t>(count)),
                       [=](std::int64_t k) { f(static_cast<std::size_t>(k)); });
  Space().fence();
}

// dst (column-major, ld rows) = src, zero outside a triangular src's triangle.
template <class T>
void copy_into(const structured_node<T>& src, T* dst, std::size_t ld) {
  if (!src.transposed && !src.diagonal_vector && !is_triangular(src.kind)) {  // column by column, in memory order
    for (std::size_t j = 0; j < src.cols; ++j) {
      const T* from = src.data + j * src.ld;
      T* to = dst + j * ld;
      for (std::size_t i = 0; i < src.rows; ++i) to[i] = from[i];
    }
    return;
  }
  for (std::size_t j = 0; j < src.cols; ++j)
    for (std::size_t i = 0; i < src.rows; ++i) dst[i + j * ld] = src.masked_at(i, j);
}

// A column-major copy of a node, owned by `storage`, with zeros outside a triangle.
template <class T>
structured_node<T> dense_copy(const structured_node<T>& src, std::vector<T>& storage) {
  storage.assign(src.rows * src.cols, T(0));
  copy_into(src, storage.data(), src.rows);
  structured_node<T> copy = column_major_node(storage.data(), src.rows, src.cols, src.kind);
  copy.operand = src.operand;
  copy.declared = src.declared;
  return copy;
}

// A node with one column or one row as a BLAS vector: its first element and increment.
template <class T>
int vector_increment(const structured_node<T>& v) noexcept {
  const bool along_rows = v.cols == 1;  // a column: elements (i, 0)
  return static_cast<int>(along_rows == v.transposed ? v.ld : 1);
}

template <class T>
void general_product(const structured_node<T>& l, const structured_node<T>& r, const structured_node<T>& c) {
  std::vector<T> l_copy, r_copy;  // a user's triangle is read as a triangle, even by GEMM
  const structured_node<T> a = is_triangular(l.kind) && !l.clean ? dense_copy(l, l_copy) : l;
  const structured_node<T> b = is_triangular(r.kind) && !r.clean ? dense_copy(r, r_copy) : r;
  if (c.rows == 0 || c.cols == 0) return;
  if (a.cols == 0) {
    for (std::size_t j = 0; j < c.cols; ++j)
      for (std::size_t i = 0; i < c.rows; ++i) c.data[i + j * c.ld] = T(0);
    return;
  }
  // Matrix-vector products by GEMV: c = A x (a column), or c^T = B^T x^T (a row).
  if ((c.cols == 1 && c.rows > 1) || (c.rows == 1 && c.cols > 1)) {
    const bool column = c.cols == 1;
    const structured_node<T>& matrix = column ? a : b;
    const structured_node<T>& vector = column ? b : a;
    // matrix = op(S), S column-major; GEMV with 'N' on S gives S x, with 'T' gives S^T x.
    const bool s_transposed_in_product = column ? matrix.transposed : !matrix.transposed;
    const int s_rows = static_cast<int>(matrix.transposed ? matrix.cols : matrix.rows);
    const int s_cols = static_cast<int>(matrix.transposed ? matrix.rows : matrix.cols);
    call_blas_gemv<T>(s_transposed_in_product ? 'T' : 'N', s_rows, s_cols, T(1), matrix.data, matrix.blas_ld(), vector.data,
                      vector_increment(vector), T(0), c.data, vector_increment(c));
    return;
  }
  call_blas_gemm<T>(a.trans(), b.trans(), static_cast<int>(c.rows), static_cast<int>(c.cols), static_cast<int>(a.cols),
                    T(1), a.data, a.blas_ld(), b.data, b.blas_ld(), T(0), c.data, c.blas_ld());
}

// TRMM or TRSM: c = tri * other (side left) or other * tri, tri^-1 likewise when solving.
template <class T>
void triangular_product(const structured_node<T>& tri, const structured_node<T>& other, const structured_node<T>& c, factor_side side,
                        bool solve) {
  copy_into(other, c.data, c.ld);
  if (c.rows == 0 || c.cols == 0) return;
  if (solve && tri.unit() == 'N') {
    for (std::size_t i = 0; i < tri.rows; ++i) {
      if (tri.at(i, i) == T(0)) {
        throw_singular(tri, "is singular: a zero on its diagonal at " + std::to_string(i + 1));
      }
    }
  }
  const char side_char = side == factor_side::left ? 'L' : 'R', uplo = tri.uplo(), trans = tri.trans(), diag = tri.unit();
  const int m = static_cast<int>(c.rows), n = static_cast<int>(c.cols), lda = tri.blas_ld(), ldc = c.blas_ld();
  const T one(1);
  // A vector (c a column on the left, a row on the right: x op(T) = (op(T)^T x^T)^T): TRMV, TRSV.
  if ((side == factor_side::left && n == 1) || (side == factor_side::right && m == 1)) {
    const char vector_trans = side == factor_side::left ? trans : (trans == 'N' ? 'T' : 'N');
    const int order = static_cast<int>(tri.rows), increment = vector_increment(c);
    if (solve) {
      lapack<T>::trsv(&uplo, &vector_trans, &diag, &order, tri.data, &lda, c.data, &increment);
    } else {
      lapack<T>::trmv(&uplo, &vector_trans, &diag, &order, tri.data, &lda, c.data, &increment);
    }
    return;
  }
  if (solve) {
    lapack<T>::trsm(&side_char, &uplo, &trans, &diag, &m, &n, &one, tri.data, &lda, c.data, &ldc);
  } else {
    lapack<T>::trmm(&side_char, &uplo, &trans, &diag, &m, &n, &one, tri.data, &lda, c.data, &ldc);
  }
}

// X^T X or X X^T of one stored X (left = op(S), right = its transpose): SYRK, both triangles.
template <class T>
void gram_product(const structured_node<T>& left, const structured_node<T>& c) {
  const int n = static_cast<int>(c.rows), k = static_cast<int>(left.cols), lda = left.blas_ld(), ldc = c.blas_ld();
  const char uplo = 'L', trans = left.transposed ? 'T' : 'N';
  const T one(1), zero(0);
  if (n == 0) return;
  lapack<T>::syrk(&uplo, &trans, &n, &k, &one, left.data, &lda, &zero, c.data, &ldc);
  for (std::size_t j = 0; j < c.cols; ++j)
    for (std::size_t i = 0; i < j; ++i) c.data[i + j * c.ld] = c.data[j + i * c.ld];
}

// The LU, LDL^T or Cholesky factorization of a copy of A (kernel gesv, sysv or posv): a
// singular, or declared SPD and not positive definite, A throws naming its operand.
template <class T>
operand_factorization<T> factor_operand(const structured_node<T>& a, chain_kernel kernel, std::uint64_t elements_hash) {
  operand_factorization<T> f{a.data, a.rows, a.ld, kernel, elements_hash, {}, {}};
  const structured_node<T> factor = dense_copy(a, f.factor);
  const int n = static_cast<int>(a.rows), lda = factor.blas_ld();
  if (n == 0) return f;
  int info = 0;
  const char lower = 'L';
  f.pivots.resize(static_cast<std::size_t>(n));
  if (kernel == chain_kernel::posv) {
    lapack<T>::potrf(&lower, &n, factor.data, &lda, &info);
    if (info > 0) throw_singular(a, "is not positive definite (POTRF info " + std::to_string(info) + ")");
  } else if (kernel == chain_kernel::sysv) {
    const int lwork = 64 * n;
    std::vector<T> work(static_cast<std::size_t>(lwork));
    lapack<T>::sytrf(&lower, &n, factor.data, &lda, f.pivots.data(), work.data(), &lwork, &info);
    if (info > 0) throw_singular(a, "is singular (SYTRF info " + std::to_string(info) + ")");
  } else {
    lapack<T>::getrf(&n, &n, factor.data, &lda, f.pivots.data(), &info);
    if (info > 0) throw_singular(a, "is singular (GETRF info " + std::to_string(info) + ")");
  }
  return f;
}

// c = A^-1 B for a general, symmetric or SPD A: LU, LDL^T or Cholesky of a copy of A, then its
// solves on c, or on a copy when c is row-major. An operand's factorization is looked up in, and
// kept in, store (kernels/factorization_cache.hpp): a chain or a cache's chains that solve
// against the same operand factor it once.
template <class T>
void dense_solve_left(const structured_node<T>& a, const structured_node<T>& b, const structured_node<T>& c,
                      chain_kernel kernel, factorization_store<T>& store) {
  std::vector<T> rhs_storage;
  structured_node<T> y = c;
  if (c.transposed) {
    y = dense_copy(b, rhs_storage);
  } else {
    copy_into(b, c.data, c.ld);
  }
  const int n = static_cast<int>(a.rows), nrhs = static_cast<int>(b.cols), lda = n > 0 ? n : 1, ldb = y.blas_ld();
  if (n == 0) return;
  // Intermediates live in a workspace that the next evaluation reuses: only operands are kept.
  const bool keep = a.operand != not_an_operand;
  const std::uint64_t hash = keep ? hash_elements(a.data, a.rows, a.ld, a.transposed) : 0;
  const operand_factorization<T>* found = keep ? store.find(a.data, a.rows, a.ld, kernel, hash) : nullptr;
  operand_factorization<T> local;
  if (!found) {
    local = factor_operand(a, kernel, hash);
    found = keep ? &store.add(std::move(local)) : &local;
  }
  T* factor = const_cast<T*>(found->factor.data());  // LAPACK's solves take it non-const and only read it
  int* pivots = const_cast<int*>(found->pivots.data());
  int info = 0;
  const char lower = 'L', no_trans = 'N';
  if (nrhs == 0) return;
  if (kernel == chain_kernel::posv) {
    lapack<T>::potrs(&lower, &n, &nrhs, factor, &lda, y.data, &ldb, &info);
  } else if (kernel == chain_kernel::sysv) {
    lapack<T>::sytrs(&lower, &n, &nrhs, factor, &lda, pivots, y.data, &ldb, &info);
  } else {
    lapack<T>::getrs(&no_trans, &n, &nrhs, factor, &lda, pivots, y.data, &ldb, &info);
  }
  if (c.transposed) {
    for (std::size_t j = 0; j < c.cols; ++j)
      for (std::size_t i = 0; i < c.rows; ++i) c.data[j + i * c.ld] = y.at(i, j);
  }
}

// d's entry i, refused when the diagonal is used inverted and the entry is zero (an error, never
// an infinity).
template <class T>
T diagonal_entry(const structured_node<T>& d, std::size_t i, bool inverted) {
  const T value = d.data[i];
  if (inverted && value == T(0)) {
    throw_singular(d, "is singular: its diagonal entry " + std::to_string(i + 1) + " is 0");
  }
  return value;
}

template <class Space, class T>
void scaling(const structured_node<T>& l, const structured_node<T>& r, const structured_node<T>& c, const structured_product& step) {
  const bool li = step.left_inverse == inverse_use::solve, ri = step.right_inverse == inverse_use::solve;
  if (step.kernel == chain_kernel::diagonal_product) {
    for (std::size_t i = 0; i < c.rows; ++i) {
      c.data[i] = diagonal_entry_product(diagonal_entry(l, i, li), li, diagonal_entry(r, i, ri), ri);
    }
    return;
  }
  const bool rows = step.kernel == chain_kernel::scale_rows;
  const bool inverted = rows ? li : ri;
  const structured_node<T>& d = rows ? l : r;
  const structured_node<T>& m = rows ? r : l;
  std::vector<T> factors(rows ? c.rows : c.cols);
  for (std::size_t i = 0; i < factors.size(); ++i) factors[i] = diagonal_entry(d, i, inverted);
  const T* f = factors.data();
  if (m.transposed || m.diagonal_vector || is_triangular(m.kind)) {
    for_each_index<Space>(c.cols, [&, f, inverted](std::size_t j) {
      for (std::size_t i = 0; i < c.rows; ++i) {
        c.data[i + j * c.ld] = apply_diagonal(m.masked_at(i, j), rows ? f[i] : f[j], inverted);
      }
    });
    return;
  }
  for_each_index<Space>(c.cols, [&, f, inverted](std::size_t j) {  // both column-major: one pass in memory order
    const T* from = m.data + j * m.ld;
    T* to = c.data + j * c.ld;
    if (rows) {
      for (std::size_t i = 0; i < c.rows; ++i) to[i] = apply_diagonal(from[i], f[i], inverted);
    } else {
      for (std::size_t i = 0; i < c.rows; ++i) to[i] = apply_diagonal(from[i], f[j], inverted);
    }
  });
}

// c = D_left M D_right in one pass, for two scalings in a row (D M) D or D (M D): the
// intermediate is never written. Each diagonal may be used inverted.
template <class Space, class T>
void scale_both(const structured_node<T>& left, bool left_inverted, const structured_node<T>& m, const structured_node<T>& right,
                bool right_inverted, const structured_node<T>& c) {
  std::vector<T> row_factors(c.rows), col_factors(c.cols);
  for (std::size_t i = 0; i < c.rows; ++i) row_factors[i] = diagonal_entry(left, i, left_inverted);
  for (std::size_t j = 0; j < c.cols; ++j) col_factors[j] = diagonal_entry(right, j, right_inverted);
  const bool plain = !m.diagonal_vector && !is_triangular(m.kind) && m.transposed == c.transposed;
  const T* rf = row_factors.data();
  const T* cf = col_factors.data();
  const bool li = left_inverted, ri = right_inverted;
  const auto both = [li, ri](T x, T row, T col) { return apply_diagonal(apply_diagonal(x, row, li), col, ri); };
  if (c.transposed) {  // row-major c: rows outermost
    for_each_index<Space>(c.rows, [&, rf, cf, plain](std::size_t i) {
      T* to = c.data + i * c.ld;
      if (plain) {
        const T* from = m.data + i * m.ld;
        for (std::size_t j = 0; j < c.cols; ++j) to[j] = both(from[j], rf[i], cf[j]);
      } else {
        for (std::size_t j = 0; j < c.cols; ++j) to[j] = both(m.masked_at(i, j), rf[i], cf[j]);
      }
    });
  } else {
    for_each_index<Space>(c.cols, [&, rf, cf, plain](std::size_t j) {
      T* to = c.data + j * c.ld;
      if (plain) {
        const T* from = m.data + j * m.ld;
        for (std::size_t i = 0; i < c.rows; ++i) to[i] = both(from[i], rf[i], cf[j]);
      } else {
        for (std::size_t i = 0; i < c.rows; ++i) to[i] = both(m.masked_at(i, j), rf[i], cf[j]);
      }
    });
  }
}

// A^-1 formed explicitly (TRTRI, POTRF+POTRI, SYTRF+SYTRI, GETRF+GETRI, reciprocals), owned by
// storage; the result keeps A's kind, both triangles filled for symmetric ones.
template <class T>
structured_node<T> explicit_inverse(const structured_node<T>& a, std::vector<T>& storage) {
  if (a.diagonal_vector) {
    storage.resize(a.rows);
    for (std::size_t i = 0; i < a.rows; ++i) storage[i] = T(1) / diagonal_entry(a, i, true);
    structured_node<T> d = a;
    d.data = storage.data(), d.operand = not_an_operand;
    return d;
  }
  structured_node<T> w = dense_copy(a, storage);
  const int n = static_cast<int>(a.rows), lda = w.blas_ld();
  if (n == 0) return w;
  int info = 0;
  const char lower = 'L';
  const int lwork = 64 * n;
  std::vector<T> work(static_cast<std::size_t>(lwork));
  std::vector<int> pivots(static_cast<std::size_t>(n));
  const auto fill_upper = [&] {
    for (std::size_t j = 0; j < w.cols; ++j)
      for (std::size_t i = 0; i < j; ++i) w.data[i + j * w.ld] = w.data[j + i * w.ld];
  };
  switch (explicit_inverse_kernel(a.kind)) {
    case chain_kernel::trtri: {
      const char uplo = w.uplo(), diag = w.unit();
      lapack<T>::trtri(&uplo, &diag, &n, w.data, &lda, &info);
      if (info > 0) throw_singular(a, "is singular (TRTRI info " + std::to_string(info) + ")");
      break;
    }
    case chain_kernel::potri:
      lapack<T>::potrf(&lower, &n, w.data, &lda, &info);
      if (info > 0) throw_singular(a, "is not positive definite (POTRF info " + std::to_string(info) + ")");
      lapack<T>::potri(&lower, &n, w.data, &lda, &info);
      fill_upper();
      break;
    case chain_kernel::sytri:
      lapack<T>::sytrf(&lower, &n, w.data, &lda, pivots.data(), work.data(), &lwork, &info);
      if (info > 0) throw_singular(a, "is singular (SYTRF info " + std::to_string(info) + ")");
      lapack<T>::sytri(&lower, &n, w.data, &lda, pivots.data(), work.data(), &info);
      fill_upper();
      break;
    default:
      lapack<T>::getrf(&n, &n, w.data, &lda, pivots.data(), &info);
      if (info > 0) throw_singular(a, "is singular (GETRF info " + std::to_string(info) + ")");
      lapack<T>::getri(&n, w.data, &lda, pivots.data(), work.data(), &lwork, &info);
      break;
  }
  w.operand = not_an_operand;
  return w;
}

// The host backend of detail::evaluate_structured_plan (structured_evaluator.hpp). Inverted
// factors to be used explicitly have been replaced by their inverses (use none) before a product.
template <class Space>
struct host_lapack_kernels {
  // Where operands' factorizations are kept: a user's cache (ordo::evaluate(cache, ...)), or one
  // of this evaluation's own, which still shares them between the solves of one chain.
  factorization_cache* shared = nullptr;
  mutable factorization_cache own;
  template <class T>
  factorization_store<T>& factorizations() const {
    return (shared != nullptr ? *shared : own).template store<T>();
  }

  // An explicit inverse's storage (a vector, as LAPACK's workspaces), or uninitialized memory
  // for the workspace: every intermediate is written before it is read.
  template <class T>
  struct buffer {
    std::vector<T> values;
    std::unique_ptr<T[]> uninitialized;
  };

  // Asked for huge pages: a large intermediate is streamed through by BLAS.
  template <class T>
  T* allocate(buffer<T>& storage, std::size_t elements) const {
    storage.uninitialized.reset(new T[elements]);
    advise_huge_pages(storage.uninitialized.get(), elements * sizeof(T));
    return storage.uninitialized.get();
  }
  void finish() const {}
  template <class T>
  void copy_masked(const structured_node<T>& from, const structured_node<T>& to) const {
    for (std::size_t j = 0; j < to.cols; ++j)
      for (std::size_t i = 0; i < to.rows; ++i) to.data[to.offset(i, j)] = from.masked_at(i, j);
  }
  template <class T>
  structured_node<T> explicit_inverse(const structured_node<T>& a, buffer<T>& storage) const {
    return detail::explicit_inverse(a, storage.values);
  }
  template <class T>
  void scale_both(const structured_node<T>& left, bool left_inverted, const structured_node<T>& m,
                  const structured_node<T>& right, bool right_inverted, const structured_node<T>& c) const {
    detail::scale_both<Space>(left, left_inverted, m, right, right_inverted, c);
  }
  template <class T>
  void column_major_product(const structured_product& step, const structured_node<T>& l, const structured_node<T>& r,
                            const structured_node<T>& c) const {
    const bool left = step.side == factor_side::left;
    switch (step.kernel) {
      case chain_kernel::gemm:
      case chain_kernel::gemv:
      case chain_kernel::dot: return general_product(l, r, c);
      case chain_kernel::trmm:
      case chain_kernel::trmv: return triangular_product(left ? l : r, left ? r : l, c, step.side, false);
      case chain_kernel::trsm:
      case chain_kernel::trsv: return triangular_product(left ? l : r, left ? r : l, c, step.side, true);
      case chain_kernel::syrk: return gram_product(l, c);
      case chain_kernel::posv:
      case chain_kernel::sysv:
      case chain_kernel::gesv:
        // X A^-1 = (A^-T X^T)^T: the right-side solve is the left one of the transposes.
        return left ? dense_solve_left(l, r, c, step.kernel, factorizations<T>())
                    : dense_solve_left(r.flipped(), l.flipped(), c.flipped(), step.kernel, factorizations<T>());
      default: return scaling<Space>(l, r, c, step);
    }
  }
};

}  // namespace ordo::detail

#endif

#endif
