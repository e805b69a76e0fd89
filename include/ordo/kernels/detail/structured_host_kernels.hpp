#ifndef ORDO_KERNELS_DETAIL_STRUCTURED_HOST_KERNELS_HPP
#define ORDO_KERNELS_DETAIL_STRUCTURED_HOST_KERNELS_HPP

// The products of a structured chain plan on the host, with BLAS and LAPACK (host_lapack.hpp):
// one function per chain_kernel family, each writing a column-major result. A node is a matrix
// as column-major BLAS sees it: op(S) for a column-major S with leading dimension ld, as
// blas_operand.hpp describes Views; an ordo::matrix (row-major) is S^T. A result that is itself
// row-major (the root, written into the caller's matrix) is computed as its transpose: C = L R
// is C^T = R^T L^T, the mirrored product (run_structured_product).

#include <ordo/core/structured_product.hpp>
#include <ordo/kernels/detail/blas_gemm.hpp>
#include <ordo/kernels/detail/blas_gemv.hpp>
#include <ordo/kernels/detail/host_lapack.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(ORDO_HAS_LAPACK)

namespace ordo::detail {

inline constexpr std::size_t not_an_operand = ~std::size_t{0};

template <class T>
struct host_node {
  T* data = nullptr;
  std::size_t rows = 0, cols = 0, ld = 1;
  bool transposed = false;  // the node is S^T
  matrix_kind kind = matrix_kind::general;
  bool diagonal_vector = false;  // stored as its diagonal: element i at data[i]
  bool clean = true;             // a triangular node holds zeros outside its triangle (not a user's leaf)
  std::size_t operand = not_an_operand;  // which operand it is, for error messages
  matrix_kind declared = matrix_kind::general;  // the operand's kind as the user declared it (messages)

  T at(std::size_t i, std::size_t j) const noexcept {
    if (diagonal_vector) return i == j ? data[i] : T(0);
    return transposed ? data[j + i * ld] : data[i + j * ld];
  }
  // As a triangular operand reads it: zero outside its triangle, one on a unit diagonal.
  T masked_at(std::size_t i, std::size_t j) const noexcept {
    if (is_triangular(kind)) {
      if (is_lower_family(kind) ? j > i : j < i) return T(0);
      if (i == j && (kind == matrix_kind::unit_lower || kind == matrix_kind::unit_upper)) return T(1);
    }
    return at(i, j);
  }
  host_node flipped() const noexcept {
    host_node t = *this;
    t.rows = cols, t.cols = rows, t.transposed = !transposed, t.kind = transposed_kind(kind);
    return t;
  }
  // BLAS's view of S: which triangle it stores, and whether the node is its transpose.
  char uplo() const noexcept { return is_lower_family(kind) != transposed ? 'L' : 'U'; }
  char trans() const noexcept { return transposed ? 'T' : 'N'; }
  char unit() const noexcept { return kind == matrix_kind::unit_lower || kind == matrix_kind::unit_upper ? 'U' : 'N'; }
  int blas_ld() const noexcept { return static_cast<int>(ld); }
};

template <class T>
host_node<T> column_major_node(T* data, std::size_t rows, std::size_t cols, matrix_kind kind) {
  return {data, rows, cols, rows > 0 ? rows : 1, false, kind, false, true, not_an_operand, kind};
}

template <class T>
[[noreturn]] void throw_singular(const host_node<T>& a, const std::string& what) {
  const std::size_t operand = a.operand, order = a.rows;
  const matrix_kind kind = a.declared;
  throw std::runtime_error("ordo::evaluate(structured chain): A" + std::to_string(operand + 1) + " (" +
                           std::string(kind_name(kind)) + ", " + std::to_string(order) + "x" + std::to_string(order) +
                           ") " + what);
}

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
void copy_into(const host_node<T>& src, T* dst, std::size_t ld) {
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
host_node<T> dense_copy(const host_node<T>& src, std::vector<T>& storage) {
  storage.assign(src.rows * src.cols, T(0));
  copy_into(src, storage.data(), src.rows);
  host_node<T> copy = column_major_node(storage.data(), src.rows, src.cols, src.kind);
  copy.operand = src.operand;
  copy.declared = src.declared;
  return copy;
}

// A node with one column or one row as a BLAS vector: its first element and increment.
template <class T>
int vector_increment(const host_node<T>& v) noexcept {
  const bool along_rows = v.cols == 1;  // a column: elements (i, 0)
  return static_cast<int>(along_rows == v.transposed ? v.ld : 1);
}

template <class T>
void general_product(const host_node<T>& l, const host_node<T>& r, const host_node<T>& c) {
  std::vector<T> l_copy, r_copy;  // a user's triangle is read as a triangle, even by GEMM
  const host_node<T> a = is_triangular(l.kind) && !l.clean ? dense_copy(l, l_copy) : l;
  const host_node<T> b = is_triangular(r.kind) && !r.clean ? dense_copy(r, r_copy) : r;
  if (c.rows == 0 || c.cols == 0) return;
  if (a.cols == 0) {
    for (std::size_t j = 0; j < c.cols; ++j)
      for (std::size_t i = 0; i < c.rows; ++i) c.data[i + j * c.ld] = T(0);
    return;
  }
  // Matrix-vector products by GEMV: c = A x (a column), or c^T = B^T x^T (a row).
  if ((c.cols == 1 && c.rows > 1) || (c.rows == 1 && c.cols > 1)) {
    const bool column = c.cols == 1;
    const host_node<T>& matrix = column ? a : b;
    const host_node<T>& vector = column ? b : a;
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
void triangular_product(const host_node<T>& tri, const host_node<T>& other, const host_node<T>& c, factor_side side,
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
void gram_product(const host_node<T>& left, const host_node<T>& c) {
  const int n = static_cast<int>(c.rows), k = static_cast<int>(left.cols), lda = left.blas_ld(), ldc = c.blas_ld();
  const char uplo = 'L', trans = left.transposed ? 'T' : 'N';
  const T one(1), zero(0);
  if (n == 0) return;
  lapack<T>::syrk(&uplo, &trans, &n, &k, &one, left.data, &lda, &zero, c.data, &ldc);
  for (std::size_t j = 0; j < c.cols; ++j)
    for (std::size_t i = 0; i < j; ++i) c.data[i + j * c.ld] = c.data[j + i * c.ld];
}

// c = A^-1 B for a general, symmetric or SPD A: LU, LDL^T or Cholesky of a copy of A, then its
// solves on c, or on a copy when c is row-major.
template <class T>
void dense_solve_left(const host_node<T>& a, const host_node<T>& b, const host_node<T>& c, chain_kernel kernel) {
  std::vector<T> factor_storage, rhs_storage;
  const host_node<T> factor = dense_copy(a, factor_storage);
  host_node<T> y = c;
  if (c.transposed) {
    y = dense_copy(b, rhs_storage);
  } else {
    copy_into(b, c.data, c.ld);
  }
  const int n = static_cast<int>(a.rows), nrhs = static_cast<int>(b.cols), lda = factor.blas_ld(), ldb = y.blas_ld();
  if (n == 0) return;
  int info = 0;
  const char lower = 'L', no_trans = 'N';
  std::vector<int> pivots(static_cast<std::size_t>(n));
  if (kernel == chain_kernel::posv) {
    lapack<T>::potrf(&lower, &n, factor.data, &lda, &info);
    if (info > 0) {
      throw_singular(a, "is not positive definite (POTRF info " + std::to_string(info) + ")");
    }
    if (nrhs > 0) lapack<T>::potrs(&lower, &n, &nrhs, factor.data, &lda, y.data, &ldb, &info);
  } else if (kernel == chain_kernel::sysv) {
    const int lwork = 64 * n;
    std::vector<T> work(static_cast<std::size_t>(lwork));
    lapack<T>::sytrf(&lower, &n, factor.data, &lda, pivots.data(), work.data(), &lwork, &info);
    if (info > 0) throw_singular(a, "is singular (SYTRF info " + std::to_string(info) + ")");
    if (nrhs > 0) lapack<T>::sytrs(&lower, &n, &nrhs, factor.data, &lda, pivots.data(), y.data, &ldb, &info);
  } else {
    lapack<T>::getrf(&n, &n, factor.data, &lda, pivots.data(), &info);
    if (info > 0) throw_singular(a, "is singular (GETRF info " + std::to_string(info) + ")");
    if (nrhs > 0) lapack<T>::getrs(&no_trans, &n, &nrhs, factor.data, &lda, pivots.data(), y.data, &ldb, &info);
  }
  if (c.transposed) {
    for (std::size_t j = 0; j < c.cols; ++j)
      for (std::size_t i = 0; i < c.rows; ++i) c.data[j + i * c.ld] = y.at(i, j);
  }
}

// The diagonal of d, or of d^-1 when inverted (a zero entry is an error, never an infinity).
template <class T>
T diagonal_entry(const host_node<T>& d, std::size_t i, bool inverted) {
  const T value = d.data[i];
  if (!inverted) return value;
  if (value == T(0)) {
    throw_singular(d, "is singular: its diagonal entry " + std::to_string(i + 1) + " is 0");
  }
  return T(1) / value;
}

template <class Space, class T>
void scaling(const host_node<T>& l, const host_node<T>& r, const host_node<T>& c, const structured_product& step) {
  const bool li = step.left_inverse == inverse_use::solve, ri = step.right_inverse == inverse_use::solve;
  if (step.kernel == chain_kernel::diagonal_product) {
    for (std::size_t i = 0; i < c.rows; ++i) c.data[i] = diagonal_entry(l, i, li) * diagonal_entry(r, i, ri);
    return;
  }
  const bool rows = step.kernel == chain_kernel::scale_rows;
  const host_node<T>& d = rows ? l : r;
  const host_node<T>& m = rows ? r : l;
  std::vector<T> factors(rows ? c.rows : c.cols);
  for (std::size_t i = 0; i < factors.size(); ++i) factors[i] = diagonal_entry(d, i, rows ? li : ri);
  const T* f = factors.data();
  if (m.transposed || m.diagonal_vector || is_triangular(m.kind)) {
    for_each_index<Space>(c.cols, [&, f](std::size_t j) {
      for (std::size_t i = 0; i < c.rows; ++i) c.data[i + j * c.ld] = (rows ? f[i] : f[j]) * m.masked_at(i, j);
    });
    return;
  }
  for_each_index<Space>(c.cols, [&, f](std::size_t j) {  // both column-major: one pass in memory order
    const T* from = m.data + j * m.ld;
    T* to = c.data + j * c.ld;
    if (rows) {
      for (std::size_t i = 0; i < c.rows; ++i) to[i] = f[i] * from[i];
    } else {
      for (std::size_t i = 0; i < c.rows; ++i) to[i] = f[j] * from[i];
    }
  });
}

// c = D_left M D_right in one pass, for two scalings in a row (D M) D or D (M D): the
// intermediate is never written. Each diagonal may be used inverted.
template <class Space, class T>
void scale_both(const host_node<T>& left, bool left_inverted, const host_node<T>& m, const host_node<T>& right,
                bool right_inverted, const host_node<T>& c) {
  std::vector<T> row_factors(c.rows), col_factors(c.cols);
  for (std::size_t i = 0; i < c.rows; ++i) row_factors[i] = diagonal_entry(left, i, left_inverted);
  for (std::size_t j = 0; j < c.cols; ++j) col_factors[j] = diagonal_entry(right, j, right_inverted);
  const bool plain = !m.diagonal_vector && !is_triangular(m.kind) && m.transposed == c.transposed;
  const T* rf = row_factors.data();
  const T* cf = col_factors.data();
  if (c.transposed) {  // row-major c: rows outermost
    for_each_index<Space>(c.rows, [&, rf, cf, plain](std::size_t i) {
      T* to = c.data + i * c.ld;
      if (plain) {
        const T* from = m.data + i * m.ld;
        for (std::size_t j = 0; j < c.cols; ++j) to[j] = rf[i] * from[j] * cf[j];
      } else {
        for (std::size_t j = 0; j < c.cols; ++j) to[j] = rf[i] * m.masked_at(i, j) * cf[j];
      }
    });
  } else {
    for_each_index<Space>(c.cols, [&, rf, cf, plain](std::size_t j) {
      T* to = c.data + j * c.ld;
      if (plain) {
        const T* from = m.data + j * m.ld;
        for (std::size_t i = 0; i < c.rows; ++i) to[i] = rf[i] * from[i] * cf[j];
      } else {
        for (std::size_t i = 0; i < c.rows; ++i) to[i] = rf[i] * m.masked_at(i, j) * cf[j];
      }
    });
  }
}

// A^-1 formed explicitly (TRTRI, POTRF+POTRI, SYTRF+SYTRI, GETRF+GETRI, reciprocals), owned by
// storage; the result keeps A's kind, both triangles filled for symmetric ones.
template <class T>
host_node<T> explicit_inverse(const host_node<T>& a, std::vector<T>& storage) {
  if (a.diagonal_vector) {
    storage.resize(a.rows);
    for (std::size_t i = 0; i < a.rows; ++i) storage[i] = diagonal_entry(a, i, true);
    host_node<T> d = a;
    d.data = storage.data(), d.operand = not_an_operand;
    return d;
  }
  host_node<T> w = dense_copy(a, storage);
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

// One product into c, which is column-major (transposed false). Inverted factors to be used
// explicitly have been replaced by their inverses (use none).
template <class Space, class T>
void run_column_major_product(const structured_product& step, const host_node<T>& l, const host_node<T>& r,
                              const host_node<T>& c) {
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
      return left ? dense_solve_left(l, r, c, step.kernel) : dense_solve_left(r.flipped(), l.flipped(), c.flipped(), step.kernel);
    default: return scaling<Space>(l, r, c, step);
  }
}

// One product into c, column-major or row-major: a row-major c = L R is computed as the
// column-major c^T = R^T L^T, sides and inverse uses swapped.
template <class Space, class T>
void run_structured_product(structured_product step, const host_node<T>& l, const host_node<T>& r,
                            const host_node<T>& c) {
  if (!c.transposed || c.diagonal_vector) return run_column_major_product<Space>(step, l, r, c);
  structured_product mirrored = step;
  mirrored.side = step.side == factor_side::left ? factor_side::right : factor_side::left;
  mirrored.left_inverse = step.right_inverse, mirrored.right_inverse = step.left_inverse;
  mirrored.rows = step.cols, mirrored.cols = step.rows;
  if (step.kernel == chain_kernel::scale_rows) mirrored.kernel = chain_kernel::scale_cols;
  if (step.kernel == chain_kernel::scale_cols) mirrored.kernel = chain_kernel::scale_rows;
  run_column_major_product<Space>(mirrored, r.flipped(), l.flipped(), c.flipped());
}

}  // namespace ordo::detail

#endif

#endif
