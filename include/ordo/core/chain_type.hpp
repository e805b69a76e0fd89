#ifndef ORDO_CORE_CHAIN_TYPE_HPP
#define ORDO_CORE_CHAIN_TYPE_HPP

// The matrix-chain planner at the type level: operands are types with static shapes
// (ordo::shape<R, C>, ordo::matrix, ...); chain_plan_v<Ts...> is their plan as a constexpr value,
// chain_cost_v, chain_order_v, ... its parts, and chain_tree_t<Ts...> the optimal
// parenthesization as a type of ordo::product and ordo::operand. Mismatched or dynamic extents
// fail to compile with ordo::diagnostic types that name the operands. Pure C++20.

#include <ordo/core/chain_plan.hpp>
#include <ordo/core/fixed_string.hpp>
#include <ordo/core/order_view.hpp>
#include <ordo/core/shape.hpp>

#include <boost/mp11/list.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

namespace ordo {

// ---------------------------------------------------------------------------------------------
// Type level: operands are types with static shapes (ordo::shape<R, C>, ordo::matrix, ...).

// Leaf of a planned tree: the operand at 0-based position Index.
template <std::size_t Index>
struct operand {
  static constexpr std::size_t index = Index;
};

// Inner node of a planned tree: Left times Right.
template <class Left, class Right>
struct product {
  using left = Left;
  using right = Right;
};

// Types that appear in ordo's compile errors. Their template arguments carry the details:
// A<2>::is<5, 200> reads "operand A2 is 5 x 200"; g++ also prints the full message text.
namespace diagnostic {

template <std::size_t Position>
struct A {
  template <std::size_t Rows, std::size_t Cols>
  struct is {};
};

template <class... T>
inline constexpr bool always_false = false;

template <class Left, class Right, auto Message>
struct inner_dimensions_mismatch {
  static_assert(always_false<Left, Right>,
                "ordo: chain operands do not conform: the columns of each operand must equal the "
                "rows of the next (positions and shapes are in the template arguments above)");
};

template <class Operand, auto Message>
struct dynamic_extent_in_compile_time_chain {
  static_assert(always_false<Operand>,
                "ordo: a compile-time chain plan needs static extents, but an operand has an "
                "ordo::dynamic extent; plan such chains at run time with ordo::plan_chain(dims)");
};

template <class... T>
struct empty_chain {
  static_assert(always_false<T...>, "ordo: a chain needs at least one operand");
};

}  // namespace diagnostic

namespace detail {

// The first i whose static columns differ from operand i + 1's static rows, or n when adjacent
// static extents agree; ordo::dynamic is a wildcard, checked at run time.
// (Through pointers: in constant evaluation std::array's operator[] is a call per element, which
// a 1024-matrix chain pays thousands of times on both compilers.)
template <std::size_t N>
constexpr std::size_t first_static_mismatch(const std::array<std::size_t, N>& rows,
                                            const std::array<std::size_t, N>& cols) noexcept {
  const std::size_t* r = rows.data();
  const std::size_t* c = cols.data();
  for (std::size_t i = 0; i + 1 < N; ++i) {
    if (c[i] != dynamic && r[i + 1] != dynamic && c[i] != r[i + 1]) return i;
  }
  return N;
}

// The compile error for operands A(I+1) (Rows1 x Cols1) and A(I+2) (Rows2 x Cols2) that do not
// conform, naming both.
template <std::size_t I, std::size_t Rows1, std::size_t Cols1, std::size_t Rows2, std::size_t Cols2>
consteval void report_static_mismatch() {
  constexpr auto message = fixed_string<160>{}
                               .append("ordo: A")
                               .append(I + 1)
                               .append(" is ")
                               .append_extent(Rows1, dynamic)
                               .append("x")
                               .append(Cols1)
                               .append(" but A")
                               .append(I + 2)
                               .append(" is ")
                               .append(Rows2)
                               .append("x")
                               .append_extent(Cols2, dynamic)
                               .append(" (inner dimensions ")
                               .append(Cols1)
                               .append(" != ")
                               .append(Rows2)
                               .append(")");
  (void)diagnostic::inner_dimensions_mismatch<typename diagnostic::A<I + 1>::template is<Rows1, Cols1>,
                                              typename diagnostic::A<I + 2>::template is<Rows2, Cols2>, message>{};
}

// Checks that adjacent static extents agree; on a mismatch it instantiates the diagnostic that
// names both operands and returns false.
template <class... Shapes>
consteval bool conforms_statically() {
  constexpr std::size_t n = sizeof...(Shapes);
  constexpr std::array<std::size_t, n> rows{Shapes::static_rows...};
  constexpr std::array<std::size_t, n> cols{Shapes::static_cols...};
  constexpr std::size_t i = first_static_mismatch(rows, cols);
  if constexpr (i < n) {
    // Named first: nvcc 13 fails on array elements of a pack-built array as template arguments of
    // a call ("parameter packs not expanded").
    constexpr std::size_t rows1 = rows[i], cols1 = cols[i], rows2 = rows[i + 1], cols2 = cols[i + 1];
    report_static_mismatch<i, rows1, cols1, rows2, cols2>();
    return false;
  } else {
    return true;
  }
}

// constexpr, not consteval: clang 14 evaluates a consteval initializer of a variable template
// twice, doubling the compile time of every type-level plan (bench/compile_time).
template <class... Shapes>
constexpr auto static_chain_plan() {
  constexpr std::size_t n = sizeof...(Shapes);
  if constexpr (n == 0) {
    (void)diagnostic::empty_chain<Shapes...>{};
    return chain_plan<1>{};
  } else {
    constexpr std::array<std::size_t, n> rows{Shapes::static_rows...};
    constexpr std::array<std::size_t, n> cols{Shapes::static_cols...};
    constexpr std::size_t first_dynamic = [&] {
      const std::size_t* r = rows.data();
      const std::size_t* c = cols.data();
      for (std::size_t i = 0; i < n; ++i) {
        if (r[i] == dynamic || c[i] == dynamic) return i;
      }
      return n;
    }();
    if constexpr (first_dynamic < n) {
      constexpr std::size_t i = first_dynamic;
      constexpr auto message = fixed_string<160>{}
                                   .append("ordo: A")
                                   .append(i + 1)
                                   .append(" is ")
                                   .append_extent(rows[i], dynamic)
                                   .append("x")
                                   .append_extent(cols[i], dynamic)
                                   .append(": a compile-time chain plan needs static extents; "
                                           "use ordo::plan_chain(dims) at run time");
      (void)diagnostic::dynamic_extent_in_compile_time_chain<
          typename diagnostic::A<i + 1>::template is<rows[i], cols[i]>, message>{};
      return chain_plan<n>{};
    } else if constexpr (constexpr std::size_t m = first_static_mismatch(rows, cols); m < n) {
      // Checked here rather than by conforms_statically<Shapes...>: a second function of n
      // template arguments costs a 1024-matrix chain 0.03 s on g++.
      constexpr std::size_t rows1 = rows[m], cols1 = cols[m], rows2 = rows[m + 1], cols2 = cols[m + 1];  // (nvcc)
      report_static_mismatch<m, rows1, cols1, rows2, cols2>();
      return chain_plan<n>{};
    } else {
      // Through pointers: std::array's operator[] costs clang's step budget a call per element.
      std::array<std::size_t, n + 1> dims{};
      std::size_t* out = dims.data();
      const std::size_t* row = rows.data();
      for (std::size_t k = 0; k < n; ++k) *out++ = row[k];
      *out = cols.data()[n - 1];
      // An array and a loop, not a fold over ||: clang nests a fold of n terms n deep (limit 256).
      constexpr std::array<operand_structure, n> structures{Shapes::structure...};
      constexpr bool structured = [&] {
        const operand_structure* s = structures.data();
        for (std::size_t i = 0; i < n; ++i) {
          if (s[i] != operand_structure::general) return true;
        }
        return false;
      }();
      if constexpr (structured) {
        return plan_chain(dims, structures);
      } else {
        return plan_chain(dims);
      }
    }
  }
}

}  // namespace detail

// The plan of a chain of statically shaped types, computed once per chain.
// An error "no type named 'type' in ordo::shape_of<T>" means T is not a matrix shape: use
// ordo::shape<R, C> or a type with a member type shape_type.
template <class... Ts>
inline constexpr auto chain_plan_v = detail::static_chain_plan<shape_of_t<Ts>...>();

template <class... Ts>
inline constexpr std::uint64_t chain_cost_v = chain_plan_v<Ts...>.cost();

template <class... Ts>
inline constexpr std::uint64_t chain_flops_v = chain_plan_v<Ts...>.flops();

template <class... Ts>
inline constexpr order_view chain_order_v = chain_plan_v<Ts...>.order();

template <class... Ts>
inline constexpr std::uint64_t chain_peak_temporary_elements_v =
    chain_plan_v<Ts...>.peak_temporary_elements();

namespace detail {

// Every node id of a plan in post-order: operand i, then the products that end at operand i,
// inner first (the order products() lists them in).
template <std::size_t Matrices>
constexpr std::array<std::size_t, 2 * Matrices - 1> nodes_in_post_order(const chain_plan<Matrices>& plan) {
  std::array<std::size_t, 2 * Matrices - 1> order{};
  std::array<std::size_t, Matrices + 1> before{};  // before[i]: products that end before operand i
  for (const planned_product& p : plan.products()) ++before[p.last + 1];
  for (std::size_t i = 1; i <= Matrices; ++i) before[i] += before[i - 1];
  std::array<std::size_t, Matrices> placed{};
  for (std::size_t i = 0; i < Matrices; ++i) order[i + before[i]] = i;
  for (std::size_t p = 0; p + 1 < Matrices; ++p) {
    const std::size_t last = plan.products()[p].last;
    order[last + before[last] + 1 + placed[last]++] = Matrices + p;
  }
  return order;
}

template <class... Ts>
struct plan_of {
  static constexpr const auto& value = chain_plan_v<Ts...>;
  static constexpr std::size_t matrices = sizeof...(Ts) == 0 ? 1 : sizeof...(Ts);  // 0: diagnosed
  static constexpr auto post_order = nodes_in_post_order(value);
};

// The tree type is built by a stack machine over the post-order, a type-level stack of finished
// subtrees: an operand pushes itself, a product pops its two factors. The sequence is split in
// halves, so the instantiation depth is O(log n) whatever the tree's depth (g++ stops at 900).
template <class Top, class Rest>
struct subtree_stack {
  using top = Top;
};
struct empty_subtree_stack {};

template <class Stack, std::size_t Node, bool IsOperand>
struct push_node {
  using type = subtree_stack<operand<Node>, Stack>;
};
template <class Right, class Left, class Rest, std::size_t Node>
struct push_node<subtree_stack<Right, subtree_stack<Left, Rest>>, Node, false> {
  using type = subtree_stack<product<Left, Right>, Rest>;
};

template <class Plan, class Stack, std::size_t Begin, std::size_t Count>
struct push_nodes {
  using type = typename push_nodes<Plan, typename push_nodes<Plan, Stack, Begin, Count / 2>::type,
                                   Begin + Count / 2, Count - Count / 2>::type;
};
template <class Plan, class Stack, std::size_t Begin>
struct push_nodes<Plan, Stack, Begin, 1> {
  using type = typename push_node<Stack, Plan::post_order[Begin], (Plan::post_order[Begin] < Plan::matrices)>::type;
};
template <class Plan, class Stack, std::size_t Begin>
struct push_nodes<Plan, Stack, Begin, 0> {
  using type = Stack;
};

template <class... Ts>
struct chain_tree {
  using type = typename push_nodes<plan_of<Ts...>, empty_subtree_stack, 0, 2 * plan_of<Ts...>::matrices - 1>::type::top;
};

}  // namespace detail

// The optimal parenthesization as a type built from ordo::product and ordo::operand.
template <class... Ts>
using chain_tree_t = typename detail::chain_tree<Ts...>::type;

}  // namespace ordo

#endif
