#ifndef ORDO_CORE_FIXED_STRING_HPP
#define ORDO_CORE_FIXED_STRING_HPP

// A string built in constant evaluation and usable as a template argument. ordo passes
// diagnostic messages this way: g++ prints the text verbatim in "In instantiation of ..." lines,
// which a static_assert message (a literal) cannot do.

#include <cstddef>
#include <string_view>

namespace ordo::detail {

template <std::size_t Capacity>
struct fixed_string {
  char text[Capacity + 1] = {};
  std::size_t length = 0;

  constexpr fixed_string& append(std::string_view s) noexcept {
    for (char c : s) {
      if (length < Capacity) text[length++] = c;
    }
    return *this;
  }

  constexpr fixed_string& append(std::size_t value) noexcept {
    char digits[20] = {};
    std::size_t count = 0;
    do {
      digits[count++] = static_cast<char>('0' + value % 10);
      value /= 10;
    } while (value != 0);
    while (count > 0) append(std::string_view{&digits[--count], 1});
    return *this;
  }

  // An extent as messages print it: "?" for one left to run time (ordo::dynamic), so that a shape
  // reads "?x64" (platform/shape_text.hpp prints run-time messages alike).
  constexpr fixed_string& append_extent(std::size_t extent, std::size_t dynamic_value) noexcept {
    return extent == dynamic_value ? append("?") : append(extent);
  }

  constexpr std::string_view view() const noexcept { return {text, length}; }
};

}  // namespace ordo::detail

#endif
