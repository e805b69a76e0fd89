// Sphere-mask benchmark (question 12), on Kokkos::OpenMP (run with OMP_NUM_THREADS=2):
//   ordo             ordo::fill_sphere_mask into a preallocated LayoutRight View (steady state);
//   memset           std::memset(0) of the same bytes, one contiguous piece per OpenMP thread
//                    (Kokkos::parallel_for over the pieces): the floor;
//   memset_one       the same with the value 1 (zero stores are faster than others on some CPUs);
//   deep_copy        Kokkos::deep_copy(view, 0);
//   interval_memset  diagnostic, not ordo: ordo's per-row inside interval, each row written with
//                    three std::memset calls (checked to give ordo's mask byte for byte);
//   sphere_mask_alloc ordo::sphere_mask: a new View (allocation and first touch of its pages)
//                    and the fill; the View is released outside the clock.
//
// Geometry of a case (size n, fill f): an n x n x n uint8 volume, a sphere of radius
// r = cbrt(3 f n^3 / (4 pi)) (about f n^3 voxels inside) centred at (n/2 + 0.25, n/2 - 0.4,
// n/2 + 0.1), near the middle and on no voxel. bench/mask/run reads r and the centre from this
// program's output, so numpy uses exactly the same doubles. --extra "n:cx,cy,cz:r" adds
// check-only cases of any geometry.
//
// Timing: ordo_bench::time_rounds, two untimed warm-up rounds, then rounds in which every
// steady-state contender runs once, in a rotating order, until both --min-rounds and
// --min-seconds are reached (or --max-rounds); every contender has finished (fenced) when the
// clock stops. Then ordo::sphere_mask runs --alloc-reps times.
//
// Output: one JSON object per line and per case on stdout:
//   {"name":..,"n":..,"fill":..,"radius":..,"center":[..],"count":..,"alloc_count":..,
//    "interval_memset_mismatches":..,"bytes":..,"threads":..,"timed":..,"rounds":..,"seconds":..,
//    "dump":"<path or empty>","contenders":[{"name":"ordo","median_s":..,"q1_s":..,"q3_s":..,
//    "min_s":..,"runs":..}, ...]}
// count is the number of voxels set by ordo (alloc_count: by ordo::sphere_mask). With
// --dump-dir, ordo's mask is written there as raw bytes (C order) for the Python side to compare
// voxel by voxel.
//
// Usage: bench_mask [--sizes 256,512] [--fills 0.01,0.3] [--check-sizes 64] [--extra n:cx,cy,cz:r]
//                   [--contenders ordo,memset,...] [--alloc 1|0] [--min-rounds R] [--max-rounds R]
//                   [--min-seconds T] [--alloc-reps K] [--dump-dir DIR]
// --check-sizes: sizes whose masks are only computed, counted and dumped (not timed).

#include "bench_support.hpp"

#include <ordo/kernels/mask.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <numbers>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

using ordo_bench::split;

using space = Kokkos::OpenMP;
using mask_view = Kokkos::View<std::uint8_t***, Kokkos::LayoutRight, space::memory_space>;

struct options {
  std::vector<std::size_t> sizes{256, 512};
  std::vector<double> fills{0.01, 0.30};
  std::vector<std::size_t> check_sizes{64};
  int min_rounds = 31;
  int max_rounds = 2001;
  double min_seconds = 2.0;
  int alloc_reps = 11;
  std::string dump_dir;
  std::vector<std::string> extra;  // "n:cx,cy,cz:r" check-only cases
  std::vector<std::string> only;   // steady-state contenders to time (all when empty)
  bool alloc = true;               // time ordo::sphere_mask including allocation
};

std::size_t to_size(const std::string& s) { return static_cast<std::size_t>(std::stoull(s)); }
double to_double(const std::string& s) { return std::stod(s); }

options parse(int argc, char** argv) {
  options o;
  ordo_bench::for_each_option(argc, argv, [&](std::string_view a, const std::string& v) {
    if (a == "--sizes") o.sizes = split(v, to_size);
    else if (a == "--fills") o.fills = split(v, to_double);
    else if (a == "--check-sizes") o.check_sizes = split(v, to_size);
    else if (a == "--min-rounds") o.min_rounds = std::stoi(v);
    else if (a == "--max-rounds") o.max_rounds = std::stoi(v);
    else if (a == "--min-seconds") o.min_seconds = std::stod(v);
    else if (a == "--alloc-reps") o.alloc_reps = std::stoi(v);
    else if (a == "--dump-dir") o.dump_dir = v;
    else if (a == "--extra") o.extra.push_back(v);
    else if (a == "--contenders") o.only = split(v);
    else if (a == "--alloc") o.alloc = v != "0" && v != "no";
    else throw std::invalid_argument("unknown option " + std::string(a));
  });
  return o;
}

double radius_for(std::size_t n, double fill) {
  const double volume = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  return std::cbrt(3.0 * fill * volume / (4.0 * std::numbers::pi));
}

std::array<double, 3> center_for(std::size_t n) {
  const double h = static_cast<double>(n) / 2.0;
  return {h + 0.25, h - 0.4, h + 0.1};
}

std::string json_double(double x) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}

std::int64_t count_set(const mask_view& m) {
  const std::uint8_t* p = m.data();
  std::int64_t count = 0;
  Kokkos::parallel_reduce(
      "bench_mask::count", Kokkos::RangePolicy<space, Kokkos::IndexType<std::int64_t>>(0, static_cast<std::int64_t>(m.span())),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t & c) { c += p[i]; }, count);
  return count;
}

// std::memset of the whole View with value, one contiguous piece per OpenMP thread (a
// Kokkos::parallel_for over concurrency() chunks, static schedule). Large pieces let glibc use its
// fastest path for big fills (on this machine 1 MiB chunks were up to 2x slower at 128 MiB).
void parallel_memset(const mask_view& m, int value) {
  std::uint8_t* p = m.data();
  const std::int64_t bytes = static_cast<std::int64_t>(m.span());
  const std::int64_t pieces = std::max(1, space().concurrency());
  const std::int64_t piece = (bytes + pieces - 1) / pieces;
  Kokkos::parallel_for(
      "bench_mask::memset", Kokkos::RangePolicy<space, Kokkos::IndexType<std::int64_t>>(0, pieces), [=](std::int64_t i) {
        const std::int64_t begin = std::min(bytes, i * piece);
        std::memset(p + begin, value, static_cast<std::size_t>(std::min(piece, bytes - begin)));
      });
  space().fence();
}

// Diagnostic, not part of ordo: ordo's algorithm (one exact inside interval per z-row, found the
// same way as ordo::detail::write_run: square-root estimate, then exact corrections with the same
// rounding-exact test) but each row written with three std::memset calls instead of a
// per-byte select loop. It shows how much of ordo's time is the row-writing loop; the program
// checks that it produces ordo's mask byte for byte.
void interval_memset_fill(const mask_view& m, const std::array<double, 3>& center, double radius) {
  const double threshold = ordo::detail::inside_threshold(radius);
  const double cx = center[0], cy = center[1], cz = center[2];
  std::uint8_t* p = m.data();
  const std::int64_t ny = static_cast<std::int64_t>(m.extent(1)), n = static_cast<std::int64_t>(m.extent(2));
  const std::int64_t rows = static_cast<std::int64_t>(m.extent(0)) * ny;
  Kokkos::parallel_for(
      "bench_mask::interval_memset", Kokkos::RangePolicy<space, Kokkos::IndexType<std::int64_t>>(0, rows),
      [=](std::int64_t xy) {
        const double a = static_cast<double>(xy / ny) - cx, b = static_cast<double>(xy % ny) - cy;
        const auto inside = [&](std::int64_t c) {
          return ordo::detail::squared_distance(a, b, static_cast<double>(c) - cz) < threshold;
        };
        std::int64_t first = 0, last = -1;
        const double nearest = cz < 0 ? 0.0 : (cz > static_cast<double>(n - 1) ? static_cast<double>(n - 1) : cz);
        std::int64_t middle = std::min(static_cast<std::int64_t>(nearest + 0.5), n - 1);
        if (inside(middle)) {
          const double room = threshold - (a * a + b * b);
          const double half = room > 0 ? std::sqrt(room) : 0.0;
          const double lo = cz - half, hi = cz + half;
          first = lo <= 0 ? 0 : (lo >= static_cast<double>(middle) ? middle : static_cast<std::int64_t>(lo));
          last = hi >= static_cast<double>(n - 1) ? n - 1 : (hi <= static_cast<double>(middle) ? middle : static_cast<std::int64_t>(hi));
          while (first < middle && !inside(first)) ++first;
          while (first > 0 && inside(first - 1)) --first;
          while (last > middle && !inside(last)) --last;
          while (last < n - 1 && inside(last + 1)) ++last;
        }
        std::uint8_t* row = p + xy * n;
        if (last < first) {
          std::memset(row, 0, static_cast<std::size_t>(n));
        } else {
          std::memset(row, 0, static_cast<std::size_t>(first));
          std::memset(row + first, 1, static_cast<std::size_t>(last - first + 1));
          std::memset(row + last + 1, 0, static_cast<std::size_t>(n - 1 - last));
        }
      });
  space().fence();
}

std::int64_t count_mismatches(const mask_view& a, const mask_view& b) {
  const std::uint8_t* p = a.data();
  const std::uint8_t* q = b.data();
  std::int64_t count = 0;
  Kokkos::parallel_reduce(
      "bench_mask::mismatches", Kokkos::RangePolicy<space, Kokkos::IndexType<std::int64_t>>(0, static_cast<std::int64_t>(a.span())),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t & c) { c += p[i] != q[i] ? 1 : 0; }, count);
  return count;
}

// Transparent huge pages faulted in so far (Linux /proc/vmstat), -1 when unknown.
std::int64_t thp_faults() {
  std::ifstream f("/proc/vmstat");
  std::string key;
  std::int64_t value;
  while (f >> key >> value) {
    if (key == "thp_fault_alloc") return value;
  }
  return -1;
}

void dump(const mask_view& m, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write " + path);
  const std::size_t written = std::fwrite(m.data(), 1, m.span(), f);
  std::fclose(f);
  if (written != m.span()) throw std::runtime_error("short write to " + path);
}

struct case_spec {
  std::string name;  // file name stem of the dump
  std::size_t n;
  double fill;  // the fill the radius was chosen for; 0 for --extra cases
  std::array<double, 3> center;
  double radius;
  bool timed;
};

case_spec standard_case(std::size_t n, double fill, bool timed) {
  char name[64];
  std::snprintf(name, sizeof name, "n%zu_fill%g", n, fill);
  return {name, n, fill, center_for(n), radius_for(n, fill), timed};
}

// "n:cx,cy,cz:r", e.g. "256:128,128,128:106.3"
case_spec extra_case(const std::string& text, int index) {
  const auto colon1 = text.find(':'), colon2 = text.rfind(':');
  if (colon1 == std::string::npos || colon2 == colon1) throw std::invalid_argument("--extra wants n:cx,cy,cz:r");
  const std::vector<double> c = split(std::string_view(text).substr(colon1 + 1, colon2 - colon1 - 1), to_double);
  if (c.size() != 3) throw std::invalid_argument("--extra wants three centre coordinates");
  return {"extra" + std::to_string(index), static_cast<std::size_t>(std::stoull(text.substr(0, colon1))), 0.0,
          {c[0], c[1], c[2]}, std::stod(text.substr(colon2 + 1)), false};
}

void run_case(const options& o, const case_spec& spec) {
  const std::size_t n = spec.n;
  const double radius = spec.radius, fill = spec.fill;
  const bool timed = spec.timed;
  const std::array<double, 3> center = spec.center;
  mask_view m(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("bench_mask")), n, n, n);
  Kokkos::deep_copy(m, std::uint8_t{0});  // touch every page before timing
  space().fence();

  std::vector<ordo_bench::timed_item> contenders;
  contenders.push_back({"ordo", [&] { ordo::fill_sphere_mask(m, center, radius); }, {}});
  contenders.push_back({"memset", [&] { parallel_memset(m, 0); }, {}});
  contenders.push_back({"memset_one", [&] { parallel_memset(m, 1); }, {}});
  contenders.push_back({"interval_memset", [&] { interval_memset_fill(m, center, radius); }, {}});
  contenders.push_back({"deep_copy", [&] {
                          Kokkos::deep_copy(m, std::uint8_t{0});
                          space().fence();
                        },
                        {}});

  if (!o.only.empty()) {
    std::erase_if(contenders, [&](const ordo_bench::timed_item& c) {
      return std::find(o.only.begin(), o.only.end(), c.name) == o.only.end();
    });
  }

  ordo_bench::repeated timing{0, 0.0};
  if (timed) timing = ordo_bench::time_rounds(contenders, {o.min_rounds, o.max_rounds, o.min_seconds}, 2, true);

  // The mask that is counted and dumped: ordo's, written last.
  ordo::fill_sphere_mask(m, center, radius);
  const std::int64_t count = count_set(m);
  std::int64_t diagnostic_mismatches = -1;
  {
    mask_view other(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("bench_mask::other")), n, n, n);
    parallel_memset(other, 1);  // so that a row the diagnostic failed to write shows up
    interval_memset_fill(other, center, radius);
    diagnostic_mismatches = count_mismatches(m, other);
  }
  std::string dump_path;
  if (!o.dump_dir.empty()) {
    dump_path = o.dump_dir + "/ordo_mask_" + spec.name + ".u8";
    dump(m, dump_path);
  }

  // ordo::sphere_mask including the allocation (and the first touch of every page), the View
  // released outside the clock.
  std::vector<double> alloc_times;
  std::int64_t alloc_count = -1, alloc_thp = -1;
  if (timed && o.alloc) {
    for (int r = 0; r < o.alloc_reps; ++r) {
      const std::int64_t thp0 = thp_faults();
      mask_view fresh;
      const double t = ordo_bench::seconds_of([&] { fresh = ordo::sphere_mask(space{}, {n, n, n}, center, radius); });
      const std::int64_t thp1 = thp_faults();
      if (r == 0 && thp0 >= 0 && thp1 >= 0) alloc_thp = thp1 - thp0;  // other processes may add a few
      alloc_times.push_back(t);
      if (r == 0) alloc_count = count_set(fresh);
    }
  }

  std::ostringstream out;
  out << "{\"name\":\"" << spec.name << "\",\"n\":" << n << ",\"fill\":" << json_double(fill) << ",\"radius\":" << json_double(radius)
      << ",\"center\":[" << json_double(center[0]) << "," << json_double(center[1]) << "," << json_double(center[2])
      << "],\"count\":" << count << ",\"alloc_count\":" << alloc_count << ",\"alloc_thp_faults\":" << alloc_thp << ",\"interval_memset_mismatches\":" << diagnostic_mismatches << ",\"bytes\":" << m.span()
      << ",\"threads\":" << space().concurrency() << ",\"timed\":" << (timed ? "true" : "false")
      << ",\"rounds\":" << timing.reps << ",\"seconds\":" << json_double(timing.seconds) << ",\"dump\":\"" << dump_path
      << "\",\"contenders\":[";
  bool first = true;
  const auto emit = [&](const std::string& name, const std::vector<double>& times) {
    if (times.empty()) return;
    const ordo_bench::summary s = ordo_bench::summarize(times);
    out << (first ? "" : ",") << "{\"name\":\"" << name << "\",\"median_s\":" << json_double(s.median)
        << ",\"q1_s\":" << json_double(s.q1) << ",\"q3_s\":" << json_double(s.q3) << ",\"min_s\":" << json_double(s.min)
        << ",\"runs\":" << times.size() << "}";
    first = false;
  };
  for (const auto& c : contenders) emit(c.name, c.samples);
  emit("sphere_mask_alloc", alloc_times);
  out << "]}";
  std::cout << out.str() << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  try {
    const options o = parse(argc, argv);
    for (std::size_t n : o.check_sizes) {
      for (double fill : o.fills) run_case(o, standard_case(n, fill, false));
    }
    for (std::size_t i = 0; i < o.extra.size(); ++i) run_case(o, extra_case(o.extra[i], static_cast<int>(i)));
    for (std::size_t n : o.sizes) {
      for (double fill : o.fills) run_case(o, standard_case(n, fill, true));
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_mask: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
