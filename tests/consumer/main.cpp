#include <ordo/ordo.hpp>

#include <cstdio>
#include <iostream>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  constexpr auto plan = ordo::plan_chain(std::array<std::size_t, 4>{100, 5, 200, 20});
  static_assert(plan.cost() == 30'000);
  ordo::print_execution_spaces(std::cout);
  std::printf("consumer: %.*s costs %llu\n", static_cast<int>(plan.order().size()), plan.order().data(),
              static_cast<unsigned long long>(plan.cost()));
  return plan.order() == "(A1(A2A3))" ? 0 : 1;
}
