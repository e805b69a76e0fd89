#ifndef ORDO_NN_BATCH_NORM_HPP
#define ORDO_NN_BATCH_NORM_HPP

// Batch normalization on Kokkos with PyTorch's semantics (torch.nn.functional.batch_norm):
//   auto saved = ordo::nn::batch_norm_forward_training(x, gamma, beta, running_mean, running_var, y, opt);
//   ordo::nn::batch_norm_forward_inference(x, gamma, beta, running_mean, running_var, y, opt);
//   ordo::nn::batch_norm_backward(dy, x, gamma, saved, dx, dgamma, dbeta, opt);
// x is (N, C), (N, C, L), (N, C, H, W) or (N, C, D, H, W), or channels last, in any layout
// (LayoutRight, LayoutLeft, LayoutStride; non-contiguous Views are staged through a copy). Statistics are
// accumulated in double in two passes (mean, then the sum of squared deviations), so data with a
// large mean such as 1e4 + N(0, 1) in float keep their variance (E[x^2] - E[x]^2 loses it).
//
// Training runs in phases that a caller holding part of the batch (one MPI rank, one device) can
// call with a merge between them:
//   forward:  batch_norm_local_statistics -> merge (count, mean, M2) -> batch_norm_apply_statistics
//   backward: batch_norm_local_gradient_sums -> merge (sums) -> batch_norm_apply_gradient_sums
// The one-call functions run the same phases on the whole batch. A part may be empty (no values per
// channel: count 0, the identity of merge); the whole batch may not. See docs/batch_norm.md, and
// <ordo/mpi/batch_norm.hpp> for the phases across MPI ranks.

#include <ordo/platform/launch_shape.hpp>
#include <ordo/nn/batch_norm_types.hpp>
#include <ordo/nn/detail/batch_norm_checks.hpp>
#include <ordo/nn/detail/batch_norm_phases.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ordo::nn {

namespace detail {

// The entry points below in a given launch shape; the public functions pass their space's
// default_launch_shape_v, and the tests the other shape too.

template <class Space, class XView>
batch_norm_statistics<typename XView::memory_space> local_statistics(const Space& space, launch_shape shape, const XView& x,
                                                                     const batch_norm_options& options) {
  constexpr const char* op = "ordo::nn::batch_norm_local_statistics";
  using memory = typename XView::memory_space;
  static_assert(operand_types<operation::batch_norm_local_statistics, Space, XView, view_list<>, view_list<>,
                              view_list<>>::checked);
  const auto b = block_layout_of(batch_extent::part, op, options.layout, x);
  const work_partition p = partition_of(b.g);
  const std::int64_t cs = b.g.channels;
  if (b.g.per_channel() == 0) {
    // An empty part: count 0, which merge() takes as the identity.
    const auto channels = static_cast<std::size_t>(cs);
    return {0, Kokkos::View<double*, memory>("ordo::nn::batch mean", channels),
            Kokkos::View<double*, memory>("ordo::nn::batch m2", channels)};
  }
  batch_norm_statistics<memory> statistics{static_cast<double>(b.g.per_channel()),
                                           uninitialized_view<double, memory>("ordo::nn::batch mean", cs),
                                           uninitialized_view<double, memory>("ordo::nn::batch m2", cs)};
  const auto xs = read_operand(space, x, b);
  const scratch_lease<double, memory, scratch_slot::partials> partials("ordo::nn::partial moments",
                                                                       2 * p.row_items * cs);
  launch_local_moments(space, shape, p, xs.data(), partials.part(0, p.row_items * cs).data(),
                              partials.part(p.row_items * cs, p.row_items * cs).data(), statistics.mean.data(),
                              statistics.m2.data(), "ordo::nn::batch_norm_local_statistics items",
                              "ordo::nn::batch_norm_local_statistics merge");
  space.fence();
  return statistics;
}

template <class Space, class XView, class ParamView, class StatView, class YView, class MemorySpace>
batch_norm_saved<typename XView::memory_space> apply_statistics(
    const Space& space, launch_shape shape, const batch_norm_statistics<MemorySpace>& statistics, const XView& x, const ParamView& gamma,
    const ParamView& beta, const StatView& running_mean, const StatView& running_var, const YView& y,
    const batch_norm_options& options) {
  constexpr const char* op = "ordo::nn::batch_norm_apply_statistics";
  using memory = typename XView::memory_space;
  static_assert(operand_types<operation::batch_norm_apply_statistics, Space, XView, view_list<YView>,
                              view_list<ParamView, StatView>,
                              view_list<YView, ParamView, StatView, Kokkos::View<double*, MemorySpace>>>::checked);
  const auto b = prepare_forward(batch_extent::part, op, options, x, gamma, beta, running_mean, running_var, y);
  check_channels(statistics.mean, b.g.channels, op, "statistics.mean");
  check_channels(statistics.m2, b.g.channels, op, "statistics.m2");
  check_training_count(statistics.count, "statistics of " + count_text(statistics.count) + " values per channel", op);
  const std::int64_t cs = b.g.channels;
  batch_norm_saved<memory> saved{uninitialized_view<double, memory>("ordo::nn::saved mean", cs),
                                 uninitialized_view<double, memory>("ordo::nn::saved invstd", cs)};
  const auto xs = read_operand(space, x, b);
  const auto ys = write_operand(space, y, b);
  launch_apply_statistics(space, shape, partition_of(b.g), statistics.count, statistics.mean.data(),
                                 statistics.m2.data(), xs.data(), gamma, beta, running_mean, running_var, ys.data(),
                                 saved, options, "ordo::nn::batch_norm_apply_statistics coefficients",
                                 "ordo::nn::batch_norm_apply_statistics normalize");
  ys.write_back(space);
  return saved;
}

template <class Space, class XView, class ParamView, class StatView, class YView>
batch_norm_saved<typename XView::memory_space> forward_training(const Space& space, launch_shape shape, const XView& x,
                                                                const ParamView& gamma, const ParamView& beta,
                                                                const StatView& running_mean,
                                                                const StatView& running_var, const YView& y,
                                                                const batch_norm_options& options) {
  constexpr const char* op = "ordo::nn::batch_norm_forward_training";
  using memory = typename XView::memory_space;
  static_assert(operand_types<operation::batch_norm_forward_training, Space, XView, view_list<YView>,
                              view_list<ParamView, StatView>, view_list<YView, ParamView, StatView>>::checked);
  const auto b = prepare_forward(batch_extent::whole, op, options, x, gamma, beta, running_mean, running_var, y);
  check_training_count(static_cast<double>(b.g.per_channel()), "input of shape " + view_shape_text(x), op);
  const work_partition p = partition_of(b.g);
  const std::int64_t cs = b.g.channels;
  // Written in full by the coefficients kernel.
  batch_norm_saved<memory> saved{uninitialized_view<double, memory>("ordo::nn::saved mean", cs),
                                 uninitialized_view<double, memory>("ordo::nn::saved invstd", cs)};
  const auto xs = read_operand(space, x, b);
  const auto ys = write_operand(space, y, b);
  const scratch_lease<double, memory, scratch_slot::partials> partials("ordo::nn::partial moments",
                                                                       2 * p.row_items * cs);
  double* const partial_sum = partials.part(0, p.row_items * cs).data();
  double* const partial_m2 = partials.part(p.row_items * cs, p.row_items * cs).data();
  launch_forward_training(space, shape, p, xs.data(), partial_sum, partial_m2, gamma, beta, running_mean, running_var,
                          ys.data(), saved, options, "ordo::nn::batch_norm_forward_training statistics",
                          "ordo::nn::batch_norm_forward_training merge and coefficients",
                          "ordo::nn::batch_norm_forward_training normalize");
  ys.write_back(space);
  return saved;
}

template <class Space, class XView, class ParamView, class StatView, class YView>
void forward_inference(const Space& space, launch_shape shape, const XView& x, const ParamView& gamma, const ParamView& beta,
                       const StatView& running_mean, const StatView& running_var, const YView& y,
                       const batch_norm_options& options) {
  constexpr const char* op = "ordo::nn::batch_norm_forward_inference";
  using memory = typename XView::memory_space;
  using T = typename XView::non_const_value_type;
  static_assert(operand_types<operation::batch_norm_forward_inference, Space, XView, view_list<YView>,
                              view_list<ParamView, StatView>, view_list<YView, ParamView, StatView>>::checked);
  const auto b = prepare_forward(batch_extent::whole, op, options, x, gamma, beta, running_mean, running_var, y);
  const work_partition p = partition_of(b.g);
  const std::int64_t cs = b.g.channels;
  const auto xs = read_operand(space, x, b);
  const auto ys = write_operand(space, y, b);
  using C = compute_type_t<T>;
  const scratch_lease<C, memory, scratch_slot::coefficients> coefficient_lease("ordo::nn::coefficients", 4 * cs);
  const auto coefficients = coefficient_lease.part(0, 4 * cs);
  const double eps = options.eps;
  Kokkos::parallel_for(
      "ordo::nn::batch_norm_forward_inference coefficients", item_policy<Space>(space, 0, cs), KOKKOS_LAMBDA(std::int64_t c) {
        const double is = 1.0 / ordo::detail::math::sqrt(static_cast<double>(running_var(c)) + eps);
        const auto centre = split<C>(static_cast<double>(running_mean(c)));
        coefficients(c) = centre.high;
        coefficients(cs + c) = centre.low;
        coefficients(2 * cs + c) = static_cast<C>(is * static_cast<double>(gamma(c)));
        coefficients(3 * cs + c) = static_cast<C>(beta(c));
      });
  launch_normalize(space, shape, p, xs.data(), ys.data(),
                          {coefficients.data(), coefficients.data() + cs, coefficients.data() + 2 * cs,
                           coefficients.data() + 3 * cs},
                          "ordo::nn::batch_norm_forward_inference");
  space.fence();
  ys.write_back(space);
}

template <class Space, class DyView, class XView, class MemorySpace>
batch_norm_gradient_sums<typename XView::memory_space> local_gradient_sums(const Space& space, launch_shape shape, const DyView& dy,
                                                                           const XView& x,
                                                                           const batch_norm_saved<MemorySpace>& saved,
                                                                           const batch_norm_options& options) {
  constexpr const char* op = "ordo::nn::batch_norm_local_gradient_sums";
  using memory = typename XView::memory_space;
  static_assert(operand_types<operation::batch_norm_local_gradient_sums, Space, XView, view_list<DyView>, view_list<>,
                              view_list<DyView, Kokkos::View<double*, MemorySpace>>>::checked);
  const auto b = block_layout_of(batch_extent::part, op, options.layout, x, input(dy, "dy"));
  check_channels(saved.mean, b.g.channels, op, "saved.mean");
  const work_partition p = partition_of(b.g);
  const std::int64_t cs = b.g.channels;
  if (b.g.per_channel() == 0) {
    const auto channels = static_cast<std::size_t>(cs);
    return {0, Kokkos::View<double*, memory>("ordo::nn::sum dy", channels),
            Kokkos::View<double*, memory>("ordo::nn::dotp", channels)};
  }
  batch_norm_gradient_sums<memory> sums{static_cast<double>(b.g.per_channel()),
                                        uninitialized_view<double, memory>("ordo::nn::sum dy", cs),
                                        uninitialized_view<double, memory>("ordo::nn::dotp", cs)};
  const auto xs = read_operand(space, x, b);
  const auto dys = read_operand(space, dy, b);
  const scratch_lease<double, memory, scratch_slot::partials> partials("ordo::nn::partial gradient sums",
                                                                       2 * p.row_items * cs);
  launch_local_gradient_sums(space, shape, p, xs.data(), dys.data(), saved.mean.data(),
                                    partials.part(0, p.row_items * cs).data(),
                                    partials.part(p.row_items * cs, p.row_items * cs).data(), sums.sum_dy.data(),
                                    sums.dotp.data(), "ordo::nn::batch_norm_local_gradient_sums items",
                                    "ordo::nn::batch_norm_local_gradient_sums merge");
  space.fence();
  return sums;
}

template <class Space, class DyView, class XView, class ParamView, class MemorySpace, class DxView, class GradView, class SumSpace>
void apply_gradient_sums(const Space& space, launch_shape shape, const batch_norm_gradient_sums<SumSpace>& sums, const DyView& dy,
                         const XView& x, const ParamView& gamma, const batch_norm_saved<MemorySpace>& saved,
                         const DxView& dx, const GradView& dgamma, const GradView& dbeta,
                         const batch_norm_options& options) {
  constexpr const char* op = "ordo::nn::batch_norm_apply_gradient_sums";
  static_assert(operand_types<operation::batch_norm_apply_gradient_sums, Space, XView, view_list<DyView, DxView>,
                              view_list<ParamView, GradView>,
                              view_list<DyView, DxView, ParamView, GradView, Kokkos::View<double*, MemorySpace>,
                                        Kokkos::View<double*, SumSpace>>>::checked);
  const auto b = prepare_backward(batch_extent::part, op, options, dy, x, gamma, saved, dx, dgamma, dbeta);
  check_channels(sums.sum_dy, b.g.channels, op, "sums.sum_dy");
  check_channels(sums.dotp, b.g.channels, op, "sums.dotp");
  if (!(sums.count > 0)) {
    throw std::invalid_argument(std::string(op) + ": the sums cover no values (count " + count_text(sums.count) + ")");
  }
  const auto xs = read_operand(space, x, b);
  const auto dys = read_operand(space, dy, b);
  const auto dxs = write_operand(space, dx, b);
  launch_apply_gradient_sums(space, shape, partition_of(b.g), sums.count, sums.sum_dy.data(), sums.dotp.data(),
                                    xs.data(), dys.data(), gamma, saved, dxs.data(), dgamma, dbeta,
                                    "ordo::nn::batch_norm_apply_gradient_sums coefficients",
                                    "ordo::nn::batch_norm_apply_gradient_sums input gradient");
  dxs.write_back(space);
}

template <class Space, class DyView, class XView, class ParamView, class MemorySpace, class DxView, class GradView>
void backward(const Space& space, launch_shape shape, const DyView& dy, const XView& x, const ParamView& gamma,
              const batch_norm_saved<MemorySpace>& saved, const DxView& dx, const GradView& dgamma,
              const GradView& dbeta, const batch_norm_options& options) {
  constexpr const char* op = "ordo::nn::batch_norm_backward";
  using memory = typename XView::memory_space;
  static_assert(operand_types<operation::batch_norm_backward, Space, XView, view_list<DyView, DxView>,
                              view_list<ParamView, GradView>,
                              view_list<DyView, DxView, ParamView, GradView, Kokkos::View<double*, MemorySpace>>>::checked);
  const auto b = prepare_backward(batch_extent::whole, op, options, dy, x, gamma, saved, dx, dgamma, dbeta);
  const work_partition p = partition_of(b.g);
  const std::int64_t cs = b.g.channels;
  const auto xs = read_operand(space, x, b);
  const auto dys = read_operand(space, dy, b);
  const auto dxs = write_operand(space, dx, b);
  const scratch_lease<double, memory, scratch_slot::partials> partials("ordo::nn::partial gradient sums",
                                                                       2 * p.row_items * cs);
  double* const partial_dy = partials.part(0, p.row_items * cs).data();
  double* const partial_dotp = partials.part(p.row_items * cs, p.row_items * cs).data();
  launch_backward(space, shape, p, xs.data(), dys.data(), partial_dy, partial_dotp, gamma, saved, dxs.data(), dgamma,
                  dbeta, "ordo::nn::batch_norm_backward sums", "ordo::nn::batch_norm_backward merge and coefficients",
                  "ordo::nn::batch_norm_backward input gradient");
  dxs.write_back(space);
}

}  // namespace detail

// Seams for callers that must know, before anything runs, whether a call will accept its
// arguments (ordo::mpi checks every rank before the ranks exchange statistics, so that one rank's
// bad arguments never leave the others waiting). Each throws the std::invalid_argument the call
// would throw, with `operation` as the message's first words, and launches nothing.

// x's number of channels under options.layout.
template <class XView>
std::size_t batch_norm_channels(const XView& x, const batch_norm_options& options = {}) {
  return x.extent(detail::channel_axis_of(options.layout, XView::rank));
}

// The arguments of a training step on this caller's part of the batch (x may be empty), as
// batch_norm_apply_statistics checks them.
template <class XView, class ParamView, class StatView, class YView>
void batch_norm_check_training_arguments(const char* operation, const XView& x, const ParamView& gamma,
                                         const ParamView& beta, const StatView& running_mean,
                                         const StatView& running_var, const YView& y,
                                         const batch_norm_options& options = {}) {
  detail::prepare_forward(detail::batch_extent::part, operation, options, x, gamma, beta, running_mean, running_var, y);
}

// The arguments of the backward of a training step on this caller's part of the batch, as
// batch_norm_apply_gradient_sums checks them.
template <class DyView, class XView, class ParamView, class MemorySpace, class DxView, class GradView>
void batch_norm_check_backward_arguments(const char* operation, const DyView& dy, const XView& x,
                                         const ParamView& gamma, const batch_norm_saved<MemorySpace>& saved,
                                         const DxView& dx, const GradView& dgamma, const GradView& dbeta,
                                         const batch_norm_options& options = {}) {
  detail::prepare_backward(detail::batch_extent::part, operation, options, dy, x, gamma, saved, dx, dgamma, dbeta);
}

// Every entry point below has two forms: with a leading execution-space instance, on which it
// launches every kernel and copy (a CUDA stream, an OpenMP partition), and without, on the
// default instance of x's execution space. Each returns once its results are complete: it
// fences that instance alone, before returning the scratch memory it leased to the next call.

// Phase 1 of the training forward pass: the statistics of x, which may be part of the batch.
template <class Space, class XView>
  requires Kokkos::is_execution_space<Space>::value
batch_norm_statistics<typename XView::memory_space> batch_norm_local_statistics(
    const Space& space, const XView& x, const batch_norm_options& options = {}) {
  return detail::local_statistics(space, detail::default_launch_shape_v<Space>, x, options);
}
template <class XView>
batch_norm_statistics<typename XView::memory_space> batch_norm_local_statistics(const XView& x,
                                                                               const batch_norm_options& options = {}) {
  return batch_norm_local_statistics(typename XView::execution_space{}, x, options);
}

// Phase 2: the statistics of two parts of a batch combined channel by channel (Chan et al.). The
// bits depend on the order of the arguments: merge parts in a fixed order (say, by MPI rank).
template <class Space, class MemorySpace>
  requires Kokkos::is_execution_space<Space>::value
batch_norm_statistics<MemorySpace> merge(const Space& space, const batch_norm_statistics<MemorySpace>& a,
                                         const batch_norm_statistics<MemorySpace>& b) {
  static_assert(detail::accessible_from_v<Space, Kokkos::View<double*, MemorySpace>>,
                "ordo::nn::merge(batch_norm_statistics): the statistics must be accessible from the execution space "
                "the call runs on");
  detail::check_same_shape(a.mean, b.mean, "ordo::nn::merge(batch_norm_statistics)", "a.mean", "b.mean");
  const std::int64_t cs = static_cast<std::int64_t>(a.mean.extent(0));
  batch_norm_statistics<MemorySpace> total{a.count + b.count,
                                           detail::uninitialized_view<double, MemorySpace>("ordo::nn::batch mean", cs),
                                           detail::uninitialized_view<double, MemorySpace>("ordo::nn::batch m2", cs)};
  const double na = a.count, nb = b.count;
  const auto am = a.mean, am2 = a.m2, bm = b.mean, bm2 = b.m2, mean = total.mean, m2 = total.m2;
  Kokkos::parallel_for(
      "ordo::nn::merge(batch_norm_statistics)", detail::item_policy<Space>(space, 0, cs),
      KOKKOS_LAMBDA(std::int64_t c) {
        channel_moments m{na, am(c), am2(c)};
        m.merge(channel_moments{nb, bm(c), bm2(c)});
        mean(c) = m.mean;
        m2(c) = m.m2;
      });
  space.fence();
  return total;
}
template <class MemorySpace>
batch_norm_statistics<MemorySpace> merge(const batch_norm_statistics<MemorySpace>& a,
                                         const batch_norm_statistics<MemorySpace>& b) {
  return merge(typename MemorySpace::execution_space{}, a, b);
}

// Phase 3: normalizes x (this caller's part of the batch) with the statistics of the whole batch,
// updates the running statistics and returns the saved mean and invstd for backward.
template <class Space, class XView, class ParamView, class StatView, class YView, class MemorySpace>
  requires Kokkos::is_execution_space<Space>::value
batch_norm_saved<typename XView::memory_space> batch_norm_apply_statistics(
    const Space& space, const batch_norm_statistics<MemorySpace>& statistics, const XView& x, const ParamView& gamma,
    const ParamView& beta, const StatView& running_mean, const StatView& running_var, const YView& y,
    const batch_norm_options& options = {}) {
  return detail::apply_statistics(space, detail::default_launch_shape_v<Space>, statistics, x, gamma, beta,
                                  running_mean, running_var, y, options);
}
template <class XView, class ParamView, class StatView, class YView, class MemorySpace>
batch_norm_saved<typename XView::memory_space> batch_norm_apply_statistics(
    const batch_norm_statistics<MemorySpace>& statistics, const XView& x, const ParamView& gamma,
    const ParamView& beta, const StatView& running_mean, const StatView& running_var, const YView& y,
    const batch_norm_options& options = {}) {
  return batch_norm_apply_statistics(typename XView::execution_space{}, statistics, x, gamma, beta, running_mean,
                                     running_var, y, options);
}

// Training forward pass: normalizes each channel with its batch mean and biased variance, updates
// the running statistics with the unbiased variance, and returns the saved mean and invstd.
// The three phases on the whole batch, with the batch statistics in scratch memory.
template <class Space, class XView, class ParamView, class StatView, class YView>
  requires Kokkos::is_execution_space<Space>::value
batch_norm_saved<typename XView::memory_space> batch_norm_forward_training(
    const Space& space, const XView& x, const ParamView& gamma, const ParamView& beta, const StatView& running_mean,
    const StatView& running_var, const YView& y, const batch_norm_options& options = {}) {
  return detail::forward_training(space, detail::default_launch_shape_v<Space>, x, gamma, beta, running_mean,
                                  running_var, y, options);
}
template <class XView, class ParamView, class StatView, class YView>
  requires Kokkos::is_view<XView>::value
batch_norm_saved<typename XView::memory_space> batch_norm_forward_training(
    const XView& x, const ParamView& gamma, const ParamView& beta, const StatView& running_mean,
    const StatView& running_var, const YView& y, const batch_norm_options& options = {}) {
  return batch_norm_forward_training(typename XView::execution_space{}, x, gamma, beta, running_mean, running_var, y,
                                     options);
}

// Inference: normalizes with the running statistics, y = (x - running_mean) / sqrt(running_var + eps) * gamma + beta.
template <class Space, class XView, class ParamView, class StatView, class YView>
  requires Kokkos::is_execution_space<Space>::value
void batch_norm_forward_inference(const Space& space, const XView& x, const ParamView& gamma, const ParamView& beta,
                                  const StatView& running_mean, const StatView& running_var, const YView& y,
                                  const batch_norm_options& options = {}) {
  detail::forward_inference(space, detail::default_launch_shape_v<Space>, x, gamma, beta, running_mean, running_var,
                            y, options);
}
template <class XView, class ParamView, class StatView, class YView>
  requires Kokkos::is_view<XView>::value
void batch_norm_forward_inference(const XView& x, const ParamView& gamma, const ParamView& beta,
                                  const StatView& running_mean, const StatView& running_var, const YView& y,
                                  const batch_norm_options& options = {}) {
  batch_norm_forward_inference(typename XView::execution_space{}, x, gamma, beta, running_mean, running_var, y,
                               options);
}

// Phase 1 of backward: sum dy and sum (x - mean) dy per channel over x, which may be part of the
// batch; mean is the batch mean saved by the forward pass.
template <class Space, class DyView, class XView, class MemorySpace>
  requires Kokkos::is_execution_space<Space>::value
batch_norm_gradient_sums<typename XView::memory_space> batch_norm_local_gradient_sums(
    const Space& space, const DyView& dy, const XView& x, const batch_norm_saved<MemorySpace>& saved,
    const batch_norm_options& options = {}) {
  return detail::local_gradient_sums(space, detail::default_launch_shape_v<Space>, dy, x, saved, options);
}
template <class DyView, class XView, class MemorySpace>
  requires Kokkos::is_view<DyView>::value
batch_norm_gradient_sums<typename XView::memory_space> batch_norm_local_gradient_sums(
    const DyView& dy, const XView& x, const batch_norm_saved<MemorySpace>& saved, const batch_norm_options& options = {}) {
  return batch_norm_local_gradient_sums(typename XView::execution_space{}, dy, x, saved, options);
}

// Phase 2 of backward: the sums of two parts of a batch added channel by channel (a + b).
template <class Space, class MemorySpace>
  requires Kokkos::is_execution_space<Space>::value
batch_norm_gradient_sums<MemorySpace> merge(const Space& space, const batch_norm_gradient_sums<MemorySpace>& a,
                                            const batch_norm_gradient_sums<MemorySpace>& b) {
  static_assert(detail::accessible_from_v<Space, Kokkos::View<double*, MemorySpace>>,
                "ordo::nn::merge(batch_norm_gradient_sums): the sums must be accessible from the execution space "
                "the call runs on");
  detail::check_same_shape(a.sum_dy, b.sum_dy, "ordo::nn::merge(batch_norm_gradient_sums)", "a.sum_dy", "b.sum_dy");
  const std::int64_t cs = static_cast<std::int64_t>(a.sum_dy.extent(0));
  batch_norm_gradient_sums<MemorySpace> total{a.count + b.count,
                                              detail::uninitialized_view<double, MemorySpace>("ordo::nn::sum dy", cs),
                                              detail::uninitialized_view<double, MemorySpace>("ordo::nn::dotp", cs)};
  const auto ad = a.sum_dy, ap = a.dotp, bd = b.sum_dy, bp = b.dotp, d = total.sum_dy, q = total.dotp;
  Kokkos::parallel_for(
      "ordo::nn::merge(batch_norm_gradient_sums)", detail::item_policy<Space>(space, 0, cs),
      KOKKOS_LAMBDA(std::int64_t c) {
        d(c) = ad(c) + bd(c);
        q(c) = ap(c) + bp(c);
      });
  space.fence();
  return total;
}
template <class MemorySpace>
batch_norm_gradient_sums<MemorySpace> merge(const batch_norm_gradient_sums<MemorySpace>& a,
                                            const batch_norm_gradient_sums<MemorySpace>& b) {
  return merge(typename MemorySpace::execution_space{}, a, b);
}

// Phase 3 of backward: dgamma, dbeta and this caller's part of dx from the sums of the whole batch.
template <class Space, class DyView, class XView, class ParamView, class MemorySpace, class DxView, class GradView,
          class SumSpace>
  requires Kokkos::is_execution_space<Space>::value
void batch_norm_apply_gradient_sums(const Space& space, const batch_norm_gradient_sums<SumSpace>& sums,
                                    const DyView& dy, const XView& x, const ParamView& gamma,
                                    const batch_norm_saved<MemorySpace>& saved, const DxView& dx,
                                    const GradView& dgamma, const GradView& dbeta,
                                    const batch_norm_options& options = {}) {
  detail::apply_gradient_sums(space, detail::default_launch_shape_v<Space>, sums, dy, x, gamma, saved, dx, dgamma,
                              dbeta, options);
}
template <class DyView, class XView, class ParamView, class MemorySpace, class DxView, class GradView, class SumSpace>
void batch_norm_apply_gradient_sums(const batch_norm_gradient_sums<SumSpace>& sums, const DyView& dy, const XView& x,
                                    const ParamView& gamma, const batch_norm_saved<MemorySpace>& saved,
                                    const DxView& dx, const GradView& dgamma, const GradView& dbeta,
                                    const batch_norm_options& options = {}) {
  batch_norm_apply_gradient_sums(typename XView::execution_space{}, sums, dy, x, gamma, saved, dx, dgamma, dbeta,
                                 options);
}

// Backward of the training pass: with sum_dy = sum dy and dotp = sum (x - mean) dy per channel,
//   dx = (dy - sum_dy / M - (x - mean) invstd^2 dotp / M) invstd gamma,  dgamma = dotp invstd,  dbeta = sum_dy.
// The three phases on the whole batch, with the sums in scratch memory.
template <class Space, class DyView, class XView, class ParamView, class MemorySpace, class DxView, class GradView>
  requires Kokkos::is_execution_space<Space>::value
void batch_norm_backward(const Space& space, const DyView& dy, const XView& x, const ParamView& gamma,
                         const batch_norm_saved<MemorySpace>& saved, const DxView& dx, const GradView& dgamma,
                         const GradView& dbeta, const batch_norm_options& options = {}) {
  detail::backward(space, detail::default_launch_shape_v<Space>, dy, x, gamma, saved, dx, dgamma, dbeta, options);
}
template <class DyView, class XView, class ParamView, class MemorySpace, class DxView, class GradView>
  requires Kokkos::is_view<DyView>::value
void batch_norm_backward(const DyView& dy, const XView& x, const ParamView& gamma,
                         const batch_norm_saved<MemorySpace>& saved, const DxView& dx, const GradView& dgamma,
                         const GradView& dbeta, const batch_norm_options& options = {}) {
  batch_norm_backward(typename XView::execution_space{}, dy, x, gamma, saved, dx, dgamma, dbeta, options);
}

}  // namespace ordo::nn

#endif
