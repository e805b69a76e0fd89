#include <ordo/core/shape.hpp>

#include <doctest/doctest.h>

TEST_CASE("static shapes are empty compile-time values") {
  using s = ordo::shape<3, 4>;
  static_assert(s::is_static && s::static_rows == 3 && s::static_cols == 4);
  static_assert(s{}.rows() == 3 && s{}.cols() == 4);
  static_assert(ordo::statically_shaped<s>);
  static_assert(std::is_empty_v<s>);
  CHECK(s{}.rows() == 3);
  CHECK(s{}.cols() == 4);
}

TEST_CASE("a shape's constructor takes exactly its dynamic extents, rows first") {
  using rows_dynamic = ordo::shape<ordo::dynamic, 4>;
  using cols_dynamic = ordo::shape<3, ordo::dynamic>;
  using both_dynamic = ordo::shape<ordo::dynamic, ordo::dynamic>;
  static_assert(rows_dynamic{7}.rows() == 7 && rows_dynamic{7}.cols() == 4);
  static_assert(cols_dynamic{7}.rows() == 3 && cols_dynamic{7}.cols() == 7);
  static_assert(both_dynamic{5, 6}.rows() == 5 && both_dynamic{5, 6}.cols() == 6);
  static_assert(!std::is_default_constructible_v<rows_dynamic>);
  static_assert(!std::is_constructible_v<ordo::shape<3, 4>, std::size_t>);
  static_assert(!std::is_constructible_v<both_dynamic, std::size_t>);
  static_assert(!std::is_constructible_v<rows_dynamic, std::size_t, std::size_t>);
  static_assert(sizeof(rows_dynamic) == sizeof(std::size_t) && sizeof(both_dynamic) == 2 * sizeof(std::size_t));
  static_assert(ordo::shaped<rows_dynamic> && !ordo::statically_shaped<rows_dynamic>);
  const std::size_t runtime_rows = 11;
  CHECK(rows_dynamic{runtime_rows}.rows() == 11);
  CHECK(both_dynamic{2, 9} == both_dynamic{2, 9});
  CHECK(!(both_dynamic{2, 9} == both_dynamic{9, 2}));
}

namespace {
struct has_shape {
  using shape_type = ordo::shape<2, 5>;
};
}  // namespace

TEST_CASE("any type naming a shape_type is shaped") {
  static_assert(std::is_same_v<ordo::shape_of_t<const has_shape&>, ordo::shape<2, 5>>);
  static_assert(ordo::statically_shaped<has_shape>);
  static_assert(!ordo::shaped<int>);
  CHECK(ordo::shape_of_t<has_shape>{}.cols() == 5);
}
