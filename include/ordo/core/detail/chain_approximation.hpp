#ifndef ORDO_CORE_DETAIL_CHAIN_APPROXIMATION_HPP
#define ORDO_CORE_DETAIL_CHAIN_APPROXIMATION_HPP

// A near-optimal matrix-chain order in O(n): T. C. Hu and M. T. Shing, "An O(n) algorithm to
// find a near-optimum partition of a convex polygon", J. Algorithms 2(2):122-138, 1981, built on
// F. Y. Chin, "An O(n) algorithm for determining a near-optimal computation order of matrix chain
// products", Comm. ACM 21(7):544-549, 1978. Its cost is at most 2/sqrt(3) < 1.155 times the
// optimum (Hu and Shing's bound, reached by a pentagon); tests/planner_test.cpp checks it.
//
// On the polygon of chain_triangulation.hpp, relabelled so that V0 is a smallest vertex, a sweep
// keeps a stack of vertices. Chin's sufficient condition cuts the top Vt off with the arc from
// the vertex below it, Vs, to the current vertex Vc, whenever
//   1/w0 + 1/wt < 1/ws + 1/wc,
// that is when the triangle Vs Vt Vc plus the fan's triangle on the arc beats the fan's two
// triangles at Vt. What is left at the end is fanned from V0.

#include <ordo/core/chain_error.hpp>
#include <ordo/core/detail/chain_triangulation.hpp>
#include <ordo/core/detail/hu_shing.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

namespace ordo::detail {

// Chin's condition, multiplied out by w0 wt ws wc: wt ws wc + w0 ws wc < w0 wt wc + w0 wt ws.
template <class Number>
constexpr bool cuts_off(std::uint64_t w0, std::uint64_t ws, std::uint64_t wt, std::uint64_t wc) noexcept {
  const Number sc = Number{ws} * Number{wc};
  return Number{wt} * sc + Number{w0} * sc < Number{w0} * Number{wt} * (Number{wc} + Number{ws});
}

template <class Number>
constexpr void approximate_triangulation(const relabelled_polygon& w, polygon_index vertices,
                                         polygon_triangle* triangles) {
  scratch_array<polygon_index> stack_space(vertices, for_overwrite);
  polygon_index* stack = stack_space.data();
  std::size_t depth = 0, count = 0;
  stack[depth++] = 0;
  for (polygon_index c = 1; c < vertices; ++c) {
    while (depth >= 2 && cuts_off<Number>(w[0], w[stack[depth - 2]], w[stack[depth - 1]], w[c])) {
      triangles[count++] = {stack[depth - 2], stack[depth - 1], c};
      --depth;
    }
    stack[depth++] = c;
  }
  for (std::size_t k = 1; k + 1 < depth; ++k) triangles[count++] = {0, stack[k], stack[k + 1]};
}

// Requires dims.size() >= 2.
constexpr preorder_splits approximate_order(std::span<const std::size_t> dims) {
  const std::size_t vertices = dims.size();
  if (vertices <= 3) return preorder_splits(vertices - 2);
  if (vertices >= std::numeric_limits<polygon_index>::max()) {
    throw chain_argument_error("ordo::plan_chain: the approximation plans chains of fewer than 2^32 - 2 matrices");
  }
  const relabelled_polygon w = relabel_polygon(dims);
  const std::uint64_t largest = w.largest;
  scratch_array<polygon_triangle> triangles(vertices - 2, for_overwrite);
  if (w[0] == 0) {
    // The fan at a zero vertex costs nothing: optimal.
    for (polygon_index r = 1; r + 1 < vertices; ++r) triangles[r - 1] = {0, r, r + 1};
  } else if (saturating_product(saturating_product(largest, largest), largest) <= ~std::uint64_t{0} / 2) {
    // Each side of the condition is at most 2 max(d)^3.
    approximate_triangulation<std::uint64_t>(w, static_cast<polygon_index>(vertices), triangles.data());
  } else {
    approximate_triangulation<wide_unsigned<4>>(w, static_cast<polygon_index>(vertices), triangles.data());
  }
  return splits_of_relabelled(triangles.data(), vertices - 2, w.first, vertices);
}

}  // namespace ordo::detail

#endif
