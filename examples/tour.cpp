// The ordo tour: what this build of ordo can do, one section per feature.
#include <ordo/ordo.hpp>

#include <cstdio>
#include <iostream>

namespace {

void section(const char* title) { std::printf("\n== %s ==\n", title); }

void seed_chain() {
  section("Compile-time chain planning: A 100x5, B 5x200, C 200x20");
  using A = ordo::shape<100, 5>;
  using B = ordo::shape<5, 200>;
  using C = ordo::shape<200, 20>;
  constexpr auto& plan = ordo::chain_plan_v<A, B, C>;
  // Both orders are checked by the compiler before this program exists.
  static_assert(plan.left_to_right_cost() == 100 * 5 * 200 + 100 * 200 * 20);
  static_assert(plan.cost() == 5 * 200 * 20 + 100 * 5 * 20);
  static_assert(plan.order() == "(A1(A2A3))");
  std::printf("(AB)C: %llu scalar multiplications (%llu FLOPs)\n",
              static_cast<unsigned long long>(plan.left_to_right_cost()),
              static_cast<unsigned long long>(2 * plan.left_to_right_cost()));
  std::printf("A(BC): %llu scalar multiplications (%llu FLOPs)  <- chosen at compile time\n",
              static_cast<unsigned long long>(plan.cost()), static_cast<unsigned long long>(plan.flops()));
  std::printf("order %.*s, %.1fx fewer multiplications, peak intermediate %llu elements\n",
              static_cast<int>(plan.order().size()), plan.order().data(),
              static_cast<double>(plan.left_to_right_cost()) / static_cast<double>(plan.cost()),
              static_cast<unsigned long long>(plan.peak_temporary_elements()));
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  std::printf("ordo %d.%d.%d\n", ORDO_VERSION_MAJOR, ORDO_VERSION_MINOR, ORDO_VERSION_PATCH);
  section("Kokkos configuration");
  ordo::print_execution_spaces(std::cout);
  std::cout.flush();
  seed_chain();
  return 0;
}
