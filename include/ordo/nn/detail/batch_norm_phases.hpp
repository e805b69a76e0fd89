#ifndef ORDO_NN_DETAIL_BATCH_NORM_PHASES_HPP
#define ORDO_NN_DETAIL_BATCH_NORM_PHASES_HPP

// Batch norm's phases as launches on pointers into staged, dense operands: the statistics of the
// items and their merge, the coefficients and the normalization, the gradient sums and their
// merge, the coefficients and the input gradient. Each comes in both launch shapes (host items,
// device teams). The public phase functions (batch_norm_local_statistics, ...) and the
// whole-batch ones (batch_norm_forward_training, batch_norm_backward) are built from these same
// launches: the whole batch keeps the merged statistics in the partials' first row instead of
// new Views, so it runs the same kernels with the same bits and allocates nothing more.

#include <ordo/core/config.hpp>
#include <ordo/core/scalar_traits.hpp>
#include <ordo/platform/host_dispatched.hpp>
#include <ordo/platform/kokkos_math.hpp>
#include <ordo/platform/launch_shape.hpp>
#include <ordo/platform/scratch_lease.hpp>
#include <ordo/platform/work_partition.hpp>
#include <ordo/nn/batch_norm_types.hpp>
#include <ordo/nn/detail/batch_norm_kernels.hpp>
#include <ordo/nn/detail/batch_norm_team_kernels.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

ORDO_IMPL_FP_CONTRACT_OFF_BEGIN  // every level rounds alike (core/config.hpp)

namespace ordo::nn::detail {

using ordo::detail::default_launch_shape_v;
using ordo::detail::dispatched;
using ordo::detail::item_policy;
using ordo::detail::launch_shape;
using ordo::detail::partition_of;
using ordo::detail::scratch_lease;
using ordo::detail::scratch_slot;
using ordo::detail::team_size_at_most;
using ordo::detail::uninitialized_view;

// The device shape's item kernels (team_cut), with team scratch for the chains' results. On a GPU
// a thread per chain of the team where the kernel's registers allow; elsewhere Kokkos' choice. The
// results do not depend on the team size.
template <class Space, class Kernel>
void launch_teams(const Space& space, const char* label, const team_cut& t, int scratch_arrays, const Kernel& kernel) {
  if (t.teams == 0) return;
  Kokkos::TeamPolicy<Space> policy(space, static_cast<int>(t.teams), Kokkos::AUTO);
  const std::int64_t values = t.scratch_values(scratch_arrays);
  const auto scratch = Kokkos::PerTeam(static_cast<int>(values * static_cast<std::int64_t>(sizeof(double))));
  if (values > 0) policy.set_scratch_size(0, scratch);
  if constexpr (!ordo::is_host_space_v<Space>) {
    const int team_size = team_size_at_most(policy, kernel, static_cast<int>(t.team_chains));
    policy = Kokkos::TeamPolicy<Space>(space, static_cast<int>(t.teams), team_size);
    if (values > 0) policy.set_scratch_size(0, scratch);
  }
  Kokkos::parallel_for(label, policy, kernel);
}

// The device shape's element passes: a thread per element.
inline std::int64_t elements_of(const work_partition& p) { return p.g.outer * p.g.channels * p.g.inner; }

// Item statistics, then their merge in item order: mean and m2 (C each) may be the partials' row 0.
// then(c) runs for each channel once its totals are written (merge_moments_kernel).
template <class Space, class T, class Epilogue = no_epilogue>
void launch_local_moments(const Space& space, launch_shape shape, const work_partition& p, const T* x, double* partial_sum,
                          double* partial_m2, double* mean, double* m2, const char* statistics_label,
                          const char* merge_label, const Epilogue& then = {}) {
  const double count = static_cast<double>(p.g.per_channel());
  if (shape == launch_shape::host) {
    Kokkos::parallel_for(statistics_label, item_policy<Space>(space, 0, p.items()),
                         dispatched(item_moments_kernel<T>{p, x, partial_sum, partial_m2}));
    Kokkos::parallel_for(merge_label, item_policy<Space>(space, 0, merge_chunks(p.g.channels)),
                         merge_moments_kernel<Epilogue>{p, partial_sum, partial_m2, count, mean, m2, then});
  } else {
    const team_cut t = team_cut_of(p);
    launch_teams(space, statistics_label, t, 1, team_moments_kernel<T, Space>{p, t, x, partial_sum, partial_m2});
    Kokkos::parallel_for(merge_label, item_policy<Space>(space, 0, p.g.channels),
                         channel_merge_moments_kernel<Epilogue>{p, partial_sum, partial_m2, count, mean, m2, then});
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

// From channel c's batch statistics: its saved mean and invstd, its running statistics and its
// normalize coefficients (centre high and low, scale, shift: 4 C values).
template <class C, class ParamView, class StatView, class SavedView, class CoefficientView>
struct statistics_coefficients {
  std::int64_t cs;
  double count;
  const double* batch_mean;
  const double* batch_m2;
  ParamView gamma, beta;
  StatView running_mean, running_var;
  SavedView mean, invstd;
  CoefficientView coefficients;
  double eps, momentum;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t c) const {
    using stat_type = typename StatView::non_const_value_type;
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
  }
};

template <class C, class ParamView, class StatView, class Memory, class CoefficientView>
statistics_coefficients<C, ParamView, StatView, Kokkos::View<double*, Memory>, CoefficientView> statistics_coefficients_of(
    std::int64_t cs, double count, const double* batch_mean, const double* batch_m2, const ParamView& gamma,
    const ParamView& beta, const StatView& running_mean, const StatView& running_var,
    const batch_norm_saved<Memory>& saved, const CoefficientView& coefficients, const batch_norm_options& options) {
  return {cs,           count,       batch_mean,   batch_m2,     gamma,         beta, running_mean,
          running_var,  saved.mean,  saved.invstd, coefficients, options.eps,   options.momentum};
}

template <class Space, class T, class CoefficientView>
void launch_normalize_with(const Space& space, launch_shape shape, const work_partition& p, const T* x, T* y,
                           const CoefficientView& coefficients, const char* label) {
  const std::int64_t cs = p.g.channels;
  launch_normalize(space, shape, p, x, y,
                   {coefficients.data(), coefficients.data() + cs, coefficients.data() + 2 * cs,
                    coefficients.data() + 3 * cs},
                   label);
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
  Kokkos::parallel_for(coefficients_label, item_policy<Space>(space, 0, cs),
                       statistics_coefficients_of<C>(cs, count, batch_mean, batch_m2, gamma, beta, running_mean,
                                                     running_var, saved, coefficients, options));
  launch_normalize_with(space, shape, p, x, y, coefficients, normalize_label);
  space.fence();
}

// The whole batch's forward in three launches: item statistics; their merge, each channel's
// coefficients computed as soon as its statistics are (launch_apply_statistics' coefficients, in
// the merge's launch); y. partial_sum and partial_m2 hold p.row_items rows of C each.
template <class Space, class T, class ParamView, class StatView, class Memory>
void launch_forward_training(const Space& space, launch_shape shape, const work_partition& p, const T* x,
                             double* partial_sum, double* partial_m2, const ParamView& gamma, const ParamView& beta,
                             const StatView& running_mean, const StatView& running_var, T* y,
                             const batch_norm_saved<Memory>& saved, const batch_norm_options& options,
                             const char* statistics_label, const char* merge_label, const char* normalize_label) {
  using C = compute_type_t<T>;
  const std::int64_t cs = p.g.channels;
  const scratch_lease<C, Memory, scratch_slot::coefficients> coefficient_lease("ordo::nn::coefficients", 4 * cs);
  const auto coefficients = coefficient_lease.part(0, 4 * cs);
  // The merge leaves the batch mean and M2 in the partials' first row.
  launch_local_moments(space, shape, p, x, partial_sum, partial_m2, partial_sum, partial_m2, statistics_label,
                       merge_label,
                       statistics_coefficients_of<C>(cs, static_cast<double>(p.g.per_channel()), partial_sum, partial_m2,
                                                     gamma, beta, running_mean, running_var, saved, coefficients,
                                                     options));
  launch_normalize_with(space, shape, p, x, y, coefficients, normalize_label);
  space.fence();
}

// Item gradient sums, then their merge in item order: sum_dy and dotp may be the partials' row 0.
// then(c) runs for each channel once its totals are written (merge_sums_kernel).
template <class Space, class T, class Epilogue = no_epilogue>
void launch_local_gradient_sums(const Space& space, launch_shape shape, const work_partition& p, const T* x, const T* dy,
                                const double* mean, double* partial_dy, double* partial_dotp, double* sum_dy,
                                double* dotp, const char* sums_label, const char* merge_label,
                                const Epilogue& then = {}) {
  if (shape == launch_shape::host) {
    Kokkos::parallel_for(sums_label, item_policy<Space>(space, 0, p.items()),
                         dispatched(item_backward_sums_kernel<T>{p, x, dy, mean, partial_dy, partial_dotp}));
    Kokkos::parallel_for(merge_label, item_policy<Space>(space, 0, merge_chunks(p.g.channels)),
                         merge_sums_kernel<Epilogue>{p, partial_dy, partial_dotp, sum_dy, dotp, then});
  } else {
    const team_cut t = team_cut_of(p);
    launch_teams(space, sums_label, t, 2,
                        team_backward_sums_kernel<T, Space>{p, t, x, dy, mean, partial_dy, partial_dotp});
    Kokkos::parallel_for(merge_label, item_policy<Space>(space, 0, p.g.channels),
                         channel_merge_sums_kernel<Epilogue>{p, partial_dy, partial_dotp, sum_dy, dotp, then});
  }
}

// From channel c's gradient sums: dgamma(c), dbeta(c) and its input-gradient coefficients
// (centre high and low, mean of dy, the dotp term, scale: 5 C values).
template <class C, class ParamView, class GradView, class SavedView, class CoefficientView>
struct gradient_sum_coefficients {
  std::int64_t cs;
  double count;
  const double* total_dy;
  const double* total_dotp;
  ParamView gamma;
  SavedView mean, invstd;
  CoefficientView coefficients;
  GradView dgamma, dbeta;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t c) const {
    using G = typename GradView::non_const_value_type;
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
  }
};

template <class C, class ParamView, class GradView, class Memory, class CoefficientView>
gradient_sum_coefficients<C, ParamView, GradView, Kokkos::View<double*, Memory>, CoefficientView>
gradient_sum_coefficients_of(std::int64_t cs, double count, const double* total_dy, const double* total_dotp,
                             const ParamView& gamma, const batch_norm_saved<Memory>& saved,
                             const CoefficientView& coefficients, const GradView& dgamma, const GradView& dbeta) {
  return {cs, count, total_dy, total_dotp, gamma, saved.mean, saved.invstd, coefficients, dgamma, dbeta};
}

template <class Space, class T, class CoefficientView>
void launch_input_gradient(const Space& space, launch_shape shape, const work_partition& p, const T* x, const T* dy,
                           T* dx, const CoefficientView& coefficients, const char* label) {
  using C = compute_type_t<T>;
  const std::int64_t cs = p.g.channels;
  const gradient_coefficients<C> k{coefficients.data(), coefficients.data() + cs, coefficients.data() + 2 * cs,
                                   coefficients.data() + 3 * cs, coefficients.data() + 4 * cs};
  if (shape == launch_shape::host) {
    Kokkos::parallel_for(label, item_policy<Space>(space, 0, p.items()),
                         dispatched(input_gradient_kernel<T>{p, x, dy, dx, k}));
  } else {
    Kokkos::parallel_for(label, item_policy<Space>(space, 0, elements_of(p)),
                         element_input_gradient_kernel<T>{p.g, x, dy, dx, k});
  }
}

// From the batch's gradient sums: dgamma, dbeta and dx.
template <class Space, class T, class ParamView, class GradView, class Memory>
void launch_apply_gradient_sums(const Space& space, launch_shape shape, const work_partition& p, double count, const double* total_dy,
                                const double* total_dotp, const T* x, const T* dy, const ParamView& gamma,
                                const batch_norm_saved<Memory>& saved, T* dx, const GradView& dgamma,
                                const GradView& dbeta, const char* coefficients_label, const char* gradient_label) {
  using C = compute_type_t<T>;
  const std::int64_t cs = p.g.channels;
  const scratch_lease<C, Memory, scratch_slot::coefficients> coefficient_lease("ordo::nn::backward coefficients",
                                                                              5 * cs);
  const auto coefficients = coefficient_lease.part(0, 5 * cs);
  Kokkos::parallel_for(coefficients_label, item_policy<Space>(space, 0, cs),
                       gradient_sum_coefficients_of<C>(cs, count, total_dy, total_dotp, gamma, saved, coefficients,
                                                       dgamma, dbeta));
  launch_input_gradient(space, shape, p, x, dy, dx, coefficients, gradient_label);
  space.fence();
}

// The whole batch's backward in three launches: item gradient sums; their merge, each channel's
// coefficients, dgamma and dbeta computed as soon as its sums are; dx. partial_dy and partial_dotp
// hold p.row_items rows of C each.
template <class Space, class T, class ParamView, class GradView, class Memory>
void launch_backward(const Space& space, launch_shape shape, const work_partition& p, const T* x, const T* dy,
                     double* partial_dy, double* partial_dotp, const ParamView& gamma,
                     const batch_norm_saved<Memory>& saved, T* dx, const GradView& dgamma, const GradView& dbeta,
                     const char* sums_label, const char* merge_label, const char* gradient_label) {
  using C = compute_type_t<T>;
  const std::int64_t cs = p.g.channels;
  const scratch_lease<C, Memory, scratch_slot::coefficients> coefficient_lease("ordo::nn::backward coefficients",
                                                                              5 * cs);
  const auto coefficients = coefficient_lease.part(0, 5 * cs);
  // The merge leaves the batch's sums in the partials' first row.
  launch_local_gradient_sums(space, shape, p, x, dy, saved.mean.data(), partial_dy, partial_dotp, partial_dy,
                             partial_dotp, sums_label, merge_label,
                             gradient_sum_coefficients_of<C>(cs, static_cast<double>(p.g.per_channel()), partial_dy,
                                                             partial_dotp, gamma, saved, coefficients, dgamma, dbeta));
  launch_input_gradient(space, shape, p, x, dy, dx, coefficients, gradient_label);
  space.fence();
}

}  // namespace ordo::nn::detail

ORDO_IMPL_FP_CONTRACT_OFF_END

#endif
