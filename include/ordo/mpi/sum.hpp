#ifndef ORDO_MPI_SUM_HPP
#define ORDO_MPI_SUM_HPP

// Sums and means over the union of every rank's rank-1 View:
//   float s = ordo::mpi::sum(comm, x_local);                        // exact, correctly rounded
//   double m = ordo::mpi::mean<double>(comm, x_local);              // exact by default
//   double k = ordo::mpi::sum(comm, x_local, ordo::summation::kahan);  // not reproducible across rank counts
// With summation::exact each rank sums its part into a superaccumulator (a fixed-point integer
// spanning the whole exponent range) and one MPI_Allreduce(MPI_SUM) of 64-bit integers adds them.
// Integer addition is associative and commutative, so the result has the same bits for 1, 2, 3
// or 4 ranks, any split of the data and any reduction tree, and equals ordo::sum of the
// concatenation. The other policies sum locally, then add the ranks' local sums in double with
// MPI_SUM: their bits depend on the split and on MPI's reduction order. Every rank returns the
// same value. See docs/distributed.md.

#include <ordo/kernels/exact_sum.hpp>
#include <ordo/kernels/reduce.hpp>
#include <ordo/mpi/detail/communicator.hpp>
#include <ordo/mpi/error.hpp>

#include <Kokkos_Core.hpp>
#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>
#include <mpi.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ordo::mpi {

namespace detail {

// The policies a sum across ranks supports: exact through the superaccumulator, the others as
// local sums added in double. A policy ordo::sum gains is a compile error here until it is added
// (and its reduction across ranks written, where the two ways above do not serve).
using supported_policies = boost::mp11::mp_list<summation::naive_t, summation::pairwise_t, summation::kahan_t,
                                                summation::neumaier_t, summation::exact_t>;

// A policy as a number the ranks can compare: its position in ordo::summation::policies.
template <class Policy>
constexpr std::int64_t policy_id() {
  static_assert(boost::mp11::mp_contains<supported_policies, Policy>::value,
                "ordo::mpi::sum/mean: this summation policy is not supported across ranks yet");
  return static_cast<std::int64_t>(boost::mp11::mp_find<summation::policies, Policy>::value);
}
inline std::string policy_name(std::int64_t id) {
  constexpr std::size_t count = boost::mp11::mp_size<summation::policies>::value;
  if (id < 0 || id >= static_cast<std::int64_t>(count)) return "an unknown policy";
  return std::string(boost::mp11::mp_with_index<count>(static_cast<std::size_t>(id), [](auto index) {
    return boost::mp11::mp_at_c<summation::policies, decltype(index)::value>::name;
  }));
}

// The ranks' agreement, then the payload: the exact sum's part on each rank, whose words add
// like the parts (one MPI_Allreduce of 64-bit integers), or each rank's sum under the policy and
// the count, added in double. Returns the whole exact_sum_part, or {sum, count}.
template <class Out, class Space, class View, class Policy>
auto reduce_across(const Space& space, MPI_Comm comm, const View& x, Policy policy, const char* operation) {
  using value_type = typename View::non_const_value_type;
  static_assert(View::rank == 1, "ordo::mpi::sum/mean(comm, x) requires a rank-1 View");
  static_assert(floating_storage<value_type>,
                "ordo::mpi::sum/mean(comm, x) requires a View of float, double, ordo::half or ordo::bfloat16");
  const errors_return_scope scope(comm, operation);
  const std::array<agreement_item, 3> items{{
      {"the value type of x", value_type_id<value_type>(), value_type_name},
      {"the result type", value_type_id<Out>(), value_type_name},
      {"the summation policy", policy_id<Policy>(), policy_name},
  }};
  check_agreement(comm, operation, items);
  if constexpr (std::is_same_v<Policy, summation::exact_t>) {
    auto words = ordo::exact_sum_of(space, x).words();
    check(MPI_Allreduce(MPI_IN_PLACE, words.data(), static_cast<int>(words.size()), MPI_INT64_T, MPI_SUM, comm),
          operation, "MPI_Allreduce");
    return decltype(ordo::exact_sum_of(space, x))::from_words(words);
  } else {
    std::array<double, 2> sum_and_count{static_cast<double>(ordo::sum<Out>(space, x, policy)),
                                        static_cast<double>(x.extent(0))};
    check(MPI_Allreduce(MPI_IN_PLACE, sum_and_count.data(), 2, MPI_DOUBLE, MPI_SUM, comm), operation,
          "MPI_Allreduce");
    return sum_and_count;
  }
}

}  // namespace detail

// The sum over every rank's x (exact and correctly rounded by default). Collective: every rank of
// comm calls it with the same value type, Result and policy (otherwise every rank throws
// ordo::mpi::error). Empty everywhere: +0. With a leading execution-space instance, the local
// reduction runs on it; without, on the default instance of x's execution space.
template <class Result = void, class ExecutionSpace, class View, summation_policy Policy = summation::exact_t>
  requires(Kokkos::is_execution_space<ExecutionSpace>::value && Kokkos::is_view<View>::value)
ordo::sum_result_t<Result, View> sum(const ExecutionSpace& space, MPI_Comm comm, const View& x, Policy policy = {}) {
  using out = ordo::sum_result_t<Result, View>;
  static_assert(std::is_same_v<out, float> || std::is_same_v<out, double>,
                "ordo::mpi::sum<Result>: Result must be float or double");
  const auto total = detail::reduce_across<out>(space, comm, x, policy, "ordo::mpi::sum");
  if constexpr (std::is_same_v<Policy, summation::exact_t>) {
    return total.template sum<out>();
  } else {
    return static_cast<out>(total[0]);
  }
}
template <class Result = void, class View, summation_policy Policy = summation::exact_t>
  requires(Kokkos::is_view<View>::value)
ordo::sum_result_t<Result, View> sum(MPI_Comm comm, const View& x, Policy policy = {}) {
  return sum<Result>(typename View::execution_space{}, comm, x, policy);
}

// The mean over every rank's x: for exact, the exact global sum divided by the global count and
// rounded once. Collective, like sum. Throws std::domain_error on every rank when no rank has a
// value. With or without a leading execution-space instance, as sum.
template <class Result = void, class ExecutionSpace, class View, summation_policy Policy = summation::exact_t>
  requires(Kokkos::is_execution_space<ExecutionSpace>::value && Kokkos::is_view<View>::value)
ordo::sum_result_t<Result, View> mean(const ExecutionSpace& space, MPI_Comm comm, const View& x,
                                      Policy policy = {}) {
  using out = ordo::sum_result_t<Result, View>;
  static_assert(std::is_same_v<out, float> || std::is_same_v<out, double>,
                "ordo::mpi::mean<Result>: Result must be float or double");
  const auto total = detail::reduce_across<out>(space, comm, x, policy, "ordo::mpi::mean");
  if constexpr (std::is_same_v<Policy, summation::exact_t>) {
    if (total.count() == 0) throw std::domain_error("ordo::mpi::mean: empty range on every rank");
    return total.template mean<out>();
  } else {
    if (total[1] == 0) throw std::domain_error("ordo::mpi::mean: empty range on every rank");
    return static_cast<out>(total[0] / total[1]);
  }
}
template <class Result = void, class View, summation_policy Policy = summation::exact_t>
  requires(Kokkos::is_view<View>::value)
ordo::sum_result_t<Result, View> mean(MPI_Comm comm, const View& x, Policy policy = {}) {
  return mean<Result>(typename View::execution_space{}, comm, x, policy);
}

}  // namespace ordo::mpi

#endif
