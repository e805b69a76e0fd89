#ifndef ORDO_NN_SOFTMAX_HPP
#define ORDO_NN_SOFTMAX_HPP

// The stable softmax family over the last axis of a rank-2 View, with PyTorch's semantics:
//   ordo::nn::softmax(x, y);                 // y = exp(x - max) / sum exp(x - max), per row
//   ordo::nn::log_softmax(x, y);             // y = (x - max) - log sum exp(x - max)
//   ordo::nn::logsumexp(x, lse);             // lse(r) = max + log sum exp(x - max), rank 1
//   ordo::nn::softmax_backward(dy, y, dx);   // dx = y (dy - sum dy y)       (y: softmax's output)
//   ordo::nn::log_softmax_backward(dy, y, dx);  // dx = dy - exp(y) sum dy  (y: log_softmax's output)
// each also as f(space, ...). Element types: float, double, ordo::half, ordo::bfloat16 (any
// ordo::floating_storage): arithmetic in compute_type_t<T> (float for the 16-bit types), row sums
// in accumulate_type_t<T> (double), one rounding on store. lse holds the compute type. Every
// result has the same bits on any number of threads. Rows whose max is infinite, NaN inputs and
// empty rows give what PyTorch 1.13 gives (docs/softmax.md). Any layout; x and y (dy and dx) may
// be the same View. See docs/softmax.md.

#include <ordo/core/scalar_traits.hpp>
#include <ordo/platform/launch_shape.hpp>
#include <ordo/platform/scratch_lease.hpp>
#include <ordo/platform/view_checks.hpp>
#include <ordo/platform/work_partition.hpp>
#include <ordo/nn/detail/softmax_kernels.hpp>
#include <ordo/nn/detail/softmax_wide_row_kernel.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>
#include <type_traits>

namespace ordo::nn {

namespace detail {

using ordo::detail::launch_shape;

template <class View>
inline constexpr bool softmax_view_v = Kokkos::is_view<View>::value;

// The static checks of an entry point, with the operation's name in each message. A compiler
// error pointing here names the requirement your call broke.
#define ORDO_IMPL_SOFTMAX_STATIC_CHECKS(name, Space, In, Out)                                                     \
  static_assert(static_cast<unsigned>(In::rank) == 2 && static_cast<unsigned>(Out::rank) == 2,                  \
                "ordo::nn::" name " requires rank-2 Views (rows x classes); it works over the last axis");       \
  static_assert(::ordo::floating_storage<typename In::non_const_value_type>,                                    \
                "ordo::nn::" name " requires float, double, ordo::half, ordo::bfloat16 or another type that "    \
                "ordo::scalar_traits describes");                                                              \
  static_assert(std::is_same_v<typename In::non_const_value_type, typename Out::value_type>,                    \
                "ordo::nn::" name " requires the output View to hold the input's element type, non-const");     \
  static_assert(::ordo::detail::accessible_from_v<Space, In, Out>,                                              \
                "ordo::nn::" name " requires Views whose memory the execution space can access")

template <softmax_op Op>
constexpr const char* forward_name() {
  return Op == softmax_op::softmax ? "ordo::nn::softmax" : Op == softmax_op::log_softmax ? "ordo::nn::log_softmax"
                                                                                           : "ordo::nn::logsumexp";
}

// The forward kernels in a given launch shape, on any space (tests run the device shape on the
// host). y is unused by logsumexp, lse by the others. Asynchronous. In the device shape, rows of
// at least wide_from elements take a team each (softmax_wide_row_kernel.hpp; tests lower it).
template <softmax_op Op, launch_shape Shape, class Space, class XView, class YView, class LseView>
void forward(const Space& space, const XView& x, const YView& y, const LseView& lse,
             [[maybe_unused]] std::int64_t wide_from = softmax_wide_row_min,
             [[maybe_unused]] int row_lanes = softmax_row_lanes) {
  using T = typename XView::non_const_value_type;
  using C = compute_type_t<T>;
  const auto rows = static_cast<std::int64_t>(x.extent(0)), cols = static_cast<std::int64_t>(x.extent(1));
  if (rows == 0) return;
  if constexpr (Shape == launch_shape::host) {
    using kernel = host_forward_kernel<Op, XView, YView, LseView, Space>;
    const Kokkos::Experimental::UniqueToken<Space> token(space);
    using lse_value = typename LseView::non_const_value_type;
    kernel k{row_access<XView>(x), row_access<YView>(y), lse, cols, nullptr, token, std::numeric_limits<C>::quiet_NaN(),
             std::numeric_limits<lse_value>::quiet_NaN()};
    using memory = typename Space::memory_space;
    if constexpr (Op == softmax_op::softmax) {
      if (!k.exps_in_y() && cols > 0) {
        ordo::detail::scratch_lease<C, memory, ordo::detail::scratch_slot::partials> lease(
            "ordo::nn::softmax exps", static_cast<std::int64_t>(token.size()) * cols);
        k.scratch = lease.part(0, static_cast<std::int64_t>(token.size()) * cols).data();
        Kokkos::parallel_for(forward_name<Op>(), ordo::detail::item_policy<Space>(space, 0, rows),
                             k);
        space.fence();  // the lease ends with this scope
        return;
      }
    }
    Kokkos::parallel_for(forward_name<Op>(), ordo::detail::item_policy<Space>(space, 0, rows),
                         k);
  } else if (cols >= wide_from) {
    using kernel = team_row_forward_kernel<Op, XView, YView, LseView, Space>;
    using lse_value = typename LseView::non_const_value_type;
    const kernel k{row_access<XView>(x),
                   row_access<YView>(y),
                   lse,
                   cols,
                   std::numeric_limits<C>::quiet_NaN(),
                   std::numeric_limits<lse_value>::quiet_NaN(),
                   row_lanes};
    const auto scratch = Kokkos::PerTeam(static_cast<int>(
        softmax_team_scratch_t<Space>::shmem_size(static_cast<std::size_t>(softmax_row_scratch_values(row_lanes)))));
    Kokkos::TeamPolicy<Space> policy(space, static_cast<int>(rows), Kokkos::AUTO);
    policy.set_scratch_size(0, scratch);
    if constexpr (!ordo::is_host_space_v<Space>) {
      // A thread per lane where the kernel's registers allow: the row's lanes all in flight.
      policy = Kokkos::TeamPolicy<Space>(space, static_cast<int>(rows), ordo::detail::team_size_at_most(policy, k, row_lanes));
      policy.set_scratch_size(0, scratch);
    }
    Kokkos::parallel_for(forward_name<Op>(), policy, k);
  } else {
    using kernel = team_forward_kernel<Op, XView, YView, LseView, Space>;
    using lse_value = typename LseView::non_const_value_type;
    const kernel k{row_access<XView>(x), row_access<YView>(y), lse, rows, cols, std::numeric_limits<C>::quiet_NaN(),
                   std::numeric_limits<lse_value>::quiet_NaN()};
    const auto league = static_cast<int>((rows + softmax_rows_per_team - 1) / softmax_rows_per_team);
    Kokkos::TeamPolicy<Space> policy(space, league, Kokkos::AUTO);
    policy.set_scratch_size(0, Kokkos::PerTeam(static_cast<int>(softmax_team_scratch_t<Space>::shmem_size(
                                   static_cast<std::size_t>(softmax_team_scratch_values)))));
    Kokkos::parallel_for(forward_name<Op>(), policy, k);
  }
}

template <softmax_backward_op Op, launch_shape Shape, class Space, class DyView, class YView, class DxView>
void backward(const Space& space, const DyView& dy, const YView& y, const DxView& dx) {
  const auto rows = static_cast<std::int64_t>(dy.extent(0)), cols = static_cast<std::int64_t>(dy.extent(1));
  if (rows == 0 || cols == 0) return;
  const char* name = Op == softmax_backward_op::softmax ? "ordo::nn::softmax_backward" : "ordo::nn::log_softmax_backward";
  if constexpr (Shape == launch_shape::host) {
    const host_backward_kernel<Op, DyView, YView, DxView> k{row_access<DyView>(dy), row_access<YView>(y),
                                                            row_access<DxView>(dx), cols};
    Kokkos::parallel_for(name, ordo::detail::item_policy<Space>(space, 0, rows), k);
  } else {
    const team_backward_kernel<Op, DyView, YView, DxView, Space> k{row_access<DyView>(dy), row_access<YView>(y),
                                                                    row_access<DxView>(dx), rows, cols};
    const auto league = static_cast<int>((rows + softmax_rows_per_team - 1) / softmax_rows_per_team);
    Kokkos::TeamPolicy<Space> policy(space, league, Kokkos::AUTO);
    policy.set_scratch_size(0, Kokkos::PerTeam(static_cast<int>(softmax_team_scratch_t<Space>::shmem_size(
                                   static_cast<std::size_t>(softmax_team_scratch_values)))));
    Kokkos::parallel_for(name, policy, k);
  }
}

template <softmax_op Op, class Space, class XView, class YView>
void forward_checked(const Space& space, const XView& x, const YView& y) {
  ordo::detail::check_same_shape(y, x, forward_name<Op>(), "y", "x");
  Kokkos::View<compute_type_t<typename XView::non_const_value_type>*, typename YView::memory_space> no_lse;
  forward<Op, ordo::detail::default_launch_shape_v<Space>>(space, x, y, no_lse);
  space.fence();
}

template <softmax_backward_op Op, class Space, class DyView, class YView, class DxView>
void backward_checked(const Space& space, const DyView& dy, const YView& y, const DxView& dx) {
  const char* name = Op == softmax_backward_op::softmax ? "ordo::nn::softmax_backward" : "ordo::nn::log_softmax_backward";
  ordo::detail::check_same_shape(y, dy, name, "y", "dy");
  ordo::detail::check_same_shape(dx, dy, name, "dx", "dy");
  backward<Op, ordo::detail::default_launch_shape_v<Space>>(space, dy, y, dx);
  space.fence();
}

}  // namespace detail

// y = softmax(x) over each row: exp(x - max) / sum exp(x - max). Returns when done.
template <class Space, class XView, class YView>
  requires(Kokkos::is_execution_space<Space>::value && detail::softmax_view_v<XView> && detail::softmax_view_v<YView>)
void softmax(const Space& space, const XView& x, const YView& y) {
  ORDO_IMPL_SOFTMAX_STATIC_CHECKS("softmax(x, y)", Space, XView, YView);
  detail::forward_checked<detail::softmax_op::softmax>(space, x, y);
}
template <class XView, class YView>
  requires(detail::softmax_view_v<XView> && detail::softmax_view_v<YView>)
void softmax(const XView& x, const YView& y) {
  softmax(typename YView::execution_space(), x, y);
}

// y = log_softmax(x) over each row: (x - max) - log sum exp(x - max). Returns when done.
template <class Space, class XView, class YView>
  requires(Kokkos::is_execution_space<Space>::value && detail::softmax_view_v<XView> && detail::softmax_view_v<YView>)
void log_softmax(const Space& space, const XView& x, const YView& y) {
  ORDO_IMPL_SOFTMAX_STATIC_CHECKS("log_softmax(x, y)", Space, XView, YView);
  detail::forward_checked<detail::softmax_op::log_softmax>(space, x, y);
}
template <class XView, class YView>
  requires(detail::softmax_view_v<XView> && detail::softmax_view_v<YView>)
void log_softmax(const XView& x, const YView& y) {
  log_softmax(typename YView::execution_space(), x, y);
}

// lse(r) = log sum_c exp(x(r, c)), computed as max + log sum exp(x - max); lse is a rank-1 View
// of compute_type_t<T> with one entry per row. An empty row gives -inf. Returns when done.
template <class Space, class XView, class LseView>
  requires(Kokkos::is_execution_space<Space>::value && detail::softmax_view_v<XView> && detail::softmax_view_v<LseView>)
void logsumexp(const Space& space, const XView& x, const LseView& lse) {
  static_assert(static_cast<unsigned>(XView::rank) == 2,
                "ordo::nn::logsumexp(x, lse) requires x of rank 2 (rows x classes); it reduces the last axis");
  static_assert(floating_storage<typename XView::non_const_value_type>,
                "ordo::nn::logsumexp(x, lse): the element type must be float, double, ordo::half, ordo::bfloat16 or "
                "another type ordo::scalar_traits describes");
  static_assert(static_cast<unsigned>(LseView::rank) == 1 &&
                    std::is_same_v<typename LseView::value_type, compute_type_t<typename XView::non_const_value_type>>,
                "ordo::nn::logsumexp(x, lse) requires lse to be a non-const rank-1 View of x's compute type "
                "(ordo::compute_type_t: float for float and the 16-bit types, double for double)");
  static_assert(ordo::detail::accessible_from_v<Space, XView, LseView>,
                "ordo::nn::logsumexp: the Views' memory must be accessible from the execution space");
  ordo::detail::check_extent(lse, static_cast<std::int64_t>(x.extent(0)), "ordo::nn::logsumexp", "lse", "x", "rows");
  detail::forward<detail::softmax_op::logsumexp, ordo::detail::default_launch_shape_v<Space>>(space, x, x, lse);
  space.fence();
}
template <class XView, class LseView>
  requires(detail::softmax_view_v<XView> && detail::softmax_view_v<LseView>)
void logsumexp(const XView& x, const LseView& lse) {
  logsumexp(typename LseView::execution_space(), x, lse);
}

// dx = y (dy - sum_c dy y) per row: the gradient of softmax given its output y (PyTorch's
// _softmax_backward_data). Returns when done.
template <class Space, class DyView, class YView, class DxView>
  requires(Kokkos::is_execution_space<Space>::value && detail::softmax_view_v<DyView> &&
           detail::softmax_view_v<YView> && detail::softmax_view_v<DxView>)
void softmax_backward(const Space& space, const DyView& dy, const YView& y, const DxView& dx) {
  ORDO_IMPL_SOFTMAX_STATIC_CHECKS("softmax_backward(dy, y, dx)", Space, DyView, DxView);
  ORDO_IMPL_SOFTMAX_STATIC_CHECKS("softmax_backward(dy, y, dx)", Space, YView, DxView);
  detail::backward_checked<detail::softmax_backward_op::softmax>(space, dy, y, dx);
}
template <class DyView, class YView, class DxView>
  requires(detail::softmax_view_v<DyView> && detail::softmax_view_v<YView> && detail::softmax_view_v<DxView>)
void softmax_backward(const DyView& dy, const YView& y, const DxView& dx) {
  softmax_backward(typename DxView::execution_space(), dy, y, dx);
}

// dx = dy - exp(y) sum_c dy per row: the gradient of log_softmax given its output y (PyTorch's
// _log_softmax_backward_data). Returns when done.
template <class Space, class DyView, class YView, class DxView>
  requires(Kokkos::is_execution_space<Space>::value && detail::softmax_view_v<DyView> &&
           detail::softmax_view_v<YView> && detail::softmax_view_v<DxView>)
void log_softmax_backward(const Space& space, const DyView& dy, const YView& y, const DxView& dx) {
  ORDO_IMPL_SOFTMAX_STATIC_CHECKS("log_softmax_backward(dy, y, dx)", Space, DyView, DxView);
  ORDO_IMPL_SOFTMAX_STATIC_CHECKS("log_softmax_backward(dy, y, dx)", Space, YView, DxView);
  detail::backward_checked<detail::softmax_backward_op::log_softmax>(space, dy, y, dx);
}
template <class DyView, class YView, class DxView>
  requires(detail::softmax_view_v<DyView> && detail::softmax_view_v<YView> && detail::softmax_view_v<DxView>)
void log_softmax_backward(const DyView& dy, const YView& y, const DxView& dx) {
  log_softmax_backward(typename DxView::execution_space(), dy, y, dx);
}

}  // namespace ordo::nn

#endif
