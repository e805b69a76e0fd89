#ifndef ORDO_CORE_DETAIL_HU_SHING_HPP
#define ORDO_CORE_DETAIL_HU_SHING_HPP

// Exact matrix-chain ordering in O(n log n): the minimum-cost triangulation of a convex polygon,
// T. C. Hu and M. T. Shing, "Computation of Matrix Chain Products", Part I, SIAM J. Comput.
// 11(2):362-373, 1982, and Part II, SIAM J. Comput. 13(2):228-251, 1984. O. Schwartz and
// E. Weiss, "Revisiting 'Computation of Matrix Chain Products'", SIAM J. Comput. 48(5), 2019
// (arXiv:1804.04021), found a flaw in the proof of one of the original lemmas and repaired it;
// the steps below are the original algorithm's. Their correctness here rests on tests against
// the O(n^3) dynamic program and exhaustive search (tests/planner_test.cpp, tests/fuzz).
//
// The chain d0..dn is the polygon V0..Vn with weights d (chain_triangulation.hpp); a triangle
// costs the product of its three weights. Steps:
//  1. Relabel the polygon cyclically so that the smallest vertex is first. Equal weights are
//     ordered by position after it, which makes every comparison of vertices strict.
//  2. The one-sweep algorithm (Part I) lists the potential h-arcs: arcs Vu-Vv whose interior
//     vertices all come after both ends in that order. They nest, and arrive children first.
//  3. Bottom up (Part II), each arc h keeps the sub-polygon under it fanned from its smaller
//     end, unless an arc below h is worth removing. Arc g with fan region cost C and outline
//     (its region's sides, without g) sum L has the supporting weight S(g) = C / (L - w(g's
//     ends)): the region above g does no worse without g exactly when the vertex it fans from
//     weighs at most S(g). Supports below the current arc sit in a mergeable max-heap (a leftist
//     heap here); arcs removed together, or kept together because the upper one's support does
//     not exceed the lower one's, form one heap entry whose numerator and denominator are the
//     sums of its members'.
//  4. The kept arcs cut the polygon into regions, each fanned from its smallest vertex.
// The public implementation of junodeveloper/Hu-Shing (C++, cost only) was read for the shape of
// step 3; this one keeps the tree, breaks ties by the strict order of step 1, compares supports
// exactly (cross products in 128 bits; in 256 when the chain's sums may pass 64 bits, with 128-bit
// sums; in 512 when they may pass 128 bits, dims beyond 2^30) and uses
// no recursion deeper than the leftist heap's O(log n) merge.

#include <ordo/core/chain_error.hpp>
#include <ordo/core/detail/chain_triangulation.hpp>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

namespace ordo::detail {

// a * b as (high, low) words.
struct double_word {
  std::uint64_t high, low;
  friend constexpr bool operator<(const double_word& x, const double_word& y) noexcept {
    return x.high != y.high ? x.high < y.high : x.low < y.low;
  }
};

constexpr double_word multiply_exactly(std::uint64_t a, std::uint64_t b) noexcept {
#if defined(__SIZEOF_INT128__)
  __extension__ typedef unsigned __int128 product_type;
  const product_type p = static_cast<product_type>(a) * b;
  return {static_cast<std::uint64_t>(p >> 64), static_cast<std::uint64_t>(p)};
#else
  const std::uint64_t a_lo = a & 0xffffffffu, a_hi = a >> 32, b_lo = b & 0xffffffffu, b_hi = b >> 32;
  const std::uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi;
  const std::uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xffffffffu) + lo_hi;
  return {a_hi * b_hi + (hi_lo >> 32) + (cross >> 32), (cross << 32) | (lo_lo & 0xffffffffu)};
#endif
}

// Exact unsigned integers of Limbs 64-bit words, for chains whose sums pass 128 bits.
template <std::size_t Limbs>
struct wide_unsigned {
  std::array<std::uint64_t, Limbs> limb{};

  constexpr wide_unsigned() = default;
  constexpr wide_unsigned(std::uint64_t value) noexcept { limb[0] = value; }  // NOLINT: implicit

  friend constexpr wide_unsigned operator+(const wide_unsigned& x, const wide_unsigned& y) noexcept {
    wide_unsigned sum;
    std::uint64_t carry = 0;
    for (std::size_t i = 0; i < Limbs; ++i) {
      const std::uint64_t partial = x.limb[i] + carry;
      const std::uint64_t carried = partial < carry ? 1 : 0;
      sum.limb[i] = partial + y.limb[i];
      carry = carried + (sum.limb[i] < partial ? 1 : 0);
    }
    return sum;
  }
  friend constexpr wide_unsigned operator-(const wide_unsigned& x, const wide_unsigned& y) noexcept {
    wide_unsigned difference;
    std::uint64_t borrow = 0;
    for (std::size_t i = 0; i < Limbs; ++i) {
      const std::uint64_t subtrahend = y.limb[i] + borrow;
      const std::uint64_t borrowed = subtrahend < borrow ? 1 : 0;
      difference.limb[i] = x.limb[i] - subtrahend;
      borrow = borrowed + (x.limb[i] < subtrahend ? 1 : 0);
    }
    return difference;
  }
  // Truncated to Limbs words; callers keep every product in range.
  friend constexpr wide_unsigned operator*(const wide_unsigned& x, const wide_unsigned& y) noexcept {
    wide_unsigned product;
    for (std::size_t i = 0; i < Limbs; ++i) {
      std::uint64_t carry = 0;
      for (std::size_t j = 0; i + j < Limbs; ++j) {
        const double_word p = multiply_exactly(x.limb[i], y.limb[j]);
        std::uint64_t high = p.high;
        std::uint64_t low = p.low + carry;
        high += low < carry ? 1 : 0;
        const std::uint64_t before = product.limb[i + j];
        product.limb[i + j] = before + low;
        high += product.limb[i + j] < before ? 1 : 0;
        carry = high;
      }
    }
    return product;
  }
  friend constexpr bool operator<(const wide_unsigned& x, const wide_unsigned& y) noexcept {
    for (std::size_t i = Limbs; i-- > 0;) {
      if (x.limb[i] != y.limb[i]) return x.limb[i] < y.limb[i];
    }
    return false;
  }
  friend constexpr bool operator==(const wide_unsigned&, const wide_unsigned&) = default;
};

// x_num / x_den < y_num / y_den for positive denominators. One expression where the compiler has
// 128-bit integers: the heap compares supports O(n log n) times, and clang charges constant
// evaluation per call.
constexpr bool ratio_less(std::uint64_t x_num, std::uint64_t x_den, std::uint64_t y_num,
                          std::uint64_t y_den) noexcept {
#if defined(__SIZEOF_INT128__)
  __extension__ typedef unsigned __int128 product_type;
  return static_cast<product_type>(x_num) * y_den < static_cast<product_type>(y_num) * x_den;
#else
  return multiply_exactly(x_num, y_den) < multiply_exactly(y_num, x_den);
#endif
}
#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 uint128;

// a * b exactly, as (high, low) 128-bit words: four 64 x 64 products.
struct quad_word {
  uint128 high, low;
};
constexpr quad_word multiply_exactly(uint128 a, uint128 b) noexcept {
  const auto a0 = static_cast<std::uint64_t>(a), a1 = static_cast<std::uint64_t>(a >> 64);
  const auto b0 = static_cast<std::uint64_t>(b), b1 = static_cast<std::uint64_t>(b >> 64);
  const uint128 p00 = static_cast<uint128>(a0) * b0, p01 = static_cast<uint128>(a0) * b1;
  const uint128 p10 = static_cast<uint128>(a1) * b0, p11 = static_cast<uint128>(a1) * b1;
  const uint128 middle = (p00 >> 64) + static_cast<std::uint64_t>(p01) + static_cast<std::uint64_t>(p10);  // < 3 * 2^64
  return {p11 + (p01 >> 64) + (p10 >> 64) + (middle >> 64), (middle << 64) | static_cast<std::uint64_t>(p00)};
}
// The comparison of the 128-bit path: sums below 2^128, their cross products in 256 bits.
constexpr bool ratio_less(uint128 x_num, uint128 x_den, uint128 y_num, uint128 y_den) noexcept {
  const quad_word left = multiply_exactly(x_num, y_den), right = multiply_exactly(y_num, x_den);
  return left.high != right.high ? left.high < right.high : left.low < right.low;
}
constexpr std::uint64_t cost_as_uint64(uint128 cost) noexcept {
  return (cost >> 64) != 0 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(cost);
}
#endif

template <std::size_t Limbs>
constexpr bool ratio_less(const wide_unsigned<Limbs>& x_num, const wide_unsigned<Limbs>& x_den,
                          const wide_unsigned<Limbs>& y_num, const wide_unsigned<Limbs>& y_den) noexcept {
  return x_num * y_den < y_num * x_den;
}

constexpr std::uint64_t cost_as_uint64(std::uint64_t cost) noexcept { return cost; }
template <std::size_t Limbs>
constexpr std::uint64_t cost_as_uint64(const wide_unsigned<Limbs>& cost) noexcept {
  for (std::size_t i = 1; i < Limbs; ++i) {
    if (cost.limb[i] != 0) return std::numeric_limits<std::uint64_t>::max();
  }
  return cost.limb[0];
}

struct hu_shing_result {
  preorder_splits splits;
  // Scalar multiplications of the tree, as the algorithm's own sums found it; the maximum of
  // std::uint64_t when it does not fit.
  std::uint64_t cost = 0;
};

// Vertex and arc numbers: chains have fewer than 2^32 - 1 matrices (hu_shing_order checks).
using polygon_index = std::uint32_t;

// The polygon of step 1 with its first smallest vertex as V0: weight r is dims[(first + r) mod N]
// for r = 0..N (weight N repeats weight 0). Read in place rather than copied: for 10^7 matrices
// a copy would be 80 MB of the planner's peak memory (issue 30).
struct relabelled_polygon {
  const std::size_t* dims = nullptr;
  std::size_t vertices = 0;
  std::size_t first = 0;
  std::uint64_t largest = 0;

  constexpr std::uint64_t operator[](std::size_t r) const noexcept {
    const std::size_t i = first + r;
    return dims[i < vertices ? i : i - vertices];
  }
};

// Steps 2-4 on a relabelled polygon, with Number exact for every sum the steps form:
// std::uint64_t when 4 (n + 3) max(d)^3 fits, else unsigned __int128 when that fits, else 512-bit
// integers. Loops index raw arrays
// (chain_triangulation.hpp says why).
template <class Number>
class hu_shing_triangulator {
  using index = polygon_index;
  static constexpr index none = std::numeric_limits<index>::max();

 public:
  // w[r] is the weight of relabelled vertex r = 0..N-1 (w[0] smallest, and nonzero); w[N] = w[0].
  constexpr hu_shing_triangulator(const relabelled_polygon& w, index vertices)
      : w_(w), vertices_(vertices), arc_space_(vertices, for_overwrite), state_space_(vertices, for_overwrite),
        prefix_space_(vertices + std::size_t{1}), kept_space_(2 * (vertices + std::size_t{1}), for_overwrite) {
    arcs_ = arc_space_.data();
    state_ = state_space_.data();
    prefix_ = prefix_space_.data();
    kept_from_ = kept_space_.data();
    kept_to_ = kept_from_ + (vertices + std::size_t{1});
    for (std::size_t i = 0; i < kept_space_.size(); ++i) kept_from_[i] = none;
  }

  // Writes the N - 2 triangles in relabelled vertices (vertex N is vertex 0); returns the cost.
  constexpr std::uint64_t triangulate(polygon_triangle* triangles) {
    find_arcs();
    choose_arcs();
    prefix_space_ = scratch_array<Number>();  // step 4 needs no path sums: n numbers less at the peak
    prefix_ = nullptr;
    fan_regions(triangles);
    return cost_as_uint64(total_);
  }

 private:
  // A chain of 10^7 matrices lists up to 10^7 arcs, so every byte of an arc counts (issue 30's
  // 1 GB for 10^7 matrices): 48 bytes on the 64-bit path, 64 on the 128-bit one. Numbers are kept
  // in 8-byte words (unsigned __int128's 16-byte alignment would pad the arc to 80 bytes); w(u) w(v)
  // and the lower end are recomputed where needed rather than stored; a leftist heap's rank (at
  // most log2(n + 1)) and the alive flag share one byte in a parallel array.
  struct stored_number {
    std::array<std::uint64_t, (sizeof(Number) + 7) / 8> words;
  };
  static constexpr stored_number store(const Number& x) noexcept { return std::bit_cast<stored_number>(x); }
  static constexpr Number load(const stored_number& x) noexcept { return std::bit_cast<Number>(x); }
  struct arc {
    stored_number num, den;  // of the heap entry this arc heads (its group)
    index u, v;
    index heap_left, heap_right;
    index last_member, next_member;      // the group, a list from its head
    index previous_at_u, previous_at_v;  // arcs kept earlier at u (v)
  };
  static_assert(sizeof(arc) == 2 * sizeof(stored_number) + 8 * sizeof(index),
                "hu_shing_triangulator: an arc grew past its 48 (64-bit) or 64 (128-bit) bytes");
  static constexpr std::uint8_t alive_bit = 0x80, rank_bits = 0x7f;
  constexpr bool alive(index a) const noexcept { return (state_[a] & alive_bit) != 0; }
  constexpr void kill(index a) noexcept { state_[a] = static_cast<std::uint8_t>(state_[a] & rank_bits); }
  constexpr std::uint8_t heap_rank(index a) const noexcept { return static_cast<std::uint8_t>(state_[a] & rank_bits); }
  constexpr void set_heap_rank(index a, int rank) noexcept {
    state_[a] = static_cast<std::uint8_t>((state_[a] & alive_bit) | rank);
  }
  constexpr Number weight_product(const arc& a) const noexcept { return Number{w_[a.u]} * Number{w_[a.v]}; }
  // The arc's lower end in the strict order of step 1.
  constexpr index low(const arc& a) const noexcept { return vertex_less(a.u, a.v) ? a.u : a.v; }

  // Vertex a before vertex b in the strict order of step 1.
  constexpr bool vertex_less(index a, index b) const noexcept {
    return w_[a] != w_[b] ? w_[a] < w_[b] : a < b;
  }
  constexpr Number side(index a) const noexcept { return Number{w_[a]} * Number{w_[a + 1]}; }

  // Step 2: the one-sweep algorithm. A stack of vertices ascending in the strict order; a vertex
  // smaller than the top cuts the top off with the arc from the vertex below it. Arcs that touch
  // V0 are sides of the fan at V0 and are not listed.
  constexpr void find_arcs() {
    const index n = vertices_;
    scratch_array<index> stack_space(n, for_overwrite);
    index* stack = stack_space.data();
    index depth = 0;
    for (index i = 0; i < n; ++i) {
      while (depth >= 2 && vertex_less(i, stack[depth - 1])) {
        const index below = stack[depth - 2];
        if (below != 0) {
          arcs_[arc_count_] = {store(Number{0}), store(Number{0}), below, i, none, none, none, none, none, none};
          state_[arc_count_++] = alive_bit | 1;
        }
        --depth;
      }
      stack[depth++] = i;
    }
    for (index r = 0; r < n; ++r) prefix_[r + 1] = prefix_[r] + side(r);
  }

  constexpr Number path_sum(index u, index v) const { return prefix_[v] - prefix_[u]; }

  // The outline's side at the arc's lower end other than the arc: the outermost kept arc there
  // inside it, or the polygon side.
  constexpr Number side_at_low(const arc& h) {
    if (low(h) == h.u) {
      index top = kept_from_[h.u];
      while (top != none && !alive(top)) top = arcs_[top].previous_at_u;
      kept_from_[h.u] = top;
      return top != none ? weight_product(arcs_[top]) : side(h.u);
    }
    index top = kept_to_[h.v];
    while (top != none && !alive(top)) top = arcs_[top].previous_at_v;
    kept_to_[h.v] = top;
    return top != none ? weight_product(arcs_[top]) : side(h.v - 1);
  }

  // Leftist max-heap on supports; the recursion follows right spines, O(log n) deep.
  constexpr bool support_less(index x, index y) const noexcept {
    return ratio_less(load(arcs_[x].num), load(arcs_[x].den), load(arcs_[y].num), load(arcs_[y].den));
  }
  constexpr index merge(index x, index y) {
    if (x == none) return y;
    if (y == none) return x;
    if (support_less(x, y)) {
      const index s = x;
      x = y;
      y = s;
    }
    arc& top = arcs_[x];
    const index right = merge(top.heap_right, y);
    const std::uint8_t left_rank = top.heap_left == none ? 0 : heap_rank(top.heap_left);
    const std::uint8_t right_rank = heap_rank(right);
    if (left_rank < right_rank) {
      top.heap_right = top.heap_left;
      top.heap_left = right;
      set_heap_rank(x, left_rank + 1);
    } else {
      top.heap_right = right;
      set_heap_rank(x, right_rank + 1);
    }
    return x;
  }

  // Removes the heap's groups whose support reaches the fan weight (S >= weight), largest first;
  // each grows the outline by its denominator: its arcs' outlines replace the arcs themselves.
  constexpr index remove_reaching(index heap, const Number& weight, Number& outline) {
    while (heap != none && !ratio_less(load(arcs_[heap].num), load(arcs_[heap].den), weight, Number{1})) {
      const arc& g = arcs_[heap];
      outline = outline + load(g.den);
      for (index m = heap; m != none; m = arcs_[m].next_member) kill(m);
      heap = merge(g.heap_left, g.heap_right);
    }
    return heap;
  }

  // Step 3, arcs in the order the sweep listed them (children first), the whole polygon last.
  constexpr void choose_arcs() {
    const index n = vertices_;
    // Arcs done but not yet claimed by a parent, with their heaps.
    scratch_array<index> finished_space(2 * std::size_t{arc_count_} + 2, for_overwrite);
    index* finished = finished_space.data();
    index* heaps = finished + arc_count_ + 1;
    index depth = 0;
    const auto adopt_children = [&](index u, index v, Number& outline) {
      index heap = none;
      while (depth > 0 && u <= arcs_[finished[depth - 1]].u && arcs_[finished[depth - 1]].v <= v) {
        --depth;
        const arc& child = arcs_[finished[depth]];
        outline = outline - path_sum(child.u, child.v) + weight_product(child);
        heap = merge(heap, heaps[depth]);
      }
      return heap;
    };
    for (index id = 0; id < arc_count_; ++id) {
      arc& h = arcs_[id];
      Number outline = path_sum(h.u, h.v);  // the region's sides other than the arc itself
      index heap = adopt_children(h.u, h.v, outline);
      const Number weight{w_[low(h)]};
      heap = remove_reaching(heap, weight, outline);
      h.num = store(weight * (outline - side_at_low(h)));
      h.den = store(outline - weight_product(h));
      h.last_member = id;
      // Groups below whose support is at least this one's go wherever this one goes.
      while (heap != none && !support_less(heap, id)) {
        const arc& g = arcs_[heap];
        h.num = store(load(h.num) + load(g.num));
        h.den = store(load(h.den) + load(g.den));
        arcs_[h.last_member].next_member = heap;
        h.last_member = g.last_member;
        heap = merge(g.heap_left, g.heap_right);
      }
      h.previous_at_u = kept_from_[h.u];
      kept_from_[h.u] = id;
      h.previous_at_v = kept_to_[h.v];
      kept_to_[h.v] = id;
      heaps[depth] = merge(heap, id);
      finished[depth++] = id;
    }
    // The whole polygon, fanned from V0.
    Number outline = path_sum(0, n);
    index heap = adopt_children(0, n, outline);
    const Number weight{w_[0]};
    heap = remove_reaching(heap, weight, outline);
    total_ = weight * (outline - side(0) - side(n - 1));
    // Add the groups left in the heap, walking it with the stack of finished arcs.
    depth = 0;
    if (heap != none) finished[depth++] = heap;
    while (depth > 0) {
      const arc& g = arcs_[finished[--depth]];
      total_ = total_ + load(g.num);
      if (g.heap_left != none) finished[depth++] = g.heap_left;
      if (g.heap_right != none) finished[depth++] = g.heap_right;
    }
  }

  // Step 4: sweep the vertices with a stack of open regions; each region fans from its lower end
  // (V0 for the whole polygon), one triangle per outline side that does not touch that vertex.
  constexpr void fan_regions(polygon_triangle* triangles) const {
    const index n = vertices_;
    struct region {
      index fan, previous, end;
    };
    scratch_array<region> open_space(arc_count_ + std::size_t{1}, for_overwrite);
    region* open = open_space.data();
    index depth = 0;
    open[depth++] = {0, 0, n};
    polygon_triangle* out = triangles;
    for (index p = 1; p <= n; ++p) {
      const index vertex = p == n ? 0 : p;  // vertex N is V0 again
      for (;;) {
        region& r = open[depth - 1];
        if (r.previous != r.fan && vertex != r.fan) *out++ = {r.fan, r.previous, p};
        r.previous = p;
        if (r.end != p) break;
        if (--depth == 0) return;
      }
      // Kept arcs from p, outermost (kept last) first.
      for (index a = kept_from_[p]; a != none; a = arcs_[a].previous_at_u) {
        if (alive(a)) open[depth++] = {low(arcs_[a]), p, arcs_[a].v};
      }
    }
  }

  relabelled_polygon w_;
  index vertices_;
  scratch_array<arc> arc_space_;
  scratch_array<std::uint8_t> state_space_;
  scratch_array<Number> prefix_space_;
  scratch_array<index> kept_space_;
  arc* arcs_ = nullptr;
  std::uint8_t* state_ = nullptr;
  Number* prefix_ = nullptr;
  index* kept_from_ = nullptr;
  index* kept_to_ = nullptr;
  index arc_count_ = 0;
  Number total_ = 0;
};

constexpr std::uint64_t saturating_product(std::uint64_t a, std::uint64_t b) noexcept {
  const double_word p = multiply_exactly(a, b);
  return p.high != 0 ? std::numeric_limits<std::uint64_t>::max() : p.low;
}

// The relabelling of step 1: the first smallest vertex becomes V0. Returns the polygon's weights
// in the new labels, read in place from dims (which must outlive it).
constexpr relabelled_polygon relabel_polygon(std::span<const std::size_t> dims) noexcept {
  relabelled_polygon polygon{dims.data(), dims.size(), 0, 0};
  const std::size_t* d = dims.data();
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (d[i] < d[polygon.first]) polygon.first = i;
    if (d[i] > polygon.largest) polygon.largest = d[i];
  }
  return polygon;
}

// Triangles of the relabelled polygon back in the chain's vertices, then the tree.
constexpr preorder_splits splits_of_relabelled(polygon_triangle* triangles, std::size_t count,
                                               std::size_t first, std::size_t vertices) {
  const auto back = [&](std::uint32_t r) {
    return static_cast<std::uint32_t>(first + r < vertices ? first + r : first + r - vertices);
  };
  for (std::size_t t = 0; t < count; ++t) {
    polygon_triangle& x = triangles[t];
    x = {back(x.a), back(x.b), back(x.c)};
  }
  return splits_of_triangulation(triangles, count, vertices);
}

// Whether 4 (n + 3) largest^3, the bound on every sum the steps form, is below 2^128: then the
// sums are 128-bit numbers and their cross products (the support comparisons) 256-bit ones. Dims
// up to 2^30 qualify for any chain Hu-Shing takes (n < 2^32).
constexpr bool fits_in_128_bits(std::uint64_t largest, std::size_t n) noexcept {
  const double_word square = multiply_exactly(largest, largest);
  // square * largest * 4 (n + 3) < 2^128, in 64-bit pieces: high words first.
  const double_word cube_low = multiply_exactly(square.low, largest);
  const double_word cube_high = multiply_exactly(square.high, largest);
  if (cube_high.high != 0) return false;
  const std::uint64_t cube_top = cube_high.low + cube_low.high;
  if (cube_top < cube_low.high) return false;  // carried past 128 bits
  const std::uint64_t factor = 4 * (std::uint64_t{n} + 3);
  const double_word top = multiply_exactly(cube_top, factor);
  const double_word bottom = multiply_exactly(cube_low.low, factor);
  if (top.high != 0) return false;
  const std::uint64_t upper = top.low + bottom.high;
  return upper >= bottom.high;
}

// Requires dims.size() >= 2.
constexpr hu_shing_result hu_shing_order(std::span<const std::size_t> dims) {
  hu_shing_result result;
  const std::size_t vertices = dims.size();
  const std::size_t n = vertices - 1;
  if (n == 1) return result;
  if (vertices >= std::numeric_limits<polygon_index>::max()) {
    throw chain_argument_error("ordo::plan_chain: Hu-Shing plans chains of fewer than 2^32 - 2 matrices");
  }
  const relabelled_polygon w = relabel_polygon(dims);
  const std::uint64_t largest = w.largest;
  scratch_array<polygon_triangle> triangles(n - 1, for_overwrite);
  if (w[0] == 0 || n == 2) {
    // A zero weight makes the fan at V0 free; with three vertices the fan is the only tree.
    for (polygon_index r = 1; r + 1 < vertices; ++r) triangles[r - 1] = {0, r, r + 1};
    result.cost = w[0] == 0 ? 0 : saturating_product(saturating_product(w[0], w[1]), w[2]);
  } else {
    // Every sum the steps form is at most 4 (n + 3) max(d)^3.
    const std::uint64_t bound = saturating_product(
        saturating_product(saturating_product(largest, largest), largest), 4 * (std::uint64_t{n} + 3));
    const auto size = static_cast<polygon_index>(vertices);
    if (bound != std::numeric_limits<std::uint64_t>::max()) {
      result.cost = hu_shing_triangulator<std::uint64_t>(w, size).triangulate(triangles.data());
    } else if (fits_in_128_bits(largest, n)) {
#if defined(__SIZEOF_INT128__)
      result.cost = hu_shing_triangulator<uint128>(w, size).triangulate(triangles.data());
#else
      result.cost = hu_shing_triangulator<wide_unsigned<4>>(w, size).triangulate(triangles.data());
#endif
    } else {
      result.cost = hu_shing_triangulator<wide_unsigned<8>>(w, size).triangulate(triangles.data());
    }
  }
  result.splits = splits_of_relabelled(triangles.data(), n - 1, w.first, vertices);
  return result;
}

}  // namespace ordo::detail

#endif
