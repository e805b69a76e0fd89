#ifndef ORDO_KERNELS_DETAIL_PORTABLE_GEMV_HPP
#define ORDO_KERNELS_DETAIL_PORTABLE_GEMV_HPP

// y = alpha * op(M) x + beta * y as Kokkos kernels: the matrix-vector products of ordo::gemm
// (C = A B with one extent of C equal to 1) on the portable backend. A GEMM kernel would give each
// team a 64 x 64 or 128 x 512 block of C; with one column, all but one of those columns are idle.
//
// Both launch shapes cut each dot product the same way: term l belongs to lane l mod 16, each
// lane adds its terms in order in the compute type, and the 16 lanes are added in lane order.
// So the two shapes give the same bits whatever the thread count (the scheme of softmax's sums).
//   host:   one row of y per work item; a row's lanes are 16 independent accumulators, which
//           compilers keep in vector registers.
//   device: one team per 16 rows of y, 16 lanes per row, neighbouring threads reading neighbouring
//           elements of a row of a row-major M (coalesced); the lane sums meet in team scratch.

#include <ordo/platform/storage_conversion.hpp>
#include <ordo/core/scalar_traits.hpp>
#include <ordo/platform/launch_shape.hpp>
#include <ordo/kernels/detail/portable_gemm.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace ordo::detail {

inline constexpr int gemv_lanes = 16;
inline constexpr int gemv_rows_per_team = 16;

// A storage value in Compute, exactly.
template <class Compute, class S>
KOKKOS_FORCEINLINE_FUNCTION Compute gemv_load(S value) {
  if constexpr (floating_storage<S> && !std::is_same_v<std::remove_cv_t<S>, float> &&
                !std::is_same_v<std::remove_cv_t<S>, double>) {
    return static_cast<Compute>(widen(value));
  } else {
    return static_cast<Compute>(value);
  }
}

// A Compute value rounded once to the storage type S.
template <class S, class Compute>
KOKKOS_FORCEINLINE_FUNCTION S gemv_store(Compute value) {
  if constexpr (floating_storage<S> && !std::is_same_v<S, float> && !std::is_same_v<S, double>) {
    if constexpr (std::is_same_v<Compute, compute_type_t<S>>) {
      return narrow<S>(value);
    } else {
      return S(value);  // from double: rounded once by S's own constructor
    }
  } else {
    return static_cast<S>(value);
  }
}

// Row i of op(M) times x. M is a rank-2 View, x and y rank-1 Views. TransposeM: row i of op(M) is
// column i of M.
template <class Compute, bool TransposeM, class MView, class XView, class YView>
struct gemv_kernel {
  using storage_type = typename YView::non_const_value_type;
  MView m;
  XView x;
  YView y;
  Compute alpha;
  Compute beta;
  std::int64_t depth;  // terms per dot product; 0 when alpha == 0 (M and x are not read)

  KOKKOS_FORCEINLINE_FUNCTION Compute term(std::int64_t i, std::int64_t l) const {
    if constexpr (TransposeM) {
      return gemv_load<Compute>(m(l, i)) * gemv_load<Compute>(x(l));
    } else {
      return gemv_load<Compute>(m(i, l)) * gemv_load<Compute>(x(l));
    }
  }

  // The sum of lane's terms l = lane, lane + 16, ... in order.
  KOKKOS_FORCEINLINE_FUNCTION Compute lane_sum(std::int64_t i, std::int64_t lane) const {
    Compute s = 0;
    for (std::int64_t l = lane; l < depth; l += gemv_lanes) s += term(i, l);
    return s;
  }

  KOKKOS_FORCEINLINE_FUNCTION void store(std::int64_t i, Compute dot) const {
    // beta == 0: y is not read (it may hold NaN), as in BLAS.
    const Compute value = beta == Compute(0) ? alpha * dot : alpha * dot + beta * gemv_load<Compute>(y(i));
    y(i) = gemv_store<storage_type>(value);
  }

  // Host shape: row i whole. Blocks of 16 terms go to the 16 lanes, the same assignment as
  // lane_sum's; written as a block loop so that the lanes vectorize.
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    Compute lanes[gemv_lanes] = {};
    std::int64_t l = 0;
    for (; l + gemv_lanes <= depth; l += gemv_lanes) {
      for (int lane = 0; lane < gemv_lanes; ++lane) lanes[lane] += term(i, l + lane);
    }
    for (int lane = 0; l + lane < depth; ++lane) lanes[lane] += term(i, l + lane);
    Compute dot = lanes[0];
    for (int lane = 1; lane < gemv_lanes; ++lane) dot += lanes[lane];
    store(i, dot);
  }
};

// Device shape: team t takes rows 16 t .. 16 t + 15; thread j of the team computes lane j mod 16
// of row j / 16 into scratch, and after a barrier one thread per row adds the lanes in order.
template <class Kernel, class ExecutionSpace, class Compute>
struct gemv_device_kernel {
  using member_type = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using scratch_view = Kokkos::View<Compute*, typename ExecutionSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  Kernel kernel;
  std::int64_t rows;

  static constexpr std::size_t scratch_elements = std::size_t{gemv_rows_per_team} * gemv_lanes;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    const std::int64_t first = static_cast<std::int64_t>(member.league_rank()) * gemv_rows_per_team;
    const std::int64_t count = rows - first < gemv_rows_per_team ? rows - first : gemv_rows_per_team;
    const scratch_view lanes(member.team_scratch(0), scratch_elements);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, count * gemv_lanes), [&](std::int64_t j) {
      lanes(j) = kernel.lane_sum(first + j / gemv_lanes, j % gemv_lanes);
    });
    member.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, count), [&](std::int64_t r) {
      Compute dot = lanes(r * gemv_lanes);
      for (int lane = 1; lane < gemv_lanes; ++lane) dot += lanes(r * gemv_lanes + lane);
      kernel.store(first + r, dot);
    });
  }
};

// y = alpha op(M) x + beta y, op(M) rows(y) x extent(x). Asynchronous on `space`.
template <launch_shape Shape, class Compute, bool TransposeM, class ExecutionSpace, class MView, class XView,
          class YView>
void portable_gemv(const ExecutionSpace& space, Compute alpha, const MView& m, const XView& x, Compute beta,
                   const YView& y) {
  const auto rows = static_cast<std::int64_t>(y.extent(0));
  if (rows == 0) return;
  const std::int64_t depth = alpha == Compute(0) ? 0 : static_cast<std::int64_t>(x.extent(0));
  using kernel_type = gemv_kernel<Compute, TransposeM, MView, XView, YView>;
  const kernel_type kernel{m, x, y, alpha, beta, depth};
  if constexpr (Shape == launch_shape::device) {
    using device_kernel = gemv_device_kernel<kernel_type, ExecutionSpace, Compute>;
    using policy_type = Kokkos::TeamPolicy<ExecutionSpace>;
    const auto teams = static_cast<int>((rows + gemv_rows_per_team - 1) / gemv_rows_per_team);
    const auto bytes = device_kernel::scratch_view::shmem_size(device_kernel::scratch_elements);
    const auto scratch = Kokkos::PerTeam(static_cast<per_team_bytes_t>(bytes));
    const device_kernel functor{kernel, rows};
    // Fewer threads than 16 rows x 16 lanes (host spaces running this shape in tests) still cover
    // the rows: TeamThreadRange loops.
    const int team_size = team_size_at_most(policy_type(space, teams, 1).set_scratch_size(0, scratch), functor,
                                            gemv_rows_per_team * gemv_lanes);
    const policy_type policy = policy_type(space, teams, team_size).set_scratch_size(0, scratch);
    Kokkos::parallel_for("ordo::portable_gemv", policy, functor);
  } else {
    Kokkos::parallel_for("ordo::portable_gemv",
                         Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>(space, 0, rows), kernel);
  }
}

}  // namespace ordo::detail

#endif
