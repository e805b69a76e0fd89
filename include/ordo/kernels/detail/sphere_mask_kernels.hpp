#ifndef ORDO_KERNELS_DETAIL_SPHERE_MASK_KERNELS_HPP
#define ORDO_KERNELS_DETAIL_SPHERE_MASK_KERNELS_HPP

// The sphere mask's kernels (kernels/mask.hpp is the interface): the exact inside test, the
// interval of inside voxels along a run, and the launch shapes: one run per thread on a host
// (written with stream stores when the mask is larger than the cache); on a device, 16 bytes per
// thread, or a team per run or a voxel per thread where the runs are not contiguous.

#include <ordo/core/config.hpp>
#include <ordo/platform/call_workspace.hpp>
#include <ordo/platform/execution.hpp>
#include <ordo/platform/kokkos_math.hpp>
#include <ordo/platform/launch_shape.hpp>

#if ORDO_X86_HOST_SIMD
#include <ordo/platform/x86/streaming_stores.hpp>
#endif

#include <Kokkos_Core.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ordo {

namespace detail {

// x * y and x + y rounded once each, never fused into an FMA: compilers may contract a*b + c
// when FMA instructions are enabled, which would change the boundary voxels.
KOKKOS_INLINE_FUNCTION double multiply_rounded(double x, double y) {
#if ORDO_DEVICE_COMPILE
  return __dmul_rn(x, y);
#else
  double p = x * y;
#if defined(__GNUC__)
  __asm__("" : "+m"(p));  // the product must exist as a double before it is used
#else
  volatile double v = p;
  p = v;
#endif
  return p;
#endif
}

// fl(fl(fl(dx^2) + fl(dy^2)) + fl(dz^2)), the squared distance exactly as the reference rounds it.
KOKKOS_INLINE_FUNCTION double squared_distance(double dx, double dy, double dz) {
  return (multiply_rounded(dx, dx) + multiply_rounded(dy, dy)) + multiply_rounded(dz, dz);
}

// The smallest double t with fl(sqrt(t)) >= radius. Because the correctly rounded square root is
// monotone, fl(sqrt(d)) < radius exactly when d < t: the sphere test needs no square root.
inline double inside_threshold(double radius) {
  if (!(radius > 0)) return 0.0;  // nothing is inside
  if (std::isinf(radius)) return std::numeric_limits<double>::infinity();
  double t = radius * radius;
  if (std::isinf(t)) return t;  // sqrt of every finite d is below radius
  while (t > 0 && std::sqrt(std::nextafter(t, 0.0)) >= radius) t = std::nextafter(t, 0.0);
  while (std::sqrt(t) < radius) t = std::nextafter(t, std::numeric_limits<double>::infinity());
  return t;
}

struct sphere {
  double cx, cy, cz;
  double threshold;  // inside when the squared distance is below it
};

inline sphere make_sphere(const std::array<double, 3>& center, double radius, const char* operation) {
  if (std::isnan(center[0]) || std::isnan(center[1]) || std::isnan(center[2]) || std::isnan(radius)) {
    throw std::invalid_argument(std::string(operation) + ": the center and the radius must not be NaN");
  }
  return {center[0], center[1], center[2], inside_threshold(radius)};
}

// The voxels inside the sphere along one run along `axis`, n voxels: [first, last], empty when
// last < first. dx, dy, dz are the offsets of the run's voxel from the center (the one along
// `axis` is ignored) and cc the center's coordinate along the run. The squared distance is always
// summed x, y, z, as the reference does. Along the run the test is monotone in |c - cc|, so the
// inside voxels form one interval, found from the square-root estimate and corrected with the
// exact test.
struct run_interval {
  std::int64_t first = 0, last = -1;  // empty: {0, -1}, so that the three fills below need no case
};

KOKKOS_INLINE_FUNCTION run_interval inside_interval(std::int64_t n, const int axis, double dx, double dy, double dz,
                                                    double cc, double threshold) {
  const auto inside = [&](std::int64_t c) {
    const double dc = static_cast<double>(c) - cc;
    return squared_distance(axis == 0 ? dc : dx, axis == 1 ? dc : dy, axis == 2 ? dc : dz) < threshold;
  };
  const double a = axis == 0 ? dy : dx, b = axis == 2 ? dy : dz;  // the other two offsets
  run_interval run;
  if (n > 0) {
    double nearest = cc < 0 ? 0.0 : (cc > static_cast<double>(n - 1) ? static_cast<double>(n - 1) : cc);
    std::int64_t middle = static_cast<std::int64_t>(nearest + 0.5);
    if (middle > n - 1) middle = n - 1;
    if (inside(middle)) {
      // An estimate of the half-width, then exact corrections (a step or two at most).
      const double room = threshold - (a * a + b * b);
      const double half = room > 0 ? math::sqrt(room) : 0.0;
      double low_estimate = cc - half, high_estimate = cc + half;
      std::int64_t first = low_estimate <= 0 ? 0 : (low_estimate >= static_cast<double>(middle) ? middle : static_cast<std::int64_t>(low_estimate));
      std::int64_t last = high_estimate >= static_cast<double>(n - 1) ? n - 1
                                                         : (high_estimate <= static_cast<double>(middle) ? middle : static_cast<std::int64_t>(high_estimate));
      while (first < middle && !inside(first)) ++first;
      while (first > 0 && inside(first - 1)) --first;
      while (last > middle && !inside(last)) --last;
      while (last < n - 1 && inside(last + 1)) ++last;
      run = {first, last};
    }
  }
  return run;
}

// Writes one run of the mask of n voxels, every voxel once: 1 inside `in`, 0 elsewhere.
template <class Row>
KOKKOS_INLINE_FUNCTION void write_interval(const Row& row, std::int64_t n, const run_interval& in) {
  const std::int64_t first = in.first, last = in.last;
  // Three plain fills, which compilers turn into memset or vector stores; a select per byte
  // would not vectorize (64-bit compares) and ran at a tenth of memset speed.
  if (row.stride(0) == 1) {
    std::uint8_t* p = row.data();
    for (std::int64_t c = 0; c < first; ++c) p[c] = 0;
    for (std::int64_t c = first; c <= last; ++c) p[c] = 1;
    for (std::int64_t c = last + 1; c < n; ++c) p[c] = 0;
  } else {
    for (std::int64_t c = 0; c < first; ++c) row(c) = 0;
    for (std::int64_t c = first; c <= last; ++c) row(c) = 1;
    for (std::int64_t c = last + 1; c < n; ++c) row(c) = 0;
  }
}

// The axes of a rank-3 View from its slowest to its fastest in memory: LayoutRight (x, y, z),
// LayoutLeft (z, y, x), a strided View by its strides (ties keep the LayoutRight order).
struct axis_order {
  int slow, middle, fast;
};

template <class View>
axis_order memory_order(const View& v) {
  if constexpr (std::is_same_v<typename View::array_layout, Kokkos::LayoutLeft>) {
    return {2, 1, 0};
  } else if constexpr (std::is_same_v<typename View::array_layout, Kokkos::LayoutRight>) {
    return {0, 1, 2};
  } else {
    int order[3] = {0, 1, 2};
    for (int i = 1; i < 3; ++i) {  // insertion sort by decreasing stride, stable
      for (int j = i; j > 0 && v.stride(static_cast<std::size_t>(order[j])) >
                                   v.stride(static_cast<std::size_t>(order[j - 1]));
           --j) {
        const int t = order[j];
        order[j] = order[j - 1];
        order[j - 1] = t;
      }
    }
    return {order[0], order[1], order[2]};
  }
}

// Run `run` of the mask in memory order: at[] gets its voxel coordinates (at[order.fast] = 0),
// and the interval of inside voxels along it is returned. Index: the type of the division that
// splits run (32 bits where the mask allows: a GPU divides 64-bit integers in tens of instructions).
template <class Index = std::int64_t>
KOKKOS_INLINE_FUNCTION run_interval interval_of_run(Index run, const axis_order& order, Index n_middle,
                                                    std::int64_t n_fast, const sphere& s, std::int64_t (&at)[3]) {
  at[0] = at[1] = at[2] = 0;
  at[order.slow] = run / n_middle;
  at[order.middle] = run % n_middle;
  const double cc = order.fast == 0 ? s.cx : (order.fast == 1 ? s.cy : s.cz);
  return inside_interval(n_fast, order.fast, static_cast<double>(at[0]) - s.cx, static_cast<double>(at[1]) - s.cy,
                         static_cast<double>(at[2]) - s.cz, cc, s.threshold);
}

// fn(run) for the rank-1 View of the voxels at[] along the fastest axis (at[order.fast] is
// ignored): the layout's own subview where the layout names the axis, else by the strides' order.
template <class View, class Fn>
KOKKOS_INLINE_FUNCTION void with_run(const View& out, const axis_order& order, const std::int64_t (&at)[3], const Fn& fn) {
  using layout = typename View::array_layout;
  if constexpr (std::is_same_v<layout, Kokkos::LayoutLeft>) {
    fn(Kokkos::subview(out, Kokkos::ALL, at[1], at[2]));
  } else if constexpr (std::is_same_v<layout, Kokkos::LayoutRight>) {
    fn(Kokkos::subview(out, at[0], at[1], Kokkos::ALL));
  } else if (order.fast == 0) {
    fn(Kokkos::subview(out, Kokkos::ALL, at[1], at[2]));
  } else if (order.fast == 1) {
    fn(Kokkos::subview(out, at[0], Kokkos::ALL, at[2]));
  } else {
    fn(Kokkos::subview(out, at[0], at[1], Kokkos::ALL));
  }
}

// Runs along the fastest axis at least this long take a team each in the device shape.
inline constexpr std::int64_t mask_team_run_min = 32;

// The device shape for runs that fill a warp: team r fills run r (its slow and middle coordinates
// decoded once per team), neighbouring threads neighbouring voxels. One voxel per thread of a flat
// range pays two integer divisions and a whole index computation per 1-byte store, which set the
// time on the H200 of the second GPU run (642 µs for 512^3 against 32 µs for a memset of the
// same bytes, docs/gpu.md). Each voxel's test is the flat kernel's expression: the same bits.
template <class ExecutionSpace, class View>
void fill_sphere_mask_runs(const ExecutionSpace& space, const View& mask, const sphere& s, const axis_order order,
                           const std::int64_t n_middle, const std::int64_t runs, const std::int64_t n_fast) {
  using policy_type = Kokkos::TeamPolicy<ExecutionSpace>;
  // On a device, whole warps up to the run's length (at most 256 threads), so that a run of 40
  // voxels does not leave most of a larger automatic team idle; host spaces choose their own.
  policy_type policy(space, static_cast<int>(runs), Kokkos::AUTO);
  if constexpr (!is_host_space_v<ExecutionSpace>) {
    const std::int64_t warps = (n_fast + 31) / 32;
    policy = policy_type(space, static_cast<int>(runs), static_cast<int>(warps < 8 ? 32 * warps : 256));
  }
  Kokkos::parallel_for(
      "ordo::fill_sphere_mask", policy,
      KOKKOS_LAMBDA(const typename policy_type::member_type& team) {
        const std::int64_t run = team.league_rank();
        std::int64_t at[3] = {0, 0, 0};
        at[order.slow] = run / n_middle;
        at[order.middle] = run % n_middle;
        const double dx = static_cast<double>(at[0]) - s.cx, dy = static_cast<double>(at[1]) - s.cy,
                     dz = static_cast<double>(at[2]) - s.cz;
        const int fast = order.fast;
        const double cc = fast == 0 ? s.cx : (fast == 1 ? s.cy : s.cz);
        const double threshold = s.threshold;
        const std::int64_t length = n_fast;
        with_run(mask, order, at, [&](const auto& row) {
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, length), [&](const std::int64_t c) {
            const double dc = static_cast<double>(c) - cc;
            row(c) = squared_distance(fast == 0 ? dc : dx, fast == 1 ? dc : dy, fast == 2 ? dc : dz) < threshold ? 1 : 0;
          });
        });
      });
}

// The device shape's kernel for short runs: voxel i of a flat range is (slow, middle, fast) in
// memory order.
template <class Index, class ExecutionSpace, class View>
void fill_sphere_mask_voxels(const ExecutionSpace& space, const View& mask, const sphere& s, const axis_order order,
                             const std::int64_t n_slow, const std::int64_t n_middle, const std::int64_t n_fast) {
  const Index middle = static_cast<Index>(n_middle), fast = static_cast<Index>(n_fast);
  Kokkos::parallel_for(
      "ordo::fill_sphere_mask",
      Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<Index>>(space, 0,
                                                                    static_cast<Index>(n_slow * n_middle * n_fast)),
      KOKKOS_LAMBDA(const Index i) {
        const Index f = i % fast, rest = i / fast;
        const Index md = rest % middle, sl = rest / middle;
        const Index x = order.fast == 0 ? f : (order.middle == 0 ? md : sl);
        const Index y = order.fast == 1 ? f : (order.middle == 1 ? md : sl);
        const Index z = order.fast == 2 ? f : (order.middle == 2 ? md : sl);
        const double d = squared_distance(static_cast<double>(x) - s.cx, static_cast<double>(y) - s.cy,
                                          static_cast<double>(z) - s.cz);
        mask(x, y, z) = d < s.threshold ? 1 : 0;
      });
}

// Whether the runs along the fastest axis lie one after another in memory, run r at r * n_fast:
// then a range of runs is one range of bytes.
template <class View>
bool runs_are_contiguous(const View& mask, const axis_order& order, std::int64_t n_middle, std::int64_t n_fast) {
  const auto stride = [&](int axis) { return static_cast<std::int64_t>(mask.stride(static_cast<std::size_t>(axis))); };
  return stride(order.fast) == 1 && stride(order.middle) == n_fast && stride(order.slow) == n_fast * n_middle;
}

// Stores the 16 bytes lo (bytes 0-7, least significant first) and hi (8-15) at p, which is
// 16-byte aligned: one vector store on a GPU.
KOKKOS_INLINE_FUNCTION void store_16_bytes(std::uint8_t* p, std::uint64_t lo, std::uint64_t hi) {
#if ORDO_DEVICE_COMPILE
  *reinterpret_cast<ulonglong2*>(p) = make_ulonglong2(lo, hi);  // CUDA's and HIP's vector type; little-endian
#else
  for (int j = 0; j < 8; ++j) {
    p[j] = static_cast<std::uint8_t>(lo >> (8 * j));
    p[8 + j] = static_cast<std::uint8_t>(hi >> (8 * j));
  }
#endif
}

// The bytes j of [0, 8) with lo <= base + j < hi set to 1, as one little-endian word.
KOKKOS_INLINE_FUNCTION std::uint64_t ones_between(std::int64_t lo, std::int64_t hi, std::int64_t base) {
  const auto below = [](std::int64_t k) {  // the bytes j < k, k clamped to [0, 8]
    return k <= 0 ? std::uint64_t{0} : k >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * k)) - 1;
  };
  return std::uint64_t{0x0101010101010101} & below(hi - base) & ~below(lo - base);
}

// The device shape for masks whose runs lie one after another (runs_are_contiguous), in two
// launches. First a thread per run finds the run's inside interval (the host shape's, from a
// square root and exact tests in double) into a workspace. Then the mask is one range of bytes,
// and thread b writes the b-th 16-byte-aligned block that the range overlaps: where the block
// lies within one run, its bytes come from the interval by shifts and masks, and one 16-byte
// store writes them; a block where runs meet is assembled byte by byte, and the blocks at the
// mask's two ends, which it covers only in part, are stored byte by byte. A team per run with
// one byte per thread took 988 us for 512^3 on the H200 of the third GPU run, against 33 us for
// a memset of the same bytes; 16 bytes per thread with each block's interval recomputed took
// 275 us in the fourth (docs/gpu.md). Index: the type of the divisions, 32 bits where the mask
// allows.
template <class Index, class ExecutionSpace, class Memory>
void fill_sphere_mask_blocks(const ExecutionSpace& space, std::uint8_t* const base, const sphere& s,
                             const axis_order order, const std::int64_t n_middle, const std::int64_t runs,
                             const std::int64_t n_fast) {
  const Index total = static_cast<Index>(runs * n_fast), fast = static_cast<Index>(n_fast),
              middle = static_cast<Index>(n_middle);
  const call_workspace<Index, ExecutionSpace, Memory> workspace(space, "ordo::fill_sphere_mask intervals",
                                                                2 * static_cast<std::size_t>(runs));
  Index* const interval = workspace.data();  // first and last inside voxel of each run
  Kokkos::parallel_for(
      "ordo::fill_sphere_mask intervals",
      Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<Index>>(space, 0, static_cast<Index>(runs)),
      KOKKOS_LAMBDA(const Index run) {
        std::int64_t at[3];
        const run_interval in = interval_of_run<Index>(run, order, middle, n_fast, s, at);
        interval[2 * static_cast<std::int64_t>(run)] = static_cast<Index>(in.first);
        interval[2 * static_cast<std::int64_t>(run) + 1] = static_cast<Index>(in.last);
      });
  const Index head = static_cast<Index>(reinterpret_cast<std::uintptr_t>(base) % 16);  // block 0's bytes before base
  const Index blocks = (head + total + 15) / 16;
  Kokkos::parallel_for(
      "ordo::fill_sphere_mask", Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<Index>>(space, 0, blocks),
      KOKKOS_LAMBDA(const Index b) {
        const Index begin = b * 16 - head;  // the block's first byte from base; negative in block 0
        const Index j0 = begin < 0 ? -begin : 0;                         // its first byte in the mask
        const Index j1 = total - begin < 16 ? total - begin : Index(16);  // one past its last
        Index run = (begin + j0) / fast, c = begin + j0 - run * fast;
        std::uint64_t lo = 0, hi = 0;
        if (c + (j1 - j0) <= fast) {  // one run: bytes j with first <= c + (j - j0) <= last
          const std::int64_t shift = static_cast<std::int64_t>(j0) - c;
          const std::int64_t from = interval[2 * static_cast<std::int64_t>(run)] + shift,
                             to = interval[2 * static_cast<std::int64_t>(run) + 1] + 1 + shift;
          lo = ones_between(from, to, 0);
          hi = ones_between(from, to, 8);
        } else {
          Index first = interval[2 * static_cast<std::int64_t>(run)], last = interval[2 * static_cast<std::int64_t>(run) + 1];
          for (Index j = j0; j < j1; ++j, ++c) {
            if (c == fast) {  // the next run starts inside this block
              c = 0;
              ++run;
              first = interval[2 * static_cast<std::int64_t>(run)];
              last = interval[2 * static_cast<std::int64_t>(run) + 1];
            }
            const std::uint64_t inside = first <= c && c <= last ? 1 : 0;
            if (j < 8) {
              lo |= inside << (8 * j);
            } else {
              hi |= inside << (8 * (j - 8));
            }
          }
        }
        if (j0 == 0 && j1 == 16) {
          store_16_bytes(base + begin, lo, hi);
        } else {
          for (Index j = j0; j < j1; ++j) {
            base[begin + j] = static_cast<std::uint8_t>((j < 8 ? lo >> (8 * j) : hi >> (8 * (j - 8))) & 0xff);
          }
        }
      });
  space.fence();  // the intervals' workspace is released on return
}

#if ORDO_X86_HOST_SIMD
// The host shape for a mask larger than the cache whose runs are contiguous: each work item
// writes about 64 KiB of consecutive runs through one streaming_byte_writer, so that whole cache
// lines go to memory without first being read (memset's speed for large sizes, docs/masks.md).
// The same intervals as write_interval: the same bits.
template <class ExecutionSpace, class View>
void fill_sphere_mask_streaming(const ExecutionSpace& space, const View& mask, const sphere& s, const axis_order order,
                                const std::int64_t n_middle, const std::int64_t runs, const std::int64_t n_fast) {
  std::uint8_t* const base = mask.data();
  const std::int64_t runs_per_item = n_fast >= 65536 ? 1 : 65536 / n_fast;
  const std::int64_t items = (runs + runs_per_item - 1) / runs_per_item;
  Kokkos::parallel_for(
      "ordo::fill_sphere_mask", Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>(space, 0, items),
      [=](std::int64_t item) {
        const std::int64_t first_run = item * runs_per_item;
        const std::int64_t end_run = first_run + runs_per_item < runs ? first_run + runs_per_item : runs;
        streaming_byte_writer out(base + first_run * n_fast, base + end_run * n_fast);
        for (std::int64_t run = first_run; run < end_run; ++run) {
          std::int64_t at[3];
          const run_interval in = interval_of_run(run, order, n_middle, n_fast, s, at);
          out.fill(0, static_cast<std::size_t>(in.first));
          out.fill(1, static_cast<std::size_t>(in.last - in.first + 1));
          out.fill(0, static_cast<std::size_t>(n_fast - 1 - in.last));
        }
        out.finish();
      });
}
#endif

// Host masks of at least this many bytes are written with stream stores where the platform has
// them (the last-level cache's size); tests pass 0 to run that path on small grids.
inline std::size_t mask_streaming_threshold_bytes() {
#if ORDO_X86_HOST_SIMD
  return streaming_store_threshold_bytes();
#else
  return std::numeric_limits<std::size_t>::max();
#endif
}

// The host shape: one run per thread along the fastest axis (long contiguous runs, filled at
// memset speed). The device shape: 16 bytes per thread where the runs are contiguous; otherwise
// a team per run where runs are at least mask_team_run_min voxels long, else one voxel per thread
// of a flat range whose fastest index is the fastest axis. Every way, neighbouring threads store
// neighbouring bytes, and each voxel gets the exact test the host shape's interval comes from, so
// the shapes agree bit for bit.
template <launch_shape Shape, class ExecutionSpace, class View>
void fill_sphere_mask(const ExecutionSpace& space, const View& mask, const sphere& s,
                      [[maybe_unused]] std::size_t streaming_from_bytes = mask_streaming_threshold_bytes()) {
  const std::int64_t extent[3] = {static_cast<std::int64_t>(mask.extent(0)), static_cast<std::int64_t>(mask.extent(1)),
                                  static_cast<std::int64_t>(mask.extent(2))};
  if (extent[0] == 0 || extent[1] == 0 || extent[2] == 0) return;
  const axis_order order = memory_order(mask);
  const std::int64_t n_slow = extent[order.slow], n_middle = extent[order.middle], n_fast = extent[order.fast];
  if constexpr (Shape == launch_shape::host) {
#if ORDO_X86_HOST_SIMD
    if constexpr (is_host_space_v<ExecutionSpace>) {
      const std::size_t bytes = static_cast<std::size_t>(n_slow * n_middle * n_fast);
      if (bytes >= streaming_from_bytes && runs_are_contiguous(mask, order, n_middle, n_fast)) {
        fill_sphere_mask_streaming(space, mask, s, order, n_middle, n_slow * n_middle, n_fast);
        return;
      }
    }
#endif
    Kokkos::parallel_for(
        "ordo::fill_sphere_mask",
        Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>(space, 0, n_slow * n_middle),
        KOKKOS_LAMBDA(std::int64_t run) {
          std::int64_t at[3];
          const run_interval in = interval_of_run(run, order, n_middle, n_fast, s, at);
          const std::int64_t length = n_fast;
          with_run(mask, order, at, [&](const auto& row) { write_interval(row, length, in); });
        });
  } else if (runs_are_contiguous(mask, order, n_middle, n_fast)) {
    if (n_slow * n_middle * n_fast <= std::numeric_limits<std::int32_t>::max() - 16) {
      fill_sphere_mask_blocks<std::int32_t, ExecutionSpace, typename View::memory_space>(
          space, mask.data(), s, order, n_middle, n_slow * n_middle, n_fast);
    } else {
      fill_sphere_mask_blocks<std::int64_t, ExecutionSpace, typename View::memory_space>(
          space, mask.data(), s, order, n_middle, n_slow * n_middle, n_fast);
    }
  } else if (n_fast >= mask_team_run_min && n_slow * n_middle <= std::numeric_limits<int>::max()) {
    fill_sphere_mask_runs(space, mask, s, order, n_middle, n_slow * n_middle, n_fast);
  } else {
    // 32-bit index arithmetic where it suffices: a 64-bit division costs a GPU tens of instructions.
    if (n_slow * n_middle * n_fast <= std::numeric_limits<std::int32_t>::max()) {
      fill_sphere_mask_voxels<std::int32_t>(space, mask, s, order, n_slow, n_middle, n_fast);
    } else {
      fill_sphere_mask_voxels<std::int64_t>(space, mask, s, order, n_slow, n_middle, n_fast);
    }
  }
}

}  // namespace detail

}  // namespace ordo

#endif
