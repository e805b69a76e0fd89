#ifndef ORDO_MPI_BATCH_NORM_HPP
#define ORDO_MPI_BATCH_NORM_HPP

// Synchronized batch normalization: each rank holds part of the batch (any number of samples,
// zero included) and every rank gets the statistics of the whole batch.
//   auto saved = ordo::mpi::batch_norm_forward_training(comm, x, gamma, beta, running_mean, running_var, y, opt);
//   ordo::mpi::batch_norm_backward(comm, dy, x, gamma, saved, dx, dgamma, dbeta, opt);
// Forward: one MPI_Allreduce carries every channel's (count, mean, M2) and merges them with Chan's
// formula, a user-defined MPI operation declared non-commutative so that MPI combines the ranks
// in rank order. Backward: one MPI_Allreduce(MPI_SUM) of (count, sum dy, sum (x - mean) dy). Each
// is preceded by one small allreduce in which the ranks check that they agree (channels, value
// type, layout) and that every rank's arguments passed its checks, so that a mismatch throws on
// every rank instead of hanging. The arguments are those of ordo::nn's one-call functions, plus
// the communicator. See docs/distributed.md.

#include <ordo/mpi/detail/communicator.hpp>
#include <ordo/mpi/detail/staging.hpp>
#include <ordo/mpi/error.hpp>
#include <ordo/nn/batch_norm.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <array>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ordo::mpi {

namespace detail {

inline std::string memory_format_name(std::int64_t id) {
  return id == 0 ? "channels_first" : id == 1 ? "channels_last" : "an unknown memory format";
}

// What the ranks must agree on before they combine their statistics: the shape of what they
// send, and the options every rank applies to the same statistics (a rank with another eps or
// momentum would normalize and update its running statistics differently).
template <class XView>
std::array<agreement_item, 6> batch_norm_agreement(const XView& x, const nn::batch_norm_options& options) {
  using T = typename XView::non_const_value_type;
  return {{
      {"the number of channels", static_cast<std::int64_t>(nn::batch_norm_channels(x, options)), nullptr},
      {"the value type of x", value_type_id<T>(), value_type_name},
      {"the number of dimensions of x", static_cast<std::int64_t>(XView::rank), nullptr},
      {"the memory format", options.layout == nn::channels_first ? 0 : 1, memory_format_name},
      {"eps", double_id(options.eps), double_text},
      {"momentum", double_id(options.momentum), double_text},
  }};
}

// The wire format of both steps: [count, first[C], second[C]] doubles. The forward's merge sends
// them as one MPI element of a contiguous type of 2C + 1 doubles, so that the reduction
// operation sees whole channels.
class payload_type {
 public:
  payload_type(std::int64_t channels, const char* operation) {
    check(MPI_Type_contiguous(static_cast<int>(2 * channels + 1), MPI_DOUBLE, &type_), operation,
          "MPI_Type_contiguous");
    check(MPI_Type_commit(&type_), operation, "MPI_Type_commit");
  }
  ~payload_type() { MPI_Type_free(&type_); }
  payload_type(const payload_type&) = delete;
  payload_type& operator=(const payload_type&) = delete;
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// MPI's reduction callback: inout = in (lower ranks) merged with inout (higher ranks), channel by
// channel, with nn::channel_moments, the merge ordo uses within a device.
inline void merge_moments_operation(void* in, void* inout, int* length, MPI_Datatype* type) {
  int bytes = 0;
  MPI_Type_size(*type, &bytes);
  const std::int64_t values = bytes / static_cast<int>(sizeof(double)), channels = (values - 1) / 2;
  for (int e = 0; e < *length; ++e) {
    const double* a = static_cast<const double*>(in) + e * values;
    double* b = static_cast<double*>(inout) + e * values;
    for (std::int64_t c = 0; c < channels; ++c) {
      nn::channel_moments m{a[0], a[1 + c], a[1 + channels + c]};
      m.merge(nn::channel_moments{b[0], b[1 + c], b[1 + channels + c]});
      b[1 + c] = m.mean;
      b[1 + channels + c] = m.m2;
    }
    b[0] = a[0] + b[0];
  }
}

class merge_moments_op {
 public:
  explicit merge_moments_op(const char* operation) {
    // Not commutative: Chan's merge rounds differently with its arguments swapped, and MPI
    // combines non-commutative operands in rank order.
    check(MPI_Op_create(&merge_moments_operation, 0, &op_), operation, "MPI_Op_create");
  }
  ~merge_moments_op() { MPI_Op_free(&op_); }
  merge_moments_op(const merge_moments_op&) = delete;
  merge_moments_op& operator=(const merge_moments_op&) = delete;
  MPI_Op get() const { return op_; }

 private:
  MPI_Op op_ = MPI_OP_NULL;
};

// [count, first, second] packed in MemorySpace on space.
template <class Space, class MemorySpace>
Kokkos::View<double*, MemorySpace> pack(const Space& space, double count, const Kokkos::View<double*, MemorySpace>& first,
                                        const Kokkos::View<double*, MemorySpace>& second) {
  const std::int64_t cs = static_cast<std::int64_t>(first.extent(0));
  Kokkos::View<double*, MemorySpace> payload("ordo::mpi payload", static_cast<std::size_t>(2 * cs + 1));
  Kokkos::parallel_for(
      "ordo::mpi pack", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, cs + 1),
      KOKKOS_LAMBDA(std::int64_t c) {
        if (c == cs) {
          payload(0) = count;
        } else {
          payload(1 + c) = first(c);
          payload(1 + cs + c) = second(c);
        }
      });
  space.fence();
  return payload;
}

template <class Space, class MemorySpace>
void unpack(const Space& space, const Kokkos::View<double*, MemorySpace>& payload, const Kokkos::View<double*, MemorySpace>& first,
            const Kokkos::View<double*, MemorySpace>& second) {
  const std::int64_t cs = static_cast<std::int64_t>(first.extent(0));
  Kokkos::parallel_for(
      "ordo::mpi unpack", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, cs),
      KOKKOS_LAMBDA(std::int64_t c) {
        first(c) = payload(1 + c);
        second(c) = payload(1 + cs + c);
      });
  space.fence();
}

// Allreduces [count, first, second] in place; returns the global count.
template <class Space, class MemorySpace>
double allreduce_payload(const Space& space, MPI_Comm comm, double count, const Kokkos::View<double*, MemorySpace>& first,
                         const Kokkos::View<double*, MemorySpace>& second, MPI_Op op, payload_path path,
                         const char* operation) {
  const auto payload = pack(space, count, first, second);
  const payload_buffer<MemorySpace> buffer(payload, path);
  if (op == MPI_SUM) {
    // MPI's own operations take only MPI's own datatypes: 2C + 1 doubles.
    check(MPI_Allreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(payload.extent(0)), MPI_DOUBLE, op, comm),
          operation, "MPI_Allreduce");
  } else {
    const payload_type type(static_cast<std::int64_t>(first.extent(0)), operation);
    check(MPI_Allreduce(MPI_IN_PLACE, buffer.data(), 1, type.get(), op, comm), operation, "MPI_Allreduce");
  }
  buffer.finish();
  unpack(space, payload, first, second);
  double total = 0;
  Kokkos::deep_copy(total, Kokkos::subview(payload, 0));
  return total;
}

inline std::string ranks_text(int ranks) { return std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks"); }

template <class Space, class XView, class ParamView, class StatView, class YView>
nn::batch_norm_saved<typename XView::memory_space> forward_training(
    const Space& space, MPI_Comm comm, const XView& x, const ParamView& gamma, const ParamView& beta, const StatView& running_mean,
    const StatView& running_var, const YView& y, const nn::batch_norm_options& options, payload_path path) {
  constexpr const char* op = "ordo::mpi::batch_norm_forward_training";
  using memory = typename XView::memory_space;
  static_assert(std::is_same_v<typename YView::non_const_value_type, typename XView::non_const_value_type>,
                "ordo::mpi::batch_norm_forward_training: y must have x's value type");
  const errors_return_scope scope(comm, op);
  // Every check a rank can fail on its own runs before the first collective call.
  nn::batch_norm_statistics<memory> local;
  std::exception_ptr failure;
  try {
    nn::batch_norm_check_training_arguments(op, x, gamma, beta, running_mean, running_var, y, options);
    local = nn::batch_norm_local_statistics(space, x, options);
  } catch (...) {
    failure = std::current_exception();
  }
  check_agreement(comm, op, batch_norm_agreement(x, options), failure);
  const merge_moments_op merge(op);
  nn::batch_norm_statistics<memory> global = local;
  global.count = allreduce_payload(space, comm, local.count, local.mean, local.m2, merge.get(), path, op);
  if (global.count < 2) {
    throw std::invalid_argument(std::string(op) + ": expected more than 1 value per channel when training, got " +
                                std::to_string(static_cast<long long>(global.count)) + " in total across " +
                                ranks_text(rank_count(comm, op)));
  }
  return nn::batch_norm_apply_statistics(space, global, x, gamma, beta, running_mean, running_var, y, options);
}

template <class Space, class DyView, class XView, class ParamView, class MemorySpace, class DxView, class GradView>
void backward(const Space& space, MPI_Comm comm, const DyView& dy, const XView& x, const ParamView& gamma,
              const nn::batch_norm_saved<MemorySpace>& saved, const DxView& dx, const GradView& dgamma,
              const GradView& dbeta, const nn::batch_norm_options& options, payload_path path) {
  constexpr const char* op = "ordo::mpi::batch_norm_backward";
  using memory = typename XView::memory_space;
  static_assert(std::is_same_v<typename DyView::non_const_value_type, typename XView::non_const_value_type> &&
                    std::is_same_v<typename DxView::non_const_value_type, typename XView::non_const_value_type>,
                "ordo::mpi::batch_norm_backward: dy and dx must have x's value type");
  const errors_return_scope scope(comm, op);
  nn::batch_norm_gradient_sums<memory> local;
  std::exception_ptr failure;
  try {
    nn::batch_norm_check_backward_arguments(op, dy, x, gamma, saved, dx, dgamma, dbeta, options);
    local = nn::batch_norm_local_gradient_sums(space, dy, x, saved, options);
  } catch (...) {
    failure = std::current_exception();
  }
  check_agreement(comm, op, batch_norm_agreement(x, options), failure);
  nn::batch_norm_gradient_sums<memory> global = local;
  global.count = allreduce_payload(space, comm, local.count, local.sum_dy, local.dotp, MPI_SUM, path, op);
  nn::batch_norm_apply_gradient_sums(space, global, dy, x, gamma, saved, dx, dgamma, dbeta, options);
}

}  // namespace detail

// Training forward pass over the batch that the ranks of comm hold together: every rank
// normalizes its x with the whole batch's mean and biased variance, updates its running
// statistics with the whole batch's unbiased variance (the same values on every rank) and gets
// the same saved mean and invstd. Collective. A rank may hold no samples (N = 0); the whole batch
// needs more than one value per channel. Throws ordo::mpi::error on every rank when the ranks
// disagree on the channels, value type, rank of x or memory format, or a rank's arguments fail
// ordo::nn's checks (that rank throws ordo::nn's exception). With a leading execution-space
// instance, every kernel and copy runs on it (as ordo::nn's functions do); without, on the
// default instance of x's execution space.
template <class Space, class XView, class ParamView, class StatView, class YView>
  requires Kokkos::is_execution_space<Space>::value
nn::batch_norm_saved<typename XView::memory_space> batch_norm_forward_training(
    const Space& space, MPI_Comm comm, const XView& x, const ParamView& gamma, const ParamView& beta,
    const StatView& running_mean, const StatView& running_var, const YView& y,
    const nn::batch_norm_options& options = {}) {
  return detail::forward_training(space, comm, x, gamma, beta, running_mean, running_var, y, options,
                                  detail::payload_path_for<typename XView::memory_space>());
}
template <class XView, class ParamView, class StatView, class YView>
nn::batch_norm_saved<typename XView::memory_space> batch_norm_forward_training(
    MPI_Comm comm, const XView& x, const ParamView& gamma, const ParamView& beta, const StatView& running_mean,
    const StatView& running_var, const YView& y, const nn::batch_norm_options& options = {}) {
  return batch_norm_forward_training(typename XView::execution_space{}, comm, x, gamma, beta, running_mean,
                                     running_var, y, options);
}

// Backward of the synchronized training pass: dgamma and dbeta of the whole batch on every rank,
// and this rank's part of dx. saved is what batch_norm_forward_training returned. Collective.
template <class Space, class DyView, class XView, class ParamView, class MemorySpace, class DxView, class GradView>
  requires Kokkos::is_execution_space<Space>::value
void batch_norm_backward(const Space& space, MPI_Comm comm, const DyView& dy, const XView& x, const ParamView& gamma,
                         const nn::batch_norm_saved<MemorySpace>& saved, const DxView& dx, const GradView& dgamma,
                         const GradView& dbeta, const nn::batch_norm_options& options = {}) {
  detail::backward(space, comm, dy, x, gamma, saved, dx, dgamma, dbeta, options,
                   detail::payload_path_for<typename XView::memory_space>());
}
template <class DyView, class XView, class ParamView, class MemorySpace, class DxView, class GradView>
void batch_norm_backward(MPI_Comm comm, const DyView& dy, const XView& x, const ParamView& gamma,
                         const nn::batch_norm_saved<MemorySpace>& saved, const DxView& dx, const GradView& dgamma,
                         const GradView& dbeta, const nn::batch_norm_options& options = {}) {
  batch_norm_backward(typename XView::execution_space{}, comm, dy, x, gamma, saved, dx, dgamma, dbeta, options);
}

}  // namespace ordo::mpi

#endif
