#ifndef ORDO_TESTS_SUPPORT_LONG_DOUBLE_MATRIX_HPP
#define ORDO_TESTS_SUPPORT_LONG_DOUBLE_MATRIX_HPP

// Dense long double matrices for the structured-chain oracles: products, transposes, entrywise
// absolute values and Gauss-Jordan inverses with partial pivoting. Shares no code with ordo.

#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace ordo_test {

using long_matrix = std::vector<std::vector<long double>>;

inline long_matrix zeros(std::size_t rows, std::size_t cols) {
  return long_matrix(rows, std::vector<long double>(cols, 0));
}

inline long_matrix product(const long_matrix& a, const long_matrix& b) {
  const std::size_t r = a.size(), k = b.size(), c = b.empty() ? 0 : b[0].size();
  long_matrix p = zeros(r, c);
  for (std::size_t i = 0; i < r; ++i)
    for (std::size_t t = 0; t < k; ++t)
      for (std::size_t j = 0; j < c; ++j) p[i][j] += a[i][t] * b[t][j];
  return p;
}

inline long_matrix transposed(const long_matrix& a) {
  long_matrix t = zeros(a.empty() ? 0 : a[0].size(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < a[i].size(); ++j) t[j][i] = a[i][j];
  return t;
}

inline long_matrix absolute(long_matrix a) {
  for (auto& row : a)
    for (auto& e : row) e = std::fabs(e);
  return a;
}

inline long_matrix inverse(long_matrix a) {
  const std::size_t n = a.size();
  long_matrix x = zeros(n, n);
  for (std::size_t i = 0; i < n; ++i) x[i][i] = 1;
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t pivot = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[pivot][c])) pivot = r;
    std::swap(a[c], a[pivot]);
    std::swap(x[c], x[pivot]);
    const long double p = a[c][c];
    for (std::size_t j = 0; j < n; ++j) a[c][j] /= p, x[c][j] /= p;
    for (std::size_t r = 0; r < n; ++r) {
      if (r == c) continue;
      const long double f = a[r][c];
      for (std::size_t j = 0; j < n; ++j) a[r][j] -= f * a[c][j], x[r][j] -= f * x[c][j];
    }
  }
  return x;
}

}  // namespace ordo_test

#endif
