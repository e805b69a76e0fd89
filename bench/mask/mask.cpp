// bench_mask (question 12), Kokkos::OpenMP: an n^3 uint8 View, a sphere of radius cbrt(3 f n^3 / (4 pi)) (a fraction
// f of the voxels inside) centred at (n/2 + 0.25, n/2 - 0.4, n/2 + 0.1). Rotating rounds time, each fenced, "ordo"
// (ordo::fill_sphere_mask), "memset" 0 and "memset_one" (the same bytes, a piece per thread: the floor), "deep_copy"
// (Kokkos::deep_copy(v, 0)) and "interval_memset" (diagnostic, not ordo: ordo's row intervals written with three
// memsets a row); then "sphere_mask_alloc" (ordo::sphere_mask, a new View). One JSON line per case; ordo's mask goes
// to <--dump-prefix><case>.u8. Options: --sizes 256,512 --fills 0.01,0.3 --check-sizes 64 --extra n,cx,cy,cz,r (both
// untimed) --contenders ordo,... --min-rounds R --min-seconds T --alloc-reps K --dump-prefix P.

#include "bench_support.hpp"

#include <ordo/kernels/mask.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <numbers>
#include <numeric>
#include <sstream>

namespace {

using space = Kokkos::OpenMP;
using range = Kokkos::RangePolicy<space, Kokkos::IndexType<std::int64_t>>;
using mask_view = Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, space::memory_space>;

struct options {
  std::vector<std::size_t> sizes{256, 512}, check_sizes{64};
  std::vector<double> fills{0.01, 0.30}, extra;  // extra: n, cx, cy, cz, r of a check-only case
  std::vector<std::string> only;                 // the contenders to time (all, and sphere_mask_alloc, when empty)
  ordo_bench::limits lim{31, 2001, 2.0};
  int alloc_reps = 11;
  std::string dump_prefix = "ordo_mask_";
};

// A piece per thread: glibc's fastest path for big fills (1 MiB pieces were up to 2x slower at 128 MiB here).
void parallel_memset(const mask_view& m, int value) {
  std::uint8_t* p = m.data();
  const std::int64_t bytes = static_cast<std::int64_t>(m.span()), pieces = std::max(1, space().concurrency());
  const std::int64_t piece = (bytes + pieces - 1) / pieces;
  Kokkos::parallel_for("bench_mask::memset", range(0, pieces), [=](std::int64_t i) {
    const std::int64_t begin = std::min(bytes, i * piece);
    std::memset(p + begin, value, static_cast<std::size_t>(std::min(piece, bytes - begin)));
  });
  space().fence();
}

// The diagnostic: each row's inside interval found as ordo::detail::write_run finds it (square-root
// estimate, then exact corrections with the same rounding-exact test), written with three memsets.
void interval_memset_fill(const mask_view& m, const std::array<double, 3>& center, double radius) {
  const double threshold = ordo::detail::inside_threshold(radius), cx = center[0], cy = center[1], cz = center[2];
  std::uint8_t* p = m.data();
  const std::int64_t ny = static_cast<std::int64_t>(m.extent(1)), n = static_cast<std::int64_t>(m.extent(2));
  const double top = static_cast<double>(n - 1);
  const std::int64_t rows = static_cast<std::int64_t>(m.extent(0)) * ny;
  Kokkos::parallel_for("bench_mask::interval", range(0, rows), [=](std::int64_t xy) {
    const double a = static_cast<double>(xy / ny) - cx, b = static_cast<double>(xy % ny) - cy;
    const auto inside = [&](std::int64_t c) {
      return ordo::detail::squared_distance(a, b, static_cast<double>(c) - cz) < threshold;
    };
    const std::int64_t middle = std::min(static_cast<std::int64_t>(std::clamp(cz, 0.0, top) + 0.5), n - 1);
    std::int64_t first = 0, last = -1;
    if (inside(middle)) {
      const double room = threshold - (a * a + b * b), half = room > 0 ? std::sqrt(room) : 0.0;
      const double lo = cz - half, hi = cz + half, mid = static_cast<double>(middle);
      first = lo <= 0 ? 0 : (lo >= mid ? middle : static_cast<std::int64_t>(lo));
      last = hi >= top ? n - 1 : (hi <= mid ? middle : static_cast<std::int64_t>(hi));
      while (first < middle && !inside(first)) ++first;
      while (first > 0 && inside(first - 1)) --first;
      while (last > middle && !inside(last)) --last;
      while (last < n - 1 && inside(last + 1)) ++last;
    }
    std::uint8_t* row = p + xy * n;
    first = std::min(first, last + 1);
    std::memset(row, 0, static_cast<std::size_t>(first));
    std::memset(row + first, 1, static_cast<std::size_t>(last + 1 - first));
    std::memset(row + last + 1, 0, static_cast<std::size_t>(n - 1 - last));
  });
  space().fence();
}

std::int64_t thp_faults() {  // transparent huge pages faulted in so far (Linux), -1 when unknown
  std::ifstream f("/proc/vmstat");
  std::string key;
  for (std::int64_t value; f >> key >> value;) if (key == "thp_fault_alloc") return value;
  return -1;
}

// One case: timed, or only computed, counted and dumped.
void run_case(const options& o, const std::string& name, std::size_t n, double fill, std::array<double, 3> center,
              double radius, bool timed) {
  const mask_view m("bench_mask", n, n, n);  // zero-initialized: every page touched before timing
  std::vector<ordo_bench::timed_item> contenders{
      {"ordo", [&] { ordo::fill_sphere_mask(m, center, radius); }, {}},
      {"memset", [&] { parallel_memset(m, 0); }, {}},
      {"memset_one", [&] { parallel_memset(m, 1); }, {}},
      {"interval_memset", [&] { interval_memset_fill(m, center, radius); }, {}},
      {"deep_copy", [&] { Kokkos::deep_copy(m, std::uint8_t{0}); space().fence(); }, {}}};
  std::erase_if(contenders, [&](const auto& c) { return !o.only.empty() && std::ranges::count(o.only, c.name) == 0; });
  const int rounds = timed ? ordo_bench::time_rounds(contenders, o.lim, 2, true).reps : 0;

  ordo::fill_sphere_mask(m, center, radius);  // the mask that is counted and dumped: ordo's
  const std::int64_t mismatches = [&] {  // the diagnostic's mask against ordo's
    mask_view other(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("bench_mask::other")), n, n, n);
    parallel_memset(other, 1);  // so that a row the diagnostic failed to write shows up
    interval_memset_fill(other, center, radius);
    return std::transform_reduce(m.data(), m.data() + m.span(), other.data(), std::int64_t{0}, std::plus<>(),
                                 std::not_equal_to<>());
  }();
  const auto count_set = [](const auto& v) { return std::count(v.data(), v.data() + v.span(), std::uint8_t{1}); };
  const std::string dump = o.dump_prefix + name + ".u8";
  std::ofstream(dump, std::ios::binary).write(reinterpret_cast<const char*>(m.data()), std::streamsize(m.span()));
  // ordo::sphere_mask with a new View, the View released outside the clock.
  ordo_bench::timed_item alloc{"sphere_mask_alloc", {}, {}};
  std::int64_t alloc_count = -1, alloc_thp = -1;
  for (int r = 0; timed && o.only.empty() && r < o.alloc_reps; ++r) {
    const std::int64_t thp0 = thp_faults();
    mask_view fresh;
    const auto make = [&] { fresh = ordo::sphere_mask(space{}, {n, n, n}, center, radius); };
    alloc.samples.push_back(ordo_bench::seconds_of(make));
    if (r > 0) continue;
    const std::int64_t thp1 = thp_faults();  // other processes may add a few
    alloc_thp = thp0 >= 0 && thp1 >= 0 ? thp1 - thp0 : -1;
    alloc_count = count_set(fresh);
  }
  if (!alloc.samples.empty()) contenders.push_back(alloc);

  std::ostringstream out;
  out << std::setprecision(17) << std::showpoint << "{\"name\":\"" << name << "\",\"n\":" << n << ",\"fill\":" << fill
      << ",\"radius\":" << radius << ",\"center\":[" << center[0] << "," << center[1] << "," << center[2]
      << "],\"count\":" << count_set(m) << ",\"alloc_count\":" << alloc_count << ",\"alloc_thp_faults\":" << alloc_thp
      << ",\"interval_memset_mismatches\":" << mismatches << ",\"bytes\":" << m.span() << ",\"rounds\":" << rounds
      << ",\"dump\":\"" << dump << "\",\"contenders\":[";
  for (std::size_t k = 0; timed && k < contenders.size(); ++k) {
    const auto stats = ordo_bench::summarize(contenders[k].samples);
    out << (k ? "," : "") << "{\"name\":\"" << contenders[k].name << "\",\"median_s\":" << stats.median
        << ",\"min_s\":" << stats.min << "}";
  }
  std::cout << out.str() << "]}" << std::endl;
}

}  // namespace

int main(int argc, char** argv) {  // a bad option or --extra throws: std::terminate prints what() and aborts
  Kokkos::ScopeGuard guard(argc, argv);
  options o;
  const auto to_size = [](const std::string& s) { return static_cast<std::size_t>(std::stoull(s)); };
  const auto to_double = [](const std::string& s) { return std::stod(s); };
  ordo_bench::for_each_option(argc, argv, [&](std::string_view a, const std::string& v) {
    if (a == "--sizes") o.sizes = ordo_bench::split(v, to_size);
    else if (a == "--fills") o.fills = ordo_bench::split(v, to_double);
    else if (a == "--check-sizes") o.check_sizes = ordo_bench::split(v, to_size);
    else if (a == "--extra") o.extra = ordo_bench::split(v, to_double);
    else if (a == "--contenders") o.only = ordo_bench::split(v);
    else if (a == "--min-rounds") o.lim.min_reps = std::stoi(v);
    else if (a == "--min-seconds") o.lim.min_seconds = std::stod(v);
    else if (a == "--alloc-reps") o.alloc_reps = std::stoi(v);
    else if (a == "--dump-prefix") o.dump_prefix = v;
    else throw std::invalid_argument("bench_mask: unknown option " + std::string(a));
  });
  if (!o.extra.empty()) {  // n, cx, cy, cz, r (at() throws when they are fewer)
    const std::array<double, 3> center{o.extra.at(1), o.extra.at(2), o.extra.at(3)};
    run_case(o, "extra0", std::size_t(o.extra[0]), 0.0, center, o.extra.at(4), false);
  }
  for (const bool timed : {false, true}) {
    for (const std::size_t n : timed ? o.sizes : o.check_sizes) {
      for (const double fill : o.fills) {
        const double d = static_cast<double>(n);
        std::ostringstream name;
        name << "n" << n << "_fill" << fill;
        run_case(o, name.str(), n, fill, {d / 2 + 0.25, d / 2 - 0.4, d / 2 + 0.1},
                 std::cbrt(3.0 * fill * (d * d * d) / (4.0 * std::numbers::pi)), timed);
      }
    }
  }
}
