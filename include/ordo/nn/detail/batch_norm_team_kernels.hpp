#ifndef ORDO_NN_DETAIL_BATCH_NORM_TEAM_KERNELS_HPP
#define ORDO_NN_DETAIL_BATCH_NORM_TEAM_KERNELS_HPP

// Batch norm's kernels in the device launch shape (platform/launch_shape.hpp): the host
// shape's kernels (batch_norm_kernels.hpp) cut for thousands of threads, with the same bits.

#include <ordo/nn/detail/batch_norm_kernels.hpp>
#include <ordo/platform/batched_loads.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace ordo::nn::detail {

// The device shape. The host's order of additions is kept exactly, so both shapes give the same
// bits; what can run in parallel is what the host order leaves independent:
//   blocks (channels first): each run's 8 lanes (run_sum's acc[l]) are independent chains, and so
//     are the runs of an item; a team takes items_per_team items, a thread per (item, run, lane)
//     for runs of at least 64 values, neighbouring threads reading neighbouring values, else a
//     thread per (item, run); the lane and run results meet in team scratch and are added in the
//     host's order;
//   rows (channels last, (N, C)): each channel of an item is one chain over the item's rows; a
//     thread per (item, channel), neighbouring threads on neighbouring channels;
//   merges: a thread per channel; element passes: a thread per element.

// Values of a few rows of one channel, or of x and dy, loaded together (for_each_batched): the
// rows kernels below.
template <class T, int N>
struct loaded_values {
  T v[N];
};

// Lane `lane` of run_sum's 8 accumulators: values lane, lane + 8, ... of the groups of 8, and for
// lane 0 the tail after them, in run_sum's order. Loads are not batched here (unlike the rows
// kernels below): with 16 values loaded ahead, the channels-first cases of the fourth GPU run took
// 12-16 % longer than the same chains in plain loops (docs/gpu.md).
template <class T>
KOKKOS_INLINE_FUNCTION double lane_sum(const T* x, std::int64_t n, int lane) {
  const std::int64_t groups = n / 8 * 8;
  double acc = 0;
  for (std::int64_t i = lane; i < groups; i += 8) acc += to_double(x[i]);
  if (lane == 0) {
    for (std::int64_t i = groups; i < n; ++i) acc += to_double(x[i]);
  }
  return acc;
}

template <class T>
KOKKOS_INLINE_FUNCTION double lane_squared_deviations(const T* x, std::int64_t n, double centre, int lane) {
  const std::int64_t groups = n / 8 * 8;
  double acc = 0;
  for (std::int64_t i = lane; i < groups; i += 8) {
    const double d = to_double(x[i]) - centre;
    acc += d * d;
  }
  if (lane == 0) {
    for (std::int64_t i = groups; i < n; ++i) {
      const double d = to_double(x[i]) - centre;
      acc += d * d;
    }
  }
  return acc;
}

template <class T>
KOKKOS_INLINE_FUNCTION double lane_centred_dot(const T* x, const T* dy, std::int64_t n, double centre, int lane) {
  const std::int64_t groups = n / 8 * 8;
  double acc = 0;
  for (std::int64_t i = lane; i < groups; i += 8) acc += (to_double(x[i]) - centre) * to_double(dy[i]);
  if (lane == 0) {
    for (std::int64_t i = groups; i < n; ++i) acc += (to_double(x[i]) - centre) * to_double(dy[i]);
  }
  return acc;
}

// How the device shape cuts items among teams, each item chains_per_item chains (blocks:
// rows_per_item runs of `lanes` chains; rows: channel_width). Blocks: items_per_team whole items a
// team, whose chains meet in its scratch. Rows: the chains (item, channel) are independent, so
// team r takes the chains r * team_chains, ... in item-major order, parts of items included.
struct team_cut {
  std::int64_t items_per_team = 1, chains_per_item = 1, team_chains = 1, teams = 0;
  int lanes = 1;  // blocks: 8 (a thread per lane of a run) or 1 (a thread per run)
  bool by_rows = false;

  // Chains a team aims at: a GPU block of 64 threads, a thread per chain. The bitwise contract fixes
  // the chains (16,384 of them for (32, 64, 56, 56) channels first, 25,088 channels last), so
  // small teams are what spreads them over every multiprocessor: with 256 chains a team and
  // Kokkos' choice of 128 threads, the channels-first statistics ran 64 teams, 6 % of an H200's
  // threads (Nsight Compute, the sixth GPU session: docs/gpu.md). Runs shorter than
  // lane_threshold values are one chain each (a thread per lane would add fewer than 8 values).
  static constexpr std::int64_t chains_per_team = 64;
  static constexpr std::int64_t lane_threshold = 64;

  // Doubles of team scratch for `arrays` chain results per chain, and one more per item.
  KOKKOS_INLINE_FUNCTION std::int64_t scratch_values(int arrays) const {
    return by_rows ? 0 : (arrays * chains_per_item + 1) * items_per_team;
  }
};

inline team_cut team_cut_of(const work_partition& p) {
  team_cut t;
  t.by_rows = p.by_rows();
  if (p.by_rows()) {
    t.chains_per_item = p.channel_width;
  } else {
    t.lanes = p.g.inner >= team_cut::lane_threshold ? 8 : 1;
    t.chains_per_item = p.rows_per_item * t.lanes;
  }
  if (p.by_rows()) {
    t.team_chains = team_cut::chains_per_team;
    t.teams = (p.items() * t.chains_per_item + t.team_chains - 1) / t.team_chains;
  } else {
    t.items_per_team =
        t.chains_per_item >= team_cut::chains_per_team ? 1 : team_cut::chains_per_team / t.chains_per_item;
    t.team_chains = t.items_per_team * t.chains_per_item;
    t.teams = (p.items() + t.items_per_team - 1) / t.items_per_team;
  }
  return t;
}

template <class Space>
using team_member_t = typename Kokkos::TeamPolicy<Space>::member_type;
template <class Space>
using team_scratch_t = Kokkos::View<double*, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;

// What one team of the blocks kernels works on.
struct team_items {
  std::int64_t first = 0, count = 0;

  KOKKOS_INLINE_FUNCTION team_items(const work_partition& p, const team_cut& t, std::int64_t league_rank)
      : first(league_rank * t.items_per_team) {
    const std::int64_t left = p.items() - first;
    count = left < t.items_per_team ? left : t.items_per_team;
  }
};

// What one team of the rows kernels works on: chains (item, channel) numbered item-major.
struct team_chain_range {
  std::int64_t first = 0, count = 0;

  KOKKOS_INLINE_FUNCTION team_chain_range(const work_partition& p, const team_cut& t, std::int64_t league_rank)
      : first(league_rank * t.team_chains) {
    const std::int64_t left = p.items() * t.chains_per_item - first;
    count = left < t.team_chains ? left : t.team_chains;
  }
};

// The sum of one run's chain results in scratch, as run_sum adds its lanes.
KOKKOS_INLINE_FUNCTION double run_total(const double* chains, int lanes) {
  if (lanes == 1) return chains[0];
  const double acc[8] = {chains[0], chains[1], chains[2], chains[3], chains[4], chains[5], chains[6], chains[7]};
  return sum_of_lanes(acc);
}

// item_moments_kernel in the device shape.
template <class T, class Space>
struct team_moments_kernel {
  work_partition p;
  team_cut t;
  const T* x;
  double* partial_sum;
  double* partial_m2;

  KOKKOS_INLINE_FUNCTION void operator()(const team_member_t<Space>& m) const {
    if (p.by_rows()) {
      rows(m);
    } else {
      blocks(m);
    }
  }

  KOKKOS_INLINE_FUNCTION void blocks(const team_member_t<Space>& m) const {
    const team_items items(p, t, m.league_rank());
    const std::int64_t cs = p.g.channels, inner = p.g.inner, chains = t.chains_per_item;
    const int lanes = t.lanes;
    const team_scratch_t<Space> scratch(m.team_scratch(0), static_cast<std::size_t>(t.scratch_values(1)));
    double* const chain = scratch.data();
    double* const centre = chain + t.items_per_team * chains;
    // Chain j: lane j % lanes of the run of row j % chains / lanes of item j / chains.
    const auto run_of = [&](std::int64_t j, const T*& run) {
      const work_partition::span it = p.item(items.first + j / chains);
      const std::int64_t row = it.row_begin + j % chains / lanes;
      run = x + p.offset(row, it.channel_begin);
      return row < it.row_end;
    };
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, items.count * chains), [&](std::int64_t j) {
      const T* run = nullptr;
      if (!run_of(j, run)) return;
      chain[j] = lanes == 1 ? run_sum(run, inner) : lane_sum(run, inner, static_cast<int>(j % lanes));
    });
    m.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, items.count), [&](std::int64_t g) {
      const work_partition::span it = p.item(items.first + g);
      double s = 0;
      for (std::int64_t r = 0; r < it.row_end - it.row_begin; ++r) s += run_total(chain + g * chains + r * lanes, lanes);
      partial_sum[it.q * cs + it.channel_begin] = s;
      centre[g] = s * p.inverse_count(it.q);
    });
    m.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, items.count * chains), [&](std::int64_t j) {
      const T* run = nullptr;
      if (!run_of(j, run)) return;
      const double k = centre[j / chains];
      chain[j] = lanes == 1 ? run_squared_deviations(run, inner, k)
                            : lane_squared_deviations(run, inner, k, static_cast<int>(j % lanes));
    });
    m.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, items.count), [&](std::int64_t g) {
      const work_partition::span it = p.item(items.first + g);
      double m2 = 0;
      for (std::int64_t r = 0; r < it.row_end - it.row_begin; ++r) m2 += run_total(chain + g * chains + r * lanes, lanes);
      partial_m2[it.q * cs + it.channel_begin] = m2;
    });
  }

  // One channel of a row item, as item_moments_kernel's loops do it for each channel.
  KOKKOS_INLINE_FUNCTION void rows(const team_member_t<Space>& m) const {
    const team_chain_range chains(p, t, m.league_rank());
    const std::int64_t cs = p.g.channels, width_max = t.chains_per_item;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, chains.count), [&](std::int64_t j) {
      const std::int64_t chain = chains.first + j;
      const work_partition::span it = p.item(chain / width_max);
      const std::int64_t c = it.channel_begin + chain % width_max, q = it.q, r0 = it.row_begin, r1 = it.row_end;
      if (c >= it.channel_end) return;
      const double inverse_count = p.inverse_count(q);
      const T* col = x + c;
      double sum = 0, m2 = 0;
      // Groups of 4 rows, as the host kernel adds them, loaded 4 groups at a time.
      const auto load_group = [&](std::int64_t row) {
        return loaded_values<T, 4>{{col[row * cs], col[(row + 1) * cs], col[(row + 2) * cs], col[(row + 3) * cs]}};
      };
      if constexpr (std::is_same_v<compute_type_t<T>, float>) {
        const double k = to_double(col[r0 * cs]);
        std::int64_t r = ordo::detail::for_each_batched<4>(
            r0 + 1, r1 - 3, 4, load_group, [&](std::int64_t, const loaded_values<T, 4>& g) {
              const double da = to_double(g.v[0]) - k, db = to_double(g.v[1]) - k;
              const double dd = to_double(g.v[2]) - k, de = to_double(g.v[3]) - k;
              sum += (da + db) + (dd + de);
              m2 += (da * da + db * db) + (dd * dd + de * de);
            });
        for (; r < r1; ++r) {
          const double da = to_double(col[r * cs]) - k;
          sum += da;
          m2 += da * da;
        }
        const double n = static_cast<double>(r1 - r0);
        const double deviations = m2 - sum * sum * inverse_count;
        m2 = deviations > 0 ? deviations : 0;
        sum = n * k + sum;
      } else {
        std::int64_t r = ordo::detail::for_each_batched<4>(
            r0, r1 - 3, 4, load_group, [&](std::int64_t, const loaded_values<T, 4>& g) {
              sum += (to_double(g.v[0]) + to_double(g.v[1])) + (to_double(g.v[2]) + to_double(g.v[3]));
            });
        for (; r < r1; ++r) sum += to_double(col[r * cs]);
        r = ordo::detail::for_each_batched<4>(r0, r1 - 3, 4, load_group, [&](std::int64_t, const loaded_values<T, 4>& g) {
          const double centre = sum * inverse_count;
          const double da = to_double(g.v[0]) - centre, db = to_double(g.v[1]) - centre;
          const double dd = to_double(g.v[2]) - centre, de = to_double(g.v[3]) - centre;
          m2 += (da * da + db * db) + (dd * dd + de * de);
        });
        for (; r < r1; ++r) {
          const double d = to_double(col[r * cs]) - sum * inverse_count;
          m2 += d * d;
        }
      }
      partial_sum[q * cs + c] = sum;
      partial_m2[q * cs + c] = m2;
    });
  }
};

// item_backward_sums_kernel in the device shape.
template <class T, class Space>
struct team_backward_sums_kernel {
  work_partition p;
  team_cut t;
  const T* x;
  const T* dy;
  const double* mean;
  double* partial_dy;
  double* partial_dotp;

  KOKKOS_INLINE_FUNCTION void operator()(const team_member_t<Space>& m) const {
    if (p.by_rows()) {
      rows(m);
    } else {
      blocks(m);
    }
  }

  KOKKOS_INLINE_FUNCTION void blocks(const team_member_t<Space>& m) const {
    const team_items items(p, t, m.league_rank());
    const std::int64_t cs = p.g.channels, inner = p.g.inner, chains = t.chains_per_item;
    const int lanes = t.lanes;
    const team_scratch_t<Space> scratch(m.team_scratch(0), static_cast<std::size_t>(t.scratch_values(2)));
    double* const chain_dy = scratch.data();
    double* const chain_dotp = chain_dy + t.items_per_team * chains;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, items.count * chains), [&](std::int64_t j) {
      const work_partition::span it = p.item(items.first + j / chains);
      const std::int64_t c = it.channel_begin, row = it.row_begin + j % chains / lanes;
      if (row >= it.row_end) return;
      const std::int64_t base = p.offset(row, c);
      const double centre = mean[c];
      if (lanes == 1) {
        chain_dy[j] = run_sum(dy + base, inner);
        chain_dotp[j] = run_centred_dot(x + base, dy + base, inner, centre);
      } else {
        const int lane = static_cast<int>(j % lanes);
        chain_dy[j] = lane_sum(dy + base, inner, lane);
        chain_dotp[j] = lane_centred_dot(x + base, dy + base, inner, centre, lane);
      }
    });
    m.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, items.count), [&](std::int64_t g) {
      const work_partition::span it = p.item(items.first + g);
      const std::int64_t q = it.q, c = it.channel_begin;
      double sum_dy = 0, dotp = 0;
      for (std::int64_t r = 0; r < it.row_end - it.row_begin; ++r) {
        sum_dy += run_total(chain_dy + g * chains + r * lanes, lanes);
        dotp += run_total(chain_dotp + g * chains + r * lanes, lanes);
      }
      partial_dy[q * cs + c] = sum_dy;
      partial_dotp[q * cs + c] = dotp;
    });
  }

  KOKKOS_INLINE_FUNCTION void rows(const team_member_t<Space>& m) const {
    const team_chain_range chains(p, t, m.league_rank());
    const std::int64_t cs = p.g.channels, width_max = t.chains_per_item;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, chains.count), [&](std::int64_t j) {
      const std::int64_t chain = chains.first + j;
      const work_partition::span it = p.item(chain / width_max);
      const std::int64_t c = it.channel_begin + chain % width_max, q = it.q, r0 = it.row_begin, r1 = it.row_end;
      if (c >= it.channel_end) return;
      const double centre = mean[c];
      const T* xc = x + c;
      const T* gc = dy + c;
      double sum_dy = 0, dotp = 0;
      // Pairs of rows, as the host kernel adds them, loaded 8 pairs at a time.
      std::int64_t r = ordo::detail::for_each_batched<8>(
          r0, r1 - 1, 2,
          [&](std::int64_t row) {
            return loaded_values<T, 4>{{gc[row * cs], gc[(row + 1) * cs], xc[row * cs], xc[(row + 1) * cs]}};
          },
          [&](std::int64_t, const loaded_values<T, 4>& v) {
            const double a = to_double(v.v[0]), b = to_double(v.v[1]);
            sum_dy += a + b;
            dotp += (to_double(v.v[2]) - centre) * a + (to_double(v.v[3]) - centre) * b;
          });
      for (; r < r1; ++r) {
        const double g = to_double(gc[r * cs]);
        sum_dy += g;
        dotp += (to_double(xc[r * cs]) - centre) * g;
      }
      partial_dy[q * cs + c] = sum_dy;
      partial_dotp[q * cs + c] = dotp;
    });
  }
};

// merge_moments_kernel for one channel.
template <class Epilogue = no_epilogue>
struct channel_merge_moments_kernel {
  work_partition p;
  const double* partial_sum;
  const double* partial_m2;
  double count;
  double* mean;
  double* m2_out;
  Epilogue then{};

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t c) const {
    const std::int64_t cs = p.g.channels;
    double sum = 0, m2 = 0;
    for (std::int64_t q = 0; q < p.row_items; ++q) sum += partial_sum[q * cs + c];
    sum /= count;
    for (std::int64_t q = 0; q < p.row_items; ++q) {
      const double offset = partial_sum[q * cs + c] * p.inverse_count(q) - sum;
      m2 += partial_m2[q * cs + c] + p.count(q) * offset * offset;
    }
    mean[c] = sum;
    m2_out[c] = m2;
    then(c);
  }
};

// merge_sums_kernel for one channel.
template <class Epilogue = no_epilogue>
struct channel_merge_sums_kernel {
  work_partition p;
  const double* first;
  const double* second;
  double* first_total;
  double* second_total;
  Epilogue then{};

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t c) const {
    const std::int64_t cs = p.g.channels;
    double a = 0, b = 0;
    for (std::int64_t q = 0; q < p.row_items; ++q) {
      a += first[q * cs + c];
      b += second[q * cs + c];
    }
    first_total[c] = a;
    second_total[c] = b;
    then(c);
  }
};

// The channel of element e of the (outer, C, inner) array, in 32-bit divisions where every index
// fits: a GPU divides 64-bit integers in tens of instructions, a cost per element of the passes
// below.
KOKKOS_FORCEINLINE_FUNCTION std::int64_t channel_of(const ordo::detail::channel_geometry& g, std::int64_t e) {
  if (g.outer * g.channels * g.inner <= std::int64_t{0xffffffff}) {
    return static_cast<std::int64_t>(static_cast<std::uint32_t>(e) / static_cast<std::uint32_t>(g.inner) %
                                     static_cast<std::uint32_t>(g.channels));
  }
  return e / g.inner % g.channels;
}

// normalize_kernel for one element of the (outer, C, inner) array.
template <class T>
struct element_normalize_kernel {
  ordo::detail::channel_geometry g;
  const T* x;
  T* y;
  affine_coefficients<compute_type_t<T>> k;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t e) const {
    const std::int64_t c = channel_of(g, e);
    y[e] = ordo::detail::narrow<T>(((ordo::detail::widen(x[e]) - k.centre_high[c]) - k.centre_low[c]) * k.scale[c] +
                               k.shift[c]);
  }
};

// input_gradient_kernel for one element.
template <class T>
struct element_input_gradient_kernel {
  ordo::detail::channel_geometry g;
  const T* x;
  const T* dy;
  T* dx;
  gradient_coefficients<compute_type_t<T>> k;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t e) const {
    const std::int64_t c = channel_of(g, e);
    dx[e] = ordo::detail::narrow<T>(((ordo::detail::widen(dy[e]) - k.mean_dy[c]) -
                                 ((ordo::detail::widen(x[e]) - k.centre_high[c]) - k.centre_low[c]) * k.projection[c]) *
                                k.scale[c]);
  }
};

}  // namespace ordo::nn::detail

#endif
