#ifndef ORDO_CORE_DETAIL_CHAIN_TRIANGULATION_HPP
#define ORDO_CORE_DETAIL_CHAIN_TRIANGULATION_HPP

// What every chain planner hands to the plan builder: the tree as the split of each product in
// pre-order (root first, then the left subtree, then the right). Split k of the product of
// operands first..last means (A_first..A_k)(A_k+1..A_last), 0-based, as in the DP's split table.
//
// The polygon planners (Hu–Shing, the approximation) find a triangulation instead. The chain
// d0..dn is the polygon V0..Vn with weights d: side V(i-1)Vi is operand Ai, side V0Vn the result,
// and a triangle Va Vb Vc (a < b < c) is the product of operands a..c-1 split before operand b
// (Hu and Shing, Part I, section 2). The conversion below is linear and uses no recursion.

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace ordo::detail {

// Asks scratch_array for elements that the caller writes before reading them.
struct for_overwrite_t {};
inline constexpr for_overwrite_t for_overwrite{};

// A fixed-size array on the heap for the planners' work space and a run-time plan's storage,
// value-initialized (zeros). Not std::vector: constant evaluation charges std::vector(n, value)
// and push_back about two dozen steps per element (clang 14 counts them against
// -fconstexpr-steps, and cannot evaluate libstdc++ 12's vector(n) at all); new T[n]() costs
// none. And <vector> was a quarter of what <ordo/core/chain.hpp> cost a translation unit (issue
// 30). At run time the for_overwrite form skips the zeroing, which for a million-matrix chain
// costs more than the planning itself.
template <class T>
class scratch_array {
 public:
  using value_type = T;

  constexpr scratch_array() noexcept = default;
  constexpr explicit scratch_array(std::size_t size) : data_(size == 0 ? nullptr : new T[size]()), size_(size) {}
  constexpr scratch_array(std::size_t size, for_overwrite_t) : size_(size) {
    if (size == 0) return;
    if (std::is_constant_evaluated()) {
      data_ = new T[size]();
    } else {
      data_ = new T[size];
    }
  }
  constexpr scratch_array(scratch_array&& other) noexcept : data_(other.data_), size_(other.size_) {
    other.data_ = nullptr;
    other.size_ = 0;
  }
  constexpr scratch_array& operator=(scratch_array&& other) noexcept {
    T* const data = data_;
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
    delete[] data;
    return *this;
  }
  constexpr scratch_array(const scratch_array& other) : scratch_array(other.size_, for_overwrite) {
    for (std::size_t i = 0; i < size_; ++i) data_[i] = other.data_[i];
  }
  constexpr scratch_array& operator=(const scratch_array& other) {
    if (this != &other) *this = scratch_array(other);
    return *this;
  }
  constexpr ~scratch_array() { delete[] data_; }

  constexpr T* data() noexcept { return data_; }
  constexpr const T* data() const noexcept { return data_; }
  constexpr std::size_t size() const noexcept { return size_; }
  constexpr T& operator[](std::size_t i) noexcept { return data_[i]; }
  constexpr const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  constexpr const T* begin() const noexcept { return data_; }
  constexpr const T* end() const noexcept { return data_ + size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

using preorder_splits = scratch_array<std::uint32_t>;

// The pre-order splits of the tree in a DP's split table: split_at(first, last) is the k of range
// first..last (n matrices, 0-based). For the dense DP and the structured one alike.
template <class SplitAt>
constexpr preorder_splits splits_of_table(std::size_t n, const SplitAt& split_at) {
  preorder_splits splits(n - 1, for_overwrite);
  if (n == 1) return splits;
  struct range {
    std::size_t first, last;
  };
  scratch_array<range> pending(n, for_overwrite);
  std::size_t depth = 0, written = 0;
  pending[depth++] = {0, n - 1};
  while (depth > 0) {
    const range r = pending[--depth];
    const std::size_t k = split_at(r.first, r.last);
    splits[written++] = static_cast<std::uint32_t>(k);
    if (k + 1 != r.last) pending[depth++] = {k + 1, r.last};
    if (r.first != k) pending[depth++] = {r.first, k};
  }
  return splits;
}

struct polygon_triangle {
  std::uint32_t a, b, c;  // vertices, any order
};

// The pre-order splits of the tree of a triangulation of the (vertices)-gon: count = vertices - 2
// triangles that triangulate it.
constexpr preorder_splits splits_of_triangulation(const polygon_triangle* triangles, std::size_t count,
                                                  std::size_t vertices) {
  preorder_splits splits(count, for_overwrite);
  if (count == 0) return splits;
  // Node [a, c] (vertex interval, a < c) has split b. Pre-order meets the nodes that share a left
  // end a along one left spine, outermost first: sort by c descending, then stably by a.
  scratch_array<std::uint32_t> work(4 * count, for_overwrite);
  std::uint32_t* low = work.data();
  std::uint32_t* mid = low + count;
  std::uint32_t* by_high = mid + count;
  std::uint32_t* order = by_high + count;
  scratch_array<std::size_t> counts(2 * (vertices + 1));
  std::size_t* bucket = counts.data();
  std::size_t* next_of = bucket + (vertices + 1);
  struct span_of_vertices {
    std::size_t a, c;
  };
  for (std::size_t t = 0; t < count; ++t) {
    std::uint32_t a = triangles[t].a, b = triangles[t].b, c = triangles[t].c;
    if (a > b) { const std::uint32_t x = a; a = b; b = x; }
    if (b > c) { const std::uint32_t x = b; b = c; c = x; }
    if (a > b) { const std::uint32_t x = a; a = b; b = x; }
    low[t] = a, mid[t] = b;
    by_high[t] = c;  // the high end, until the counting sort below overwrites it
  }
  // A loop of its own: clang 14 -O2 -mavx2 vectorized the histogram inside the loop above
  // wrongly (chain_test_avx2 crashed; every other build passed).
  for (std::size_t t = 0; t < count; ++t) ++bucket[vertices - 1 - by_high[t]];
  for (std::size_t v = 0, sum = 0; v <= vertices; ++v) {
    const std::size_t here = bucket[v];
    bucket[v] = sum;
    sum += here;
  }
  for (std::size_t t = 0; t < count; ++t) order[bucket[vertices - 1 - by_high[t]]++] = static_cast<std::uint32_t>(t);
  for (std::size_t t = 0; t < count; ++t) ++next_of[low[t]];
  for (std::size_t v = 0, sum = 0; v <= vertices; ++v) {
    const std::size_t here = next_of[v];
    next_of[v] = bucket[v] = sum;
    sum += here;
  }
  for (std::size_t i = 0; i < count; ++i) by_high[next_of[low[order[i]]]++] = order[i];
  // by_high now lists the triangles by left end, each left end's outermost first; bucket[a] is
  // where left end a begins.

  scratch_array<span_of_vertices> stack_space(count + 1, for_overwrite);
  span_of_vertices* stack = stack_space.data();
  std::size_t depth = 0;
  stack[depth++] = {0, vertices - 1};
  std::uint32_t* out = splits.data();
  while (depth > 0) {
    const span_of_vertices s = stack[--depth];
    const std::size_t b = mid[by_high[bucket[s.a]++]];
    *out++ = static_cast<std::uint32_t>(b - 1);
    if (s.c - b >= 2) stack[depth++] = {b, s.c};
    if (b - s.a >= 2) stack[depth++] = {s.a, b};
  }
  return splits;
}

}  // namespace ordo::detail

#endif
