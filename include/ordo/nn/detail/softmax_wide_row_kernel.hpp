#ifndef ORDO_NN_DETAIL_SOFTMAX_WIDE_ROW_KERNEL_HPP
#define ORDO_NN_DETAIL_SOFTMAX_WIDE_ROW_KERNEL_HPP

// The device shape's forward for long rows (at least softmax_wide_row_min elements): a team per
// row. The 16-lanes-per-row shape (softmax_kernels.hpp) gives a (4096, 32000) batch 65,536
// threads, each walking 2000 elements; every row is in flight at once, so its second read misses
// the cache, and few loads per thread are in flight: 29 % of an H200's copy bandwidth in the
// fourth GPU run (docs/gpu.md). Here element c of a row belongs to lane c mod L (L =
// softmax_row_lanes), each lane keeps an online max and sum over its elements in index order, the
// row's max and sum come from fixed binary trees over the lanes (lane l with lane l + w, w = L/2,
// ..., 1), and a second pass writes the row, each thread keeping a batch of loads in flight. The
// lanes and the tree do not depend on the team size or the thread count: the results are the same
// bits on any of them. They differ from the host shape's (16 lanes added in lane order) within the
// forward's tolerance (tests/softmax_test.cpp); the backward passes keep the 16-lane cut, whose
// bits both shapes share.
//
// L = 64, from bench_gpu's sweeps on an H200 ((4096, 32000), float and bfloat16, the sixth GPU
// session, docs/gpu.md): 1024 lanes 717 and 671-741 us, 512 lanes 628 and 624, 256 lanes 459-489
// and 366-396, 128 lanes 445-483 and 340-371, 64 lanes 442-458 and 317-328. A 1024-thread
// team held a multiprocessor alone (registers, scratch) and left its memory pipes idle through
// the trees' barriers; small teams overlap one another's trees and passes. Nsight Compute then
// shows the kernel at 70 % of DRAM bandwidth with the second read mostly from memory (L2 hit rate
// 34 %). Bounding the teams in flight so that their rows stay in L2 (2 to 6 teams per
// multiprocessor, each taking every league-size-th row) was 1.2 to 3.5 times slower: too few
// loads in flight.

#include <ordo/nn/detail/softmax_kernels.hpp>
#include <ordo/platform/batched_loads.hpp>
#include <ordo/platform/kokkos_math.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

ORDO_IMPL_FP_CONTRACT_OFF_BEGIN  // every level rounds alike (core/config.hpp)

namespace ordo::nn::detail {

inline constexpr int softmax_row_lanes = 64;                  // wide rows: lane of element c is c mod 64
inline constexpr std::int64_t softmax_wide_row_min = 4096;  // rows at least this long take a team each

// Per team: each lane's max and sum, the maxima's tree, the row's max and second value (1 / sum,
// log sum).
KOKKOS_INLINE_FUNCTION constexpr std::int64_t softmax_row_scratch_values(int lanes) {
  return 3 * std::int64_t{lanes} + 2;
}

template <softmax_op Op, class XView, class YView, class LseView, class Space>
struct team_row_forward_kernel {
  using T = typename XView::non_const_value_type;
  using C = compute_type_t<T>;
  using A = accumulate_type_t<T>;
  using lse_value = typename LseView::non_const_value_type;
  row_access<XView> x;
  row_access<YView> y;
  LseView lse;
  std::int64_t cols;
  C nan;  // made on the host: std::numeric_limits is not callable in device code everywhere
  lse_value lse_nan;
  int lanes;  // a power of two; the results' bits depend on it (bench_gpu sweeps it)

  KOKKOS_INLINE_FUNCTION void operator()(const softmax_team_member_t<Space>& member) const {
    // A builtin, not std::numeric_limits: nvcc does not let device code call its host constexpr functions.
    constexpr C minus_inf = -static_cast<C>(__builtin_huge_val());
    const std::int64_t r = member.league_rank();
    const softmax_team_scratch_t<Space> scratch(member.team_scratch(0),
                                                static_cast<std::size_t>(softmax_row_scratch_values(lanes)));
    double* const lane_max = scratch.data();
    double* const lane_sum = lane_max + lanes;
    double* const tree = lane_sum + lanes;   // the maxima's tree
    double* const row = tree + lanes;        // row[0]: max, row[1]: 1 / sum or log sum
    const std::int64_t n = cols;
    const row_access<XView>& in = x;
    const auto load = [&](std::int64_t c) { return static_cast<C>(in.v(r, c)); };
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, lanes), [&](const int l) {
      online_lane<C, A> lane;
      ordo::detail::for_each_batched(l, n, lanes, load, [&](std::int64_t, const C v) { lane.add(v); });
      lane_max[l] = static_cast<double>(lane.m);
      lane_sum[l] = static_cast<double>(lane.s);
    });
    member.team_barrier();
    // The row's max by a binary tree (exact), then each lane's sum rescaled to it once, with the
    // scale in the accumulate type, then the sums added by the same tree: a lane's sum is
    // rescaled once, as in the 16-lane shape, not at every level of the tree.
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, lanes / 2), [&](const int l) {
      const double a = lane_max[l], b = lane_max[l + lanes / 2];
      tree[l] = a > b ? a : b;
    });
    member.team_barrier();
    for (int width = lanes / 4; width >= 1; width /= 2) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(member, width), [&](const int l) {
        tree[l] = tree[l] > tree[l + width] ? tree[l] : tree[l + width];
      });
      member.team_barrier();
    }
    const C row_max = static_cast<C>(tree[0]);
    if (row_max > minus_inf && row_max < -minus_inf) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(member, lanes), [&](const int l) {
        const C lm = static_cast<C>(lane_max[l]);
        // A lane with no finite value adds 0 (or its NaN).
        const A scale = lm == minus_inf ? A(0) : ordo::detail::math::exp(static_cast<A>(lm) - static_cast<A>(row_max));
        lane_sum[l] = static_cast<double>(static_cast<A>(lane_sum[l]) * scale);
      });
      member.team_barrier();
      for (int width = lanes / 2; width >= 1; width /= 2) {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(member, width), [&](const int l) {
          lane_sum[l] = static_cast<double>(static_cast<A>(lane_sum[l]) + static_cast<A>(lane_sum[l + width]));
        });
        member.team_barrier();
      }
    }
    Kokkos::single(Kokkos::PerTeam(member), [&]() {
      const C m = row_max;
      const A s = static_cast<A>(lane_sum[0]);
      row[0] = static_cast<double>(m);
      if (!(m > minus_inf && m < -minus_inf)) {
        if constexpr (Op == softmax_op::logsumexp) {
          lse(r) = row_has_nan(in, r, n) ? lse_nan : static_cast<lse_value>(m);
        }
        return;
      }
      row[1] = static_cast<double>(finish_row<Op>(lse, r, m, s));
    });
    if constexpr (Op != softmax_op::logsumexp) {
      member.team_barrier();
      using storage = typename row_access<YView>::storage;
      const row_access<YView>& out = y;
      const C m = static_cast<C>(row[0]);
      const bool finite = m > minus_inf && m < -minus_inf;
      const C value = static_cast<C>(row[1]);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(member, lanes), [&](const int l) {
        if (!finite) {
          for (std::int64_t c = l; c < n; c += lanes) out.v(r, c) = to_storage<storage>(nan);
          return;
        }
        ordo::detail::for_each_batched(l, n, lanes, load, [&](std::int64_t c, const C v) {
          out.v(r, c) = to_storage<storage>(row_output<Op>(v, m, value));
        });
      });
    }
  }
};

}  // namespace ordo::nn::detail

ORDO_IMPL_FP_CONTRACT_OFF_END

#endif
