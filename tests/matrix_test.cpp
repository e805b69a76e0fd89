#include <ordo/core/chain.hpp>
#include <ordo/kernels/matrix.hpp>

#include "support/execution_spaces.hpp"

#include <stdexcept>
#include <vector>

TEST_CASE_TEMPLATE_DEFINE("ordo::matrix: static and dynamic extents, shapes the planner accepts", ExecutionSpace,
                          matrix_basics_id) {
  using fixed = ordo::matrix<double, 3, 4, ExecutionSpace>;
  using rows_dynamic = ordo::matrix<float, ordo::dynamic, 64, ExecutionSpace>;
  using both_dynamic = ordo::matrix<int, ordo::dynamic, ordo::dynamic, ExecutionSpace>;
  static_assert(std::is_same_v<typename fixed::shape_type, ordo::shape<3, 4>>);
  static_assert(std::is_same_v<typename fixed::view_type,
                               Kokkos::View<double**, Kokkos::LayoutRight, typename ExecutionSpace::memory_space>>);
  static_assert(ordo::statically_shaped<fixed> && !ordo::statically_shaped<rows_dynamic>);
  static_assert(ordo::chain_cost_v<fixed, ordo::matrix<double, 4, 5, ExecutionSpace>> == 3 * 4 * 5);
  // Default construction: a static matrix allocates; a dynamic one is empty until a product is
  // assigned to it (issue 28).
  static_assert(std::is_default_constructible_v<fixed> && std::is_default_constructible_v<rows_dynamic>);
  static_assert(std::is_constructible_v<rows_dynamic, std::size_t> && !std::is_constructible_v<fixed, std::size_t>);
  static_assert(std::is_constructible_v<both_dynamic, std::size_t, std::size_t>);
  static_assert(ordo::any_matrix<const fixed&> && !ordo::any_matrix<int>);

  const fixed a;
  CHECK(a.rows() == 3);
  CHECK(a.cols() == 4);
  CHECK(a.view().extent(0) == 3);
  const rows_dynamic x(17);
  CHECK(x.rows() == 17);
  CHECK(x.cols() == 64);
  CHECK(x.shape().rows() == 17);
  const rows_dynamic empty;
  CHECK(empty.rows() == 0);
  CHECK(empty.cols() == 64);
  const both_dynamic y(5, 6);
  CHECK(y.rows() == 5);
  CHECK(y.cols() == 6);
  // The compile-time cost above, from the planner at run time on the extents the matrices report.
  using fixed_next = ordo::matrix<double, 4, 5, ExecutionSpace>;
  const fixed_next b;
  const std::vector<std::size_t> dims{a.rows(), a.cols(), b.cols()};
  CHECK(ordo::plan_chain(dims).cost() == ordo::chain_cost_v<fixed, fixed_next>);
  CHECK(ordo::plan_chain(dims).cost() == 60);

  // Uninitialized allocation, for results about to be overwritten.
  const fixed u(ordo::uninitialized);
  const rows_dynamic ux(ordo::uninitialized, 9);
  const both_dynamic uy(ordo::uninitialized, 2, 7);
  CHECK(u.rows() == 3);
  CHECK(ux.rows() == 9);
  CHECK(ux.cols() == 64);
  CHECK(uy.cols() == 7);
  static_assert(!std::is_constructible_v<fixed, ordo::uninitialized_t, std::size_t>);
}
ORDO_TEST_ALL_SPACES(matrix_basics_id);

TEST_CASE_TEMPLATE_DEFINE("ordo::matrix wraps an existing View without copying", ExecutionSpace, matrix_wrap_id) {
  using view_type = typename ordo::matrix<double, 2, 3, ExecutionSpace>::view_type;
  view_type v("v", 2, 3);
  const ordo::matrix<double, 2, 3, ExecutionSpace> m(v);
  CHECK(m.view().data() == v.data());
  const ordo::matrix<double, ordo::dynamic, 3, ExecutionSpace> d(v);
  CHECK(d.rows() == 2);
  CHECK_THROWS_AS((ordo::matrix<double, 3, 3, ExecutionSpace>(v)), std::invalid_argument);
  CHECK_THROWS_WITH_AS((ordo::matrix<double, ordo::dynamic, 4, ExecutionSpace>(v)),
                       "ordo::matrix: the View is 2x3 but the matrix type is ?x4", std::invalid_argument);
}
ORDO_TEST_ALL_SPACES(matrix_wrap_id);
