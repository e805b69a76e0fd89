// Times ordo::plan_chain(dims, --planner) (planning and building the plan), one thread, on chains
// with dims uniform in [1, --max-dim] (default 1000; splitmix64 seeded with seed + n). One JSON line per size: n, reps,
// min_s, median_s, cost; for n <= --print-max-n the order and dims; for n <= --tables-max-n
// ordo::chain_tables' 0-based splits and costs for every i < j, row-major (bench.py checks them).
#include "bench_support.hpp"

#include <ordo/core/chain.hpp>

#include <iostream>

__extension__ typedef unsigned __int128 uint128;

int main(int argc, char** argv) try {
  std::vector<std::size_t> sizes{100, 200, 400, 700, 1000, 1500, 2000};
  std::uint64_t seed = 20240601;
  ordo_bench::limits lim{5, 50, 1.0};
  std::string planner = "automatic";
  std::size_t print_max_n = SIZE_MAX, tables_max_n = 0, max_dim = 1000;
  const auto to_size = [](const std::string& s) { return static_cast<std::size_t>(std::stoull(s)); };
  ordo_bench::for_each_option(argc, argv, [&](std::string_view arg, const std::string& value) {
    if (arg == "--sizes") sizes = ordo_bench::split(value, to_size);
    else if (arg == "--seed") seed = std::stoull(value);
    else if (arg == "--min-reps") lim.min_reps = std::stoi(value);
    else if (arg == "--min-seconds") lim.min_seconds = std::stod(value);
    else if (arg == "--planner") planner = value;
    else if (arg == "--print-max-n") print_max_n = to_size(value);
    else if (arg == "--tables-max-n") tables_max_n = to_size(value);
    else if (arg == "--max-dim") max_dim = to_size(value);
    else throw std::invalid_argument("unknown argument " + std::string{arg});
  });
  for (const std::size_t n : sizes) {
    ordo_bench::splitmix64 rng{seed + n};
    std::vector<std::size_t> dims(n + 1);  // Lemire's multiply-shift onto [1, max_dim]
    for (auto& d : dims) d = 1 + static_cast<std::size_t>((rng.next() * uint128{max_dim}) >> 64);
    std::vector<double> times;
    std::uint64_t cost = 0;
    std::string order;
    const auto time = [&](auto tag) {
      const auto plan = ordo::plan_chain(dims, tag);
      cost = plan.cost();
      if (n <= print_max_n) order = plan.order();
      ordo_bench::time_calls([&] {
        if (ordo::plan_chain(dims, tag).cost() != cost) throw std::logic_error("plan_chain is not deterministic");
      }, lim, times);
    };
    if (planner == "dynamic_programming") time(ordo::planner::dynamic_programming);
    else if (planner == "hu_shing") time(ordo::planner::hu_shing);
    else if (planner == "approximate") time(ordo::planner::approximate);
    else if (planner == "automatic") time(ordo::planner::automatic);
    else throw std::invalid_argument("unknown planner " + planner);
    const ordo_bench::summary s = ordo_bench::summarize(times);
    std::cout.precision(9);
    std::cout << "{\"n\":" << n << ",\"reps\":" << s.reps << ",\"min_s\":" << s.min << ",\"median_s\":" << s.median
              << ",\"cost\":" << cost;
    if (n <= print_max_n) {
      std::cout << ",\"order\":\"" << order << "\",\"dims\":[";
      for (std::size_t i = 0; i <= n; ++i) std::cout << (i ? "," : "") << dims[i];
      std::cout << "]";
    }
    if (n <= tables_max_n) {
      const ordo::chain_tables tables{dims};
      for (const bool split : {true, false}) {
        std::cout << (split ? ",\"splits\":[" : ",\"costs\":[");
        for (std::size_t i = 1; i <= n; ++i) {
          for (std::size_t j = i + 1; j <= n; ++j) {
            std::cout << (i == 1 && j == 2 ? "" : ",") << (split ? tables.split(i, j) - 1 : tables.cost(i, j));
          }
        }
        std::cout << "]";
      }
    }
    std::cout << "}" << std::endl;
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_plan_chain: " << e.what() << "\n";
  return 1;
}
