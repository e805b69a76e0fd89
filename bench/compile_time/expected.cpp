// The plans that bench.py's translation units static_assert: reads chains "n d0 .. dn" from
// stdin and prints "cost order" for each, the cost by the DP and the order by the default planner
// (the one the TUs run in constant evaluation), both at run time; exits 1 where they disagree.
#include <ordo/core/chain.hpp>

#include <iostream>
#include <vector>

int main() {
  std::size_t n;
  while (std::cin >> n) {
    std::vector<std::size_t> dims(n + 1);
    for (auto& d : dims) std::cin >> d;
    const auto dp = ordo::plan_chain(dims, ordo::planner::dynamic_programming);
    const auto plan = ordo::plan_chain(dims);
    if (dp.cost() != plan.cost()) return 1;
    std::cout << dp.cost() << ' ' << plan.order() << '\n';
  }
}
