#ifndef ORDO_KERNELS_FACTORIZATION_CACHE_HPP
#define ORDO_KERNELS_FACTORIZATION_CACHE_HPP

// ordo::factorization_cache: factorizations of structured chains' operands, shared between the
// chains evaluated with it. Generalized least squares solves against one SPD matrix in two
// chains, (X^T M^-1 X) and X^T M^-1 y; each evaluation would factor M:
//
//   ordo::factorization_cache cache;
//   ordo::evaluate(cache, plan_xmx, s, X, M, X);   // POTRF of M, kept
//   ordo::evaluate(cache, plan_xmy, t, X, M, y);   // M's factor reused: POTRS only
//
// Within one evaluation the sharing is automatic, cache or not: an operand that a plan solves
// against twice (M^-1 A M^-1) is factored once. A factor is reused only for the same memory, the
// same extents, the same solve (POSV, SYSV, GESV) and the same elements as read (transposed or not):
// each lookup hashes the operand's elements (one pass over n^2 values, against the n^3 / 3 of a
// factorization), so a matrix changed or freed and reallocated in the meantime is factored anew.
// Served by the host BLAS/LAPACK backend; ordo's portable kernels factor each time (not yet
// shared). Not thread-safe: one cache per thread of evaluations.

#include <ordo/core/chain_kernel.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <type_traits>
#include <utility>
#include <vector>

namespace ordo {

namespace detail {

// One factored operand: what identifies it, and LAPACK's factor (column-major, n x n, leading
// dimension n) with its pivots (SYTRF, GETRF).
template <class T>
struct operand_factorization {
  const T* source = nullptr;
  std::size_t order = 0, ld = 0;
  chain_kernel kernel = chain_kernel::posv;
  std::uint64_t elements_hash = 0;
  std::vector<T> factor;
  std::vector<int> pivots;
};

// A 64-bit hash of the n x n elements of an operand stored with leading dimension ld, as read
// (transposed or not): the sum over its elements of splitmix64's mixer of (bits, row, column).
// A sum does not depend on the order of its terms, so memory is read in order (not with the
// stride of a transposed read), the terms are independent of each other (no chain of multiply
// latencies), and a matrix and its transpose hash the same exactly when it is symmetric (an SPD
// operand solved from both sides shares its factor).
template <class T>
std::uint64_t hash_elements(const T* data, std::size_t order, std::size_t ld, bool transposed) {
  using bits_type = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  std::uint64_t h = order;
  for (std::size_t u = 0; u < order; ++u) {
    const T* line = data + u * ld;  // offset j + i ld read transposed, i + j ld otherwise
    for (std::size_t v = 0; v < order; ++v) {
      const std::uint64_t row = transposed ? u : v, column = transposed ? v : u;
      std::uint64_t z = std::uint64_t{std::bit_cast<bits_type>(line[v])} ^ (row * 0x9e3779b97f4a7c15u) ^
                        (column * 0xc2b2ae3d27d4eb4fu);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
      h += z ^ (z >> 31);
    }
  }
  return h;
}

template <class T>
class factorization_store {
 public:
  // The factorization of these elements for this solve, or null.
  // The transposition is not compared: the hash is of the elements as read, so an SPD or
  // symmetric operand solved from the left and from the right (M^-1 A M^-1) shares its factor.
  const operand_factorization<T>* find(const T* source, std::size_t order, std::size_t ld, chain_kernel kernel,
                                       std::uint64_t elements_hash) {
    for (const operand_factorization<T>& f : factors_) {
      if (f.source == source && f.order == order && f.ld == ld && f.kernel == kernel &&
          f.elements_hash == elements_hash) {
        ++reused_;
        return &f;
      }
    }
    return nullptr;
  }
  // Keeps a new factorization (a deque: earlier ones stay where they are).
  const operand_factorization<T>& add(operand_factorization<T> f) {
    ++computed_;
    return factors_.emplace_back(std::move(f));
  }
  std::size_t computed() const noexcept { return computed_; }
  std::size_t reused() const noexcept { return reused_; }
  void clear() noexcept {
    factors_.clear();
    computed_ = reused_ = 0;
  }

 private:
  std::deque<operand_factorization<T>> factors_;
  std::size_t computed_ = 0, reused_ = 0;
};

}  // namespace detail

class factorization_cache {
 public:
  // Factorizations computed while this cache was used, and solves that reused one instead.
  std::size_t factorizations() const noexcept { return floats_.computed() + doubles_.computed(); }
  std::size_t reuses() const noexcept { return floats_.reused() + doubles_.reused(); }
  // Forgets every factor (and the counts): their memory is released.
  void clear() noexcept {
    floats_.clear();
    doubles_.clear();
  }

  // The store for one scalar type (the host backend's float and double).
  template <class T>
  detail::factorization_store<T>& store() noexcept {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                  "ordo::factorization_cache holds LAPACK's float and double factors");
    if constexpr (std::is_same_v<T, float>) {
      return floats_;
    } else {
      return doubles_;
    }
  }

 private:
  detail::factorization_store<float> floats_;
  detail::factorization_store<double> doubles_;
};

}  // namespace ordo

#endif
