#ifndef ORDO_PLATFORM_SHAPE_TEXT_HPP
#define ORDO_PLATFORM_SHAPE_TEXT_HPP

// Shapes as error messages print them: a matrix as "200x3000" (an extent that a type leaves to run
// time, ordo::dynamic, is "?": "?x3000", never a 20-digit number or a word glued to the next),
// a tensor as "(32, 64, 56, 56)". Every run-time message of ordo's
// layers builds its shapes here, so they read alike.

#include <ordo/core/shape.hpp>

#include <cstddef>
#include <initializer_list>
#include <string>

namespace ordo::detail {

inline std::string extent_text(std::size_t extent) {
  return extent == dynamic ? std::string("?") : std::to_string(extent);
}

inline std::string shape_text(std::size_t rows, std::size_t cols) {
  return extent_text(rows) + "x" + extent_text(cols);
}

template <class Extents>
std::string tensor_shape_text(const Extents& extents) {
  std::string s = "(";
  bool first = true;
  for (const std::size_t e : extents) {
    if (!first) s += ", ";
    s += std::to_string(e);
    first = false;
  }
  return s + ")";
}

}  // namespace ordo::detail

#endif
