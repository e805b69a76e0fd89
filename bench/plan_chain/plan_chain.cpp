// Run-time matrix-chain planner benchmark: times ordo::plan_chain(dims) on random chains.
//
// The chains are generated here from a seed (splitmix64, dims uniform in [1, 1000]) and printed
// with the results, so a peer planner (bench/plan_chain/run: numpy's multi_dot planner) can plan
// exactly the same dims. Single thread, ordo_bench::time_calls: one untimed warm-up call per size,
// then repetitions until both --min-reps and --min-seconds are reached (or --max-reps).
//
// Output: one JSON object per line and per size on stdout:
//   {"n":..,"seed":..,"reps":..,"min_s":..,"median_s":..,"times_s":[..],"cost":..,
//    "order":"..","dims":[..]}
// With --tables-dir DIR, for n <= --tables-max-n it also writes DIR/tables_<n>.bin: for every
// 0 <= i < j < n in row-major order, the 0-based split k (uint32 LE) followed by the optimal
// cost m[i][j] (uint64 LE), both from ordo::chain_tables (computed outside the timed region).
//
// --planner dynamic_programming|hu_shing|approximate|automatic (default automatic) picks the
// planner; --print-max-n N (default: all) leaves "order" and "dims" out of the output for n > N,
// where they would be megabytes. The timed call is the whole ordo::plan_chain: planning, then
// building the plan (products, order string, workspace layout).
//
// Usage: bench_plan_chain [--sizes 100,200,...] [--seed S] [--min-reps R] [--max-reps R]
//                         [--min-seconds T] [--tables-dir DIR] [--tables-max-n N]
//                         [--planner NAME] [--print-max-n N]

#include "bench_support.hpp"

#include <ordo/core/chain.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

// dims d0..dn of an n-matrix chain, uniform in [lo, hi] (Lemire's multiply-shift; the bias of
// at most (hi-lo+1)/2^64 is irrelevant here). Each n gets its own stream: seed + n.
std::vector<std::size_t> make_dims(std::uint64_t seed, std::size_t n, std::size_t lo,
                                   std::size_t hi) {
  ordo_bench::splitmix64 rng{seed + n};
  const unsigned __int128 range = hi - lo + 1;
  std::vector<std::size_t> dims(n + 1);
  for (auto& d : dims) d = lo + static_cast<std::size_t>((rng.next() * range) >> 64);
  return dims;
}

std::size_t to_size(const std::string& s) { return static_cast<std::size_t>(std::stoull(s)); }

void write_tables(const std::string& path, std::span<const std::size_t> dims) {
  const ordo::chain_tables tables{dims};
  const std::size_t n = tables.matrices();
  std::vector<unsigned char> bytes;
  bytes.reserve(n * (n - 1) / 2 * 12);
  const auto put = [&](std::uint64_t v, int width) {
    for (int b = 0; b < width; ++b) bytes.push_back(static_cast<unsigned char>(v >> (8 * b)));
  };
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = i + 1; j <= n; ++j) {
      put(tables.split(i, j) - 1, 4);
      put(tables.cost(i, j), 8);
    }
  }
  std::ofstream out{path, std::ios::binary};
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

// Calls f with the planner tag named by name.
template <class F>
void with_planner(const std::string& name, F&& f) {
  if (name == "dynamic_programming") f(ordo::planner::dynamic_programming);
  else if (name == "hu_shing") f(ordo::planner::hu_shing);
  else if (name == "approximate") f(ordo::planner::approximate);
  else if (name == "automatic") f(ordo::planner::automatic);
  else throw std::invalid_argument("unknown planner " + name);
}

}  // namespace

int main(int argc, char** argv) try {
  std::vector<std::size_t> sizes{100, 200, 400, 700, 1000, 1500, 2000};
  std::uint64_t seed = 20240601;
  int min_reps = 5, max_reps = 50;
  double min_seconds = 1.0;
  std::string tables_dir;
  std::size_t tables_max_n = 0;
  std::string planner_name = "automatic";
  std::size_t print_max_n = static_cast<std::size_t>(-1);

  ordo_bench::for_each_option(argc, argv, [&](std::string_view arg, const std::string& value) {
    if (arg == "--sizes") sizes = ordo_bench::split(value, to_size);
    else if (arg == "--seed") seed = std::stoull(value);
    else if (arg == "--min-reps") min_reps = std::stoi(value);
    else if (arg == "--max-reps") max_reps = std::stoi(value);
    else if (arg == "--min-seconds") min_seconds = std::stod(value);
    else if (arg == "--tables-dir") tables_dir = value;
    else if (arg == "--tables-max-n") tables_max_n = std::stoull(value);
    else if (arg == "--planner") planner_name = value;
    else if (arg == "--print-max-n") print_max_n = std::stoull(value);
    else throw std::invalid_argument("unknown argument " + std::string{arg});
  });
  if (min_reps < 1) min_reps = 1;
  if (max_reps < min_reps) max_reps = min_reps;

  volatile std::uint64_t sink = 0;

  for (const std::size_t n : sizes) {
    if (n < 1) throw std::invalid_argument("sizes must be >= 1");
    const std::vector<std::size_t> dims = make_dims(seed, n, 1, 1000);

    std::uint64_t cost = 0;
    std::string order;
    std::vector<double> times;
    with_planner(planner_name, [&](auto planner) {
      const auto warm = ordo::plan_chain(dims, planner);  // untimed: page faults, caches, frequency
      cost = warm.cost();
      if (n <= print_max_n) order = warm.order();
      std::uint64_t planned_cost = cost;
      ordo_bench::time_calls(
          [&] {
            const auto plan = ordo::plan_chain(dims, planner);
            planned_cost = plan.cost();
          },
          {min_reps, max_reps, min_seconds}, times);
      sink = sink + planned_cost;
      if (planned_cost != cost) throw std::logic_error("plan_chain is not deterministic");
    });
    const ordo_bench::summary s = ordo_bench::summarize(times);

    if (!tables_dir.empty() && n <= tables_max_n) {
      write_tables(tables_dir + "/tables_" + std::to_string(n) + ".bin", dims);
    }

    std::ostringstream line;
    line.precision(9);
    line << "{\"n\":" << n << ",\"seed\":" << seed << ",\"reps\":" << s.reps
         << ",\"min_s\":" << s.min << ",\"median_s\":" << s.median << ",\"times_s\":[";
    for (std::size_t t = 0; t < times.size(); ++t) line << (t ? "," : "") << times[t];
    line << "],\"cost\":" << cost << ",\"planner\":\"" << planner_name << "\"";
    if (n <= print_max_n) {
      line << ",\"order\":\"" << order << "\",\"dims\":[";
      for (std::size_t i = 0; i < dims.size(); ++i) line << (i ? "," : "") << dims[i];
      line << "]";
    }
    line << "}\n";
    std::cout << line.str() << std::flush;
    std::cerr << "ordo " << planner_name << " n=" << n << ": min " << s.min << " s, median " << s.median << " s over " << s.reps
              << " reps\n";
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_plan_chain: " << e.what() << "\n";
  return 1;
}
