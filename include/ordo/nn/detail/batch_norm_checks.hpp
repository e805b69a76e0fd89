#ifndef ORDO_NN_DETAIL_BATCH_NORM_CHECKS_HPP
#define ORDO_NN_DETAIL_BATCH_NORM_CHECKS_HPP

// Every check batch norm makes, in one place, in the order an entry point makes them: the
// operand types (operand_types, at compile time), then prepare_forward / prepare_backward, which
// derive x's blocks (batch_norm_layout.hpp) with y, dy and dx, and check gamma, beta and the
// running or saved statistics against x's channels. What follows them in batch_norm.hpp only
// stages operands and launches; validation flows one way, from here to there.

#include <ordo/core/scalar_traits.hpp>
#include <ordo/platform/view_checks.hpp>
#include <ordo/nn/batch_norm_types.hpp>
#include <ordo/nn/detail/batch_norm_layout.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ordo::nn::detail {

using ordo::detail::accessible_from_v;

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

template <class V>
void check_channels(const V& v, std::int64_t channels, const char* operation, const char* name) {
  check_extent(v, channels, operation, name, "x", "channels");
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

// The checked operands of a forward call: x's blocks with y (the whole batch, or a part that may
// be empty), gamma, beta and the running statistics of x's channels.
template <class XView, class ParamView, class StatView, class YView>
block_layout<XView::rank> prepare_forward(batch_extent extent, const char* op, const batch_norm_options& options,
                                          const XView& x, const ParamView& gamma, const ParamView& beta,
                                          const StatView& running_mean, const StatView& running_var, const YView& y) {
  const auto b = block_layout_of(extent, op, options.layout, x, output(y, "y"));
  check_forward_parameters(b.g, gamma, beta, running_mean, running_var, op);
  return b;
}

// The checked operands of a backward call: x's blocks with dy and dx, gamma, the saved statistics
// and dgamma, dbeta of x's channels.
template <class DyView, class XView, class ParamView, class MemorySpace, class DxView, class GradView>
block_layout<XView::rank> prepare_backward(batch_extent extent, const char* op, const batch_norm_options& options,
                                           const DyView& dy, const XView& x, const ParamView& gamma,
                                           const batch_norm_saved<MemorySpace>& saved, const DxView& dx,
                                           const GradView& dgamma, const GradView& dbeta) {
  const auto b = block_layout_of(extent, op, options.layout, x, input(dy, "dy"), output(dx, "dx"));
  check_backward_parameters(b.g, gamma, saved, dgamma, dbeta, op);
  return b;
}

}  // namespace ordo::nn::detail

#endif
