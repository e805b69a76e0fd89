// The chain planner at compile time and at run time, with the numbers checked by the compiler.
#include <ordo/core/chain.hpp>

#include <array>
#include <cstdio>
#include <vector>

int main() {
  // CLRS section 15.2: six matrices, dims 30,35,15,5,10,20,25.
  constexpr auto clrs = ordo::plan_chain(std::array<std::size_t, 7>{30, 35, 15, 5, 10, 20, 25});
  static_assert(clrs.cost() == 15'125);
  static_assert(clrs.order() == "((A1(A2A3))((A4A5)A6))");
  static_assert(clrs.left_to_right_cost() == 40'500);

  // The same plan as a type: operands are any types with static shapes.
  using tree = ordo::chain_tree_t<ordo::shape<30, 35>, ordo::shape<35, 15>, ordo::shape<15, 5>,
                                  ordo::shape<5, 10>, ordo::shape<10, 20>, ordo::shape<20, 25>>;
  static_assert(std::is_same_v<tree::left, ordo::product<ordo::operand<0>,
                                                         ordo::product<ordo::operand<1>, ordo::operand<2>>>>);

  // At run time the same planner serves chains whose dims are only known then.
  std::vector<std::size_t> dims{5, 10, 3, 12, 5, 50, 6};
  const auto plan = ordo::plan_chain(dims);
  std::printf("CLRS 15.2-1: %.*s costs %llu multiplications\n", static_cast<int>(plan.order().size()),
              plan.order().data(), static_cast<unsigned long long>(plan.cost()));
  for (const ordo::planned_product& step : plan.products()) {
    std::printf("  A%zu..A%zu: %zux%zu times %zux%zu\n", step.first + 1, step.last + 1, step.rows, step.inner,
                step.inner, step.cols);
  }
  return plan.cost() == 2010 ? 0 : 1;
}
