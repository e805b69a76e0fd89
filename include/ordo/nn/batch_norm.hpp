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

#include <ordo/core/scalar_traits.hpp>
#include <ordo/platform/host_dispatched.hpp>
#include <ordo/platform/kokkos_math.hpp>
#include <ordo/platform/launch_shape.hpp>
#include <ordo/platform/scratch_lease.hpp>
#include <ordo/platform/view_checks.hpp>
#include <ordo/platform/work_partition.hpp>
#include <ordo/nn/detail/batch_norm_checks.hpp>
#include <ordo/nn/detail/batch_norm_kernels.hpp>
#include <ordo/nn/detail/batch_norm_team_kernels.hpp>
#include <ordo/nn/memory_format.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ordo::nn {

struct batch_norm_options {
  double eps = 1e-5;       // added to the variance: keeps 1/sqrt(var + eps) finite for a constant channel
  double momentum = 0.1;   // running = (1 - momentum) * running + momentum * batch
  memory_format layout = channels_first;
};

// What the training forward pass keeps for backward: per-channel batch mean and 1/sqrt(var + eps),
// in double whatever the input type.
template <class MemorySpace>
struct batch_norm_saved {
  Kokkos::View<double*, MemorySpace> mean;
  Kokkos::View<double*, MemorySpace> invstd;
};

// Per-channel moments that merge without loss of stability (Chan, Golub and LeVeque 1979):
// n = na + nb, delta = mean_b - mean_a, mean = mean_a + delta nb / n, m2 = m2a + m2b + delta^2 na nb / n.
// Threads, devices and MPI ranks combine their channel statistics this way.
struct channel_moments {
  double count = 0;
  double mean = 0;
  double m2 = 0;  // sum of squared deviations from the mean
  KOKKOS_INLINE_FUNCTION void merge(const channel_moments& other) {
    const double n = count + other.count;
    if (n == 0) return;
    const double delta = other.mean - mean;
    mean += delta * (other.count / n);
    m2 += other.m2 + delta * delta * (count * other.count / n);
    count = n;
  }
};

// The forward's statistics of (part of) a batch: count values per channel, and per channel their
// mean and M2, the sum of squared deviations from the mean.
template <class MemorySpace>
struct batch_norm_statistics {
  double count = 0;
  Kokkos::View<double*, MemorySpace> mean;
  Kokkos::View<double*, MemorySpace> m2;
};

// The backward's sums over (part of) a batch: per channel sum dy and sum (x - mean) dy, with the
// batch mean of the forward pass; count values per channel.
template <class MemorySpace>
struct batch_norm_gradient_sums {
  double count = 0;
  Kokkos::View<double*, MemorySpace> sum_dy;
  Kokkos::View<double*, MemorySpace> dotp;
};

namespace detail {

using ordo::detail::accessible_from_v;
using ordo::detail::default_launch_shape_v;
using ordo::detail::dispatched;
using ordo::detail::item_policy;
using ordo::detail::launch_shape;
using ordo::detail::partition_of;
using ordo::detail::scratch_lease;
using ordo::detail::scratch_slot;
using ordo::detail::uninitialized_view;

// x, y, dy and dx: float, double, or a storage type whose compute type is float or double
// (ordo::half, ordo::bfloat16).
template <class T>
inline constexpr bool batch_norm_scalar_v = floating_storage<T>;

// 16-bit x takes gamma, beta, the running statistics and dgamma, dbeta in its compute type, float,
// as PyTorch's autocast keeps them; float and double x take them as before.
template <class T, class... Views>
inline constexpr bool batch_norm_parameters_v = true;  // not a storage type: batch_norm_scalar_v says so
template <floating_storage T, class... Views>
inline constexpr bool batch_norm_parameters_v<T, Views...> =
    std::is_same_v<T, compute_type_t<T>> ||
    (std::is_same_v<typename Views::non_const_value_type, compute_type_t<T>> && ...);

// The entry points, as types: a failing check of operand_types names its operation in the
// compiler's instantiation trace (operand_types<operation::batch_norm_backward, ...>).
namespace operation {
struct batch_norm_local_statistics {};
struct batch_norm_apply_statistics {};
struct batch_norm_forward_training {};
struct batch_norm_forward_inference {};
struct batch_norm_local_gradient_sums {};
struct batch_norm_apply_gradient_sums {};
struct batch_norm_backward {};
}  // namespace operation

template <class... Views>
struct view_list {};

// The checks that types decide, made once for every entry point, with one wording: x's value type;
// y, dy and dx of x's value type (SameAsX); 16-bit x with float parameters (Parameters); every View
// the call touches reachable from the execution space (Touched).
template <class Operation, class Space, class XView, class SameAsX, class Parameters, class Touched>
struct operand_types;
template <class Operation, class Space, class XView, class... SameAsX, class... Parameters, class... Touched>
struct operand_types<Operation, Space, XView, view_list<SameAsX...>, view_list<Parameters...>, view_list<Touched...>> {
  using value_type = typename XView::non_const_value_type;
  static_assert(batch_norm_scalar_v<value_type>,
                "ordo::nn::batch_norm takes float or double x (or ordo::half, ordo::bfloat16 with float gamma, beta "
                "and statistics); the operation is the first template argument above");
  static_assert((std::is_same_v<typename SameAsX::non_const_value_type, value_type> && ...),
                "ordo::nn::batch_norm: y, dy and dx must have x's value type; the operation is the first template "
                "argument above");
  static_assert(batch_norm_parameters_v<value_type, Parameters...>,
                "ordo::nn::batch_norm: x of ordo::half or ordo::bfloat16 requires gamma, beta, the running "
                "statistics, dgamma and dbeta of float, its compute type (as PyTorch's autocast keeps them); the "
                "operation is the first template argument above");
  static_assert(accessible_from_v<Space, XView, Touched...>,
                "ordo::nn::batch_norm: x and every View the call reads or writes must be accessible from the "
                "execution space it runs on; the operation is the first template argument above");
  static constexpr bool checked = true;
};

// The device shape's item kernels: a team per items_per_team items, its size left to Kokkos (the
// results do not depend on it), with team scratch for the chains' results.
template <class Space, class Kernel>
void launch_teams(const Space& space, const char* label, const team_cut& t, int scratch_arrays, const Kernel& kernel) {
  if (t.teams == 0) return;
  Kokkos::TeamPolicy<Space> policy(space, static_cast<int>(t.teams), Kokkos::AUTO);
  const std::int64_t values = t.scratch_values(scratch_arrays);
  if (values > 0) {
    policy.set_scratch_size(0, Kokkos::PerTeam(static_cast<int>(values * static_cast<std::int64_t>(sizeof(double)))));
  }
  Kokkos::parallel_for(label, policy, kernel);
}

// The device shape's element passes: a thread per element.
inline std::int64_t elements_of(const work_partition& p) { return p.g.outer * p.g.channels * p.g.inner; }

// Item statistics, then their merge in item order: mean and m2 (C each) may be the partials' row 0.
template <class Space, class T>
void launch_local_moments(const Space& space, launch_shape shape, const work_partition& p, const T* x, double* partial_sum,
                          double* partial_m2, double* mean, double* m2, const char* statistics_label,
                          const char* merge_label) {
  const double count = static_cast<double>(p.g.per_channel());
  if (shape == launch_shape::host) {
    Kokkos::parallel_for(statistics_label, item_policy<Space>(space, 0, p.items()),
                         dispatched(item_moments_kernel<T>{p, x, partial_sum, partial_m2}));
    Kokkos::parallel_for(merge_label, item_policy<Space>(space, 0, merge_chunks(p.g.channels)),
                         merge_moments_kernel{p, partial_sum, partial_m2, count, mean, m2});
  } else {
    const team_cut t = team_cut_of(p);
    launch_teams(space, statistics_label, t, 1, team_moments_kernel<T, Space>{p, t, x, partial_sum, partial_m2});
    Kokkos::parallel_for(merge_label, item_policy<Space>(space, 0, p.g.channels),
                         channel_merge_moments_kernel{p, partial_sum, partial_m2, count, mean, m2});
  }
}

template <class Space, class T>
void launch_normalize(const Space& space, launch_shape shape, const work_partition& p, const T* x, T* y,
                      const affine_coefficients<compute_type_t<T>>& k, const char* label) {
  if (shape == launch_shape::host) {
    Kokkos::parallel_for(label, item_policy<Space>(space, 0, p.items()), dispatched(normalize_kernel<T>{p, x, y, k}));
  } else {
    Kokkos::parallel_for(label, item_policy<Space>(space, 0, elements_of(p)), element_normalize_kernel<T>{p.g, x, y, k});
  }
}

// From the batch statistics: saved mean and invstd, the running statistics, and y.
template <class Space, class T, class ParamView, class StatView, class Memory>
void launch_apply_statistics(const Space& space, launch_shape shape, const work_partition& p, double count, const double* batch_mean,
                             const double* batch_m2, const T* x, const ParamView& gamma, const ParamView& beta,
                             const StatView& running_mean, const StatView& running_var, T* y,
                             const batch_norm_saved<Memory>& saved, const batch_norm_options& options,
                             const char* coefficients_label, const char* normalize_label) {
  using C = compute_type_t<T>;
  const std::int64_t cs = p.g.channels;
  const scratch_lease<C, Memory, scratch_slot::coefficients> coefficient_lease("ordo::nn::coefficients", 4 * cs);
  const auto coefficients = coefficient_lease.part(0, 4 * cs);
  const auto mean = saved.mean;
  const auto invstd = saved.invstd;
  const double eps = options.eps, momentum = options.momentum;
  using stat_type = typename StatView::non_const_value_type;
  Kokkos::parallel_for(
      coefficients_label, item_policy<Space>(space, 0, cs), KOKKOS_LAMBDA(std::int64_t c) {
        const double m = batch_mean[c], m2 = batch_m2[c];
        const double biased = m2 / count, unbiased = m2 / (count - 1);
        const double is = 1.0 / ordo::detail::math::sqrt(biased + eps);
        mean(c) = m;
        invstd(c) = is;
        const auto centre = split<C>(m);
        coefficients(c) = centre.high;
        coefficients(cs + c) = centre.low;
        coefficients(2 * cs + c) = static_cast<C>(is * static_cast<double>(gamma(c)));
        coefficients(3 * cs + c) = static_cast<C>(beta(c));
        running_mean(c) = static_cast<stat_type>((1 - momentum) * static_cast<double>(running_mean(c)) + momentum * m);
        running_var(c) = static_cast<stat_type>((1 - momentum) * static_cast<double>(running_var(c)) + momentum * unbiased);
      });
  launch_normalize(space, shape, p, x, y,
                          {coefficients.data(), coefficients.data() + cs, coefficients.data() + 2 * cs,
                           coefficients.data() + 3 * cs},
                          normalize_label);
  space.fence();
}

// Item gradient sums, then their merge in item order: sum_dy and dotp may be the partials' row 0.
template <class Space, class T>
void launch_local_gradient_sums(const Space& space, launch_shape shape, const work_partition& p, const T* x, const T* dy,
                                const double* mean, double* partial_dy, double* partial_dotp, double* sum_dy,
                                double* dotp, const char* sums_label, const char* merge_label) {
  if (shape == launch_shape::host) {
    Kokkos::parallel_for(sums_label, item_policy<Space>(space, 0, p.items()),
                         dispatched(item_backward_sums_kernel<T>{p, x, dy, mean, partial_dy, partial_dotp}));
    Kokkos::parallel_for(merge_label, item_policy<Space>(space, 0, merge_chunks(p.g.channels)),
                         merge_sums_kernel{p, partial_dy, partial_dotp, sum_dy, dotp});
  } else {
    const team_cut t = team_cut_of(p);
    launch_teams(space, sums_label, t, 2,
                        team_backward_sums_kernel<T, Space>{p, t, x, dy, mean, partial_dy, partial_dotp});
    Kokkos::parallel_for(merge_label, item_policy<Space>(space, 0, p.g.channels),
                         channel_merge_sums_kernel{p, partial_dy, partial_dotp, sum_dy, dotp});
  }
}

// From the batch's gradient sums: dgamma, dbeta and dx.
template <class Space, class T, class ParamView, class GradView, class Memory>
void launch_apply_gradient_sums(const Space& space, launch_shape shape, const work_partition& p, double count, const double* total_dy,
                                const double* total_dotp, const T* x, const T* dy, const ParamView& gamma,
                                const batch_norm_saved<Memory>& saved, T* dx, const GradView& dgamma,
                                const GradView& dbeta, const char* coefficients_label, const char* gradient_label) {
  using G = typename GradView::non_const_value_type;
  using C = compute_type_t<T>;
  const std::int64_t cs = p.g.channels;
  const scratch_lease<C, Memory, scratch_slot::coefficients> coefficient_lease("ordo::nn::backward coefficients",
                                                                              5 * cs);
  const auto coefficients = coefficient_lease.part(0, 5 * cs);
  const auto mean = saved.mean;
  const auto invstd = saved.invstd;
  Kokkos::parallel_for(
      coefficients_label, item_policy<Space>(space, 0, cs), KOKKOS_LAMBDA(std::int64_t c) {
        const double sum_dy = total_dy[c], dotp = total_dotp[c];
        const double is = invstd(c);
        const auto centre = split<C>(mean(c));
        coefficients(c) = centre.high;
        coefficients(cs + c) = centre.low;
        coefficients(2 * cs + c) = static_cast<C>(sum_dy / count);
        coefficients(3 * cs + c) = static_cast<C>(is * is * dotp / count);
        coefficients(4 * cs + c) = static_cast<C>(is * static_cast<double>(gamma(c)));
        dgamma(c) = static_cast<G>(dotp * is);
        dbeta(c) = static_cast<G>(sum_dy);
      });
  const gradient_coefficients<C> k{coefficients.data(), coefficients.data() + cs, coefficients.data() + 2 * cs,
                                   coefficients.data() + 3 * cs, coefficients.data() + 4 * cs};
  if (shape == launch_shape::host) {
    Kokkos::parallel_for(gradient_label, item_policy<Space>(space, 0, p.items()),
                         dispatched(input_gradient_kernel<T>{p, x, dy, dx, k}));
  } else {
    Kokkos::parallel_for(gradient_label, item_policy<Space>(space, 0, elements_of(p)),
                         element_input_gradient_kernel<T>{p.g, x, dy, dx, k});
  }
  space.fence();
}

// The checks every forward entry point makes of gamma, beta and the running statistics.
template <class ParamView, class StatView>
void check_forward_parameters(const channel_geometry& g, const ParamView& gamma, const ParamView& beta,
                              const StatView& running_mean, const StatView& running_var, const char* op) {
  check_channels(gamma, g.channels, op, "gamma");
  check_channels(beta, g.channels, op, "beta");
  check_channels(running_mean, g.channels, op, "running_mean");
  check_channels(running_var, g.channels, op, "running_var");
}

template <class ParamView, class MemorySpace, class GradView>
void check_backward_parameters(const channel_geometry& g, const ParamView& gamma,
                               const batch_norm_saved<MemorySpace>& saved, const GradView& dgamma,
                               const GradView& dbeta, const char* op) {
  check_channels(gamma, g.channels, op, "gamma");
  check_channels(saved.mean, g.channels, op, "saved.mean");
  check_channels(saved.invstd, g.channels, op, "saved.invstd");
  check_channels(dgamma, g.channels, op, "dgamma");
  check_channels(dbeta, g.channels, op, "dbeta");
}

// Counts are whole numbers held in double (they are merged like the moments).
inline std::string count_text(double count) {
  return count == static_cast<double>(static_cast<long long>(count)) ? std::to_string(static_cast<long long>(count))
                                                                      : std::to_string(count);
}

inline void check_training_count(double count, const std::string& shape, const char* op) {
  if (count < 2) {
    throw std::invalid_argument(std::string(op) + ": expected more than 1 value per channel when training, got " +
                                shape);
  }
}

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
  const auto b = block_layout_of(batch_extent::part, op, options.layout, x, output(y, "y"));
  check_forward_parameters(b.g, gamma, beta, running_mean, running_var, op);
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
  const auto b = block_layout_of(op, options.layout, x, output(y, "y"));
  check_forward_parameters(b.g, gamma, beta, running_mean, running_var, op);
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
  // The merge leaves the batch mean and M2 in the partials' first row.
  launch_local_moments(space, shape, p, xs.data(), partial_sum, partial_m2, partial_sum, partial_m2,
                              "ordo::nn::batch_norm_forward_training statistics",
                              "ordo::nn::batch_norm_forward_training merge");
  launch_apply_statistics(space, shape, p, static_cast<double>(b.g.per_channel()), partial_sum, partial_m2,
                                 xs.data(), gamma, beta, running_mean, running_var, ys.data(), saved, options,
                                 "ordo::nn::batch_norm_forward_training coefficients",
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
  const auto b = block_layout_of(op, options.layout, x, output(y, "y"));
  check_forward_parameters(b.g, gamma, beta, running_mean, running_var, op);
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
  const auto b = block_layout_of(batch_extent::part, op, options.layout, x, input(dy, "dy"), output(dx, "dx"));
  check_backward_parameters(b.g, gamma, saved, dgamma, dbeta, op);
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
  const auto b = block_layout_of(op, options.layout, x, input(dy, "dy"), output(dx, "dx"));
  check_backward_parameters(b.g, gamma, saved, dgamma, dbeta, op);
  const work_partition p = partition_of(b.g);
  const std::int64_t cs = b.g.channels;
  const auto xs = read_operand(space, x, b);
  const auto dys = read_operand(space, dy, b);
  const auto dxs = write_operand(space, dx, b);
  const scratch_lease<double, memory, scratch_slot::partials> partials("ordo::nn::partial gradient sums",
                                                                       2 * p.row_items * cs);
  double* const partial_dy = partials.part(0, p.row_items * cs).data();
  double* const partial_dotp = partials.part(p.row_items * cs, p.row_items * cs).data();
  launch_local_gradient_sums(space, shape, p, xs.data(), dys.data(), saved.mean.data(), partial_dy, partial_dotp,
                                    partial_dy, partial_dotp, "ordo::nn::batch_norm_backward sums",
                                    "ordo::nn::batch_norm_backward merge");
  launch_apply_gradient_sums(space, shape, p, static_cast<double>(b.g.per_channel()), partial_dy, partial_dotp,
                                    xs.data(), dys.data(), gamma, saved, dxs.data(), dgamma, dbeta,
                                    "ordo::nn::batch_norm_backward coefficients",
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
  const auto b = detail::block_layout_of(detail::batch_extent::part, operation, options.layout, x, detail::output(y, "y"));
  detail::check_forward_parameters(b.g, gamma, beta, running_mean, running_var, operation);
}

// The arguments of the backward of a training step on this caller's part of the batch, as
// batch_norm_apply_gradient_sums checks them.
template <class DyView, class XView, class ParamView, class MemorySpace, class DxView, class GradView>
void batch_norm_check_backward_arguments(const char* operation, const DyView& dy, const XView& x,
                                         const ParamView& gamma, const batch_norm_saved<MemorySpace>& saved,
                                         const DxView& dx, const GradView& dgamma, const GradView& dbeta,
                                         const batch_norm_options& options = {}) {
  const auto b = detail::block_layout_of(detail::batch_extent::part, operation, options.layout, x,
                                         detail::input(dy, "dy"), detail::output(dx, "dx"));
  detail::check_backward_parameters(b.g, gamma, saved, dgamma, dbeta, operation);
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
