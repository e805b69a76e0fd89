#ifndef ORDO_CORE_ORDER_VIEW_HPP
#define ORDO_CORE_ORDER_VIEW_HPP

// ordo::order_view: a plan's parenthesization, "((A1A2)A3)", as a std::string_view whose
// comparisons are cheap in constant evaluation. `static_assert(plan.order() == "...")` is how
// users and tests check a compile-time plan; std::string_view's == goes through
// std::char_traits, which g++ 12 evaluates at about 125,000 instructions per character, so the
// order of a 1024-matrix chain (6,000 characters) cost more to compare than to plan. These
// loops read through pointers (docs/compile_time.md). Pure C++20.

#include <cstddef>
#include <string_view>

namespace ordo {

class order_view : public std::string_view {
 public:
  // From a std::string_view only (not from const char* or std::string, which reach one through it):
  // a second route to order_view would make `order == pointer` ambiguous between the overloads below.
  constexpr order_view() noexcept = default;
  constexpr order_view(std::string_view text) noexcept : std::string_view(text) {}

  friend constexpr bool operator==(order_view a, std::string_view b) noexcept { return equal(a, b.data(), b.size()); }
  // Two orders: an exact match, so that the reversed form of the one above is not a rival (clang's
  // -Wambiguous-reversed-operator).
  friend constexpr bool operator==(order_view a, order_view b) noexcept { return equal(a, b.data(), b.size()); }

  // A string literal: its length without std::char_traits::length.
  template <std::size_t N>
  friend constexpr bool operator==(order_view a, const char (&b)[N]) noexcept {
    std::size_t length = 0;
    while (length < N && b[length] != '\0') ++length;
    return equal(a, b, length);
  }

 private:
  static constexpr bool equal(std::string_view a, const char* b, std::size_t length) noexcept {
    if (a.size() != length) return false;
    const char* p = a.data();
    for (std::size_t i = 0; i < length; ++i) {
      if (p[i] != b[i]) return false;
    }
    return true;
  }
};

}  // namespace ordo

#endif
