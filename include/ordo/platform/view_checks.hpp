#ifndef ORDO_PLATFORM_VIEW_CHECKS_HPP
#define ORDO_PLATFORM_VIEW_CHECKS_HPP

// Run-time checks of Views at a public entry point. Each message names the operation, the
// requirement and the shapes: "ordo::op: y has shape (2, 3) but x has shape (2, 4)".

#include <ordo/platform/shape_text.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ordo::detail {

template <class Space, class... Views>
inline constexpr bool accessible_from_v =
    (Kokkos::SpaceAccessibility<Space, typename Views::memory_space>::accessible && ...);

template <class View>
std::string view_shape_text(const View& v) {
  std::array<std::size_t, View::rank> extents{};
  for (unsigned r = 0; r < View::rank; ++r) extents[r] = v.extent(r);
  return tensor_shape_text(extents);
}

template <class A, class B>
void check_same_shape(const A& a, const B& b, const char* operation, const char* a_name, const char* b_name) {
  // Kokkos 3.4's ranks are enumerators of unrelated enums: compare them as numbers.
  constexpr unsigned rank_a = static_cast<unsigned>(A::rank), rank_b = static_cast<unsigned>(B::rank);
  bool same = rank_a == rank_b;
  for (unsigned r = 0; same && r < rank_a; ++r) same = a.extent(r) == b.extent(r);
  if (!same) {
    throw std::invalid_argument(std::string(operation) + ": " + a_name + " has shape " + view_shape_text(a) + " but " +
                                b_name + " has shape " + view_shape_text(b));
  }
}

template <class View>
void check_contiguous(const View& v, const char* operation, const char* name) {
  if (!v.span_is_contiguous()) {
    throw std::invalid_argument(std::string(operation) + ": " + name + " must be contiguous");
  }
}

// A rank-1 View with one entry per unit of another argument: "gamma has 4 entries but x has 3 channels".
template <class View>
void check_extent(const View& v, std::int64_t expected, const char* operation, const char* name, const char* owner,
                  const char* unit) {
  if (static_cast<std::int64_t>(v.extent(0)) != expected) {
    throw std::invalid_argument(std::string(operation) + ": " + name + " has " + std::to_string(v.extent(0)) +
                                " entries but " + owner + " has " + std::to_string(expected) + " " + unit);
  }
}

}  // namespace ordo::detail

#endif
