// Question 7: time and space complexity of backpropagation through time (BPTT) for an RNN?
//
// The RNN h_t = tanh(W_hh h_(t-1) + W_xh x_t), T steps, batch B, hidden size H, input size D.
// 1. A cost model in constexpr: time O(T B (H^2 + H D)) forward and backward, activation memory
//    O(T B H), and O(sqrt(T) B H) with checkpointing at the price of about one extra forward,
//    the last checked by simulating the checkpointing schedule step by step.
// 2. The gradient as a chain of Jacobians: the planner proves that reverse mode (left to right)
//    is the cheapest order for a scalar loss, and forward mode (right to left) for one input.
// Used by q07_bptt.cpp and the tour.
#pragma once

#include <ordo/core/chain.hpp>

#include <array>
#include <cstdint>
#include <cstdio>

namespace ordo_examples::q07 {

struct rnn {
  std::uint64_t steps, batch, hidden, input;  // T, B, H, D
};
inline constexpr rnn model{1024, 32, 512, 256};

// Multiplications per step and sample: W_hh h (H^2) and W_xh x (H D).
constexpr std::uint64_t forward_multiplications(const rnn& r) {
  return r.steps * r.batch * (r.hidden * r.hidden + r.hidden * r.input);
}
// Backward per step and sample: W_hh^T delta for the previous state (H^2), delta h^T into dW_hh
// (H^2), delta x^T into dW_xh (H D). About twice the forward, so the same order.
constexpr std::uint64_t backward_multiplications(const rnn& r) {
  return r.steps * r.batch * (2 * r.hidden * r.hidden + r.hidden * r.input);
}
// Without checkpointing every hidden state h_0 .. h_T is kept for the backward pass.
constexpr std::uint64_t stored_states(const rnn& r) { return r.steps + 1; }

static_assert(forward_multiplications(model) == 1024ull * 32 * (512 * 512 + 512 * 256));
static_assert(forward_multiplications(model) == 12'884'901'888);
static_assert(backward_multiplications(model) == 1024ull * 32 * (2 * 512 * 512 + 512 * 256));
static_assert(stored_states(model) * model.batch * model.hidden == 1025ull * 32 * 512);

// Checkpointing, simulated: the forward keeps only h_0, h_s, h_2s, ..., h_T. The backward walks
// the segments from the last: it recomputes the segment's inner states from its checkpoint, holds
// them while it backpropagates through the segment, then frees them and the checkpoint it has
// passed. Counts the states alive at the peak and the forward steps run in all. The segment
// length must divide the number of steps.
struct schedule {
  std::uint64_t peak_states;
  std::uint64_t forward_steps;
};

constexpr schedule simulate_checkpointing(std::uint64_t steps, std::uint64_t segment) {
  schedule s{0, 0};
  std::uint64_t alive = 1;  // h_0
  for (std::uint64_t t = 1; t <= steps; ++t) {
    ++s.forward_steps;
    if (t % segment == 0) ++alive;  // a checkpoint (h_T is one when segment divides T)
  }
  s.peak_states = alive;
  for (std::uint64_t end = steps; end > 0; end -= segment) {
    const std::uint64_t inner = segment - 1;  // h_(end - segment + 1) .. h_(end - 1)
    s.forward_steps += inner;
    alive += inner;
    s.peak_states = alive > s.peak_states ? alive : s.peak_states;
    alive -= inner + 1;  // the recomputed states and the checkpoint h_end
  }
  return s;
}

inline constexpr std::uint64_t sqrt_steps = 32;  // sqrt(1024)
static_assert(sqrt_steps * sqrt_steps == model.steps);
inline constexpr schedule plain = simulate_checkpointing(model.steps, 1);
inline constexpr schedule checkpointed = simulate_checkpointing(model.steps, sqrt_steps);
static_assert(plain.peak_states == stored_states(model) && plain.forward_steps == model.steps);
// T/s + s states alive at the peak: 2 sqrt(T) at s = sqrt(T), instead of T + 1.
static_assert(checkpointed.peak_states == model.steps / sqrt_steps + sqrt_steps);
static_assert(checkpointed.peak_states == 2 * sqrt_steps);
// The extra work is T - T/s recomputed steps: less than one more forward pass.
static_assert(checkpointed.forward_steps == 2 * model.steps - model.steps / sqrt_steps);
static_assert(checkpointed.forward_steps < 2 * model.steps);

// s = sqrt(T) is the best segment length among the divisors of T.
constexpr bool sqrt_is_best() {
  for (std::uint64_t segment = 1; segment <= model.steps; segment *= 2) {
    if (simulate_checkpointing(model.steps, segment).peak_states < checkpointed.peak_states) return false;
  }
  return true;
}
static_assert(sqrt_is_best());

// The gradient as a chain of Jacobians. For a scalar loss L and the input x_1:
//   dL/dx_1 = dL/dh_T (1 x H) . dh_T/dh_(T-1) (H x H) ... dh_2/dh_1 (H x H) . dh_1/dx_1 (H x D).
// Short enough to write as types: T = 4.
inline constexpr std::size_t h = 512, d = 256;
using loss_gradient = ordo::shape<1, h>;
using step_jacobian = ordo::shape<h, h>;
using input_jacobian = ordo::shape<h, d>;
inline constexpr auto& reverse4 =
    ordo::chain_plan_v<loss_gradient, step_jacobian, step_jacobian, step_jacobian, input_jacobian>;
static_assert(reverse4.order() == "((((A1A2)A3)A4)A5)");  // left to right: reverse mode
static_assert(reverse4.cost() == reverse4.left_to_right_cost());
static_assert(reverse4.cost() == 3 * (1 * h * h) + 1 * h * d);  // vector-Jacobian products only

// One scalar input direction instead (a column dh_1/dtheta, H x 1, and no loss yet): the
// Jacobian-vector products from the right are cheapest, forward mode.
using parameter_column = ordo::shape<h, 1>;
inline constexpr auto& forward4 =
    ordo::chain_plan_v<step_jacobian, step_jacobian, step_jacobian, parameter_column>;
static_assert(forward4.order() == "(A1(A2(A3A4)))");
static_assert(forward4.cost() == 3 * (h * h * 1));
static_assert(forward4.left_to_right_cost() == 2 * (h * h * h) + h * h * 1);

// The whole sequence, T = 1024 Jacobians (1025 matrices, Hu-Shing in constexpr): planned as
// arrays of dims. The cost of right to left is the left-to-right cost of the reversed dims (the
// transposed chain).
inline constexpr std::size_t jacobians = 1024;
inline constexpr std::array<std::size_t, jacobians + 2> reverse_dims = [] {
  std::array<std::size_t, jacobians + 2> dims{};
  dims[0] = 1;
  for (std::size_t i = 1; i <= jacobians; ++i) dims[i] = h;
  dims[jacobians + 1] = d;
  return dims;
}();
template <std::size_t N>
constexpr std::array<std::size_t, N> reversed(const std::array<std::size_t, N>& dims) {
  std::array<std::size_t, N> r{};
  for (std::size_t i = 0; i < N; ++i) r[i] = dims[N - 1 - i];
  return r;
}
inline constexpr auto reverse_mode = ordo::plan_chain(reverse_dims);
inline constexpr std::uint64_t reverse_right_to_left =
    ordo::plan_chain(reversed(reverse_dims)).left_to_right_cost();

// Every product takes in the gradient row vector (first operand A1): the tree is left-deep.
template <std::size_t N>
constexpr bool every_product_starts_at_first(const ordo::chain_plan<N>& plan) {
  for (const ordo::planned_product& p : plan.products()) {
    if (p.first != 0) return false;
  }
  return true;
}
template <std::size_t N>
constexpr bool every_product_ends_at_last(const ordo::chain_plan<N>& plan) {
  for (const ordo::planned_product& p : plan.products()) {
    if (p.last != plan.matrices() - 1) return false;
  }
  return true;
}
static_assert(every_product_starts_at_first(reverse_mode));
static_assert(reverse_mode.cost() == reverse_mode.left_to_right_cost());
static_assert(reverse_mode.cost() == (jacobians - 1) * h * h + h * d);
static_assert(reverse_right_to_left == (jacobians - 1) * h * h * d + 1 * h * d);

inline constexpr std::array<std::size_t, jacobians + 1> forward_dims = [] {
  std::array<std::size_t, jacobians + 1> dims{};
  for (std::size_t i = 0; i < jacobians; ++i) dims[i] = h;
  dims[jacobians] = 1;
  return dims;
}();
inline constexpr auto forward_mode = ordo::plan_chain(forward_dims);
inline constexpr std::uint64_t forward_right_to_left =
    ordo::plan_chain(reversed(forward_dims)).left_to_right_cost();
static_assert(every_product_ends_at_last(forward_mode));
static_assert(forward_mode.cost() == forward_right_to_left);
static_assert(forward_mode.cost() == (jacobians - 1) * h * h);
static_assert(forward_mode.left_to_right_cost() == (jacobians - 2) * h * h * h + h * h);

inline void print_cost(const char* what, std::uint64_t multiplications) {
  std::printf("  %-44s %22llu multiplications\n", what, static_cast<unsigned long long>(multiplications));
}

// The whole answer, as q07_bptt prints it. Every claim in it is a static_assert above.
inline void demonstrate() {
  std::printf("Question 7: the complexity of backpropagation through time\n\n");
  std::printf("RNN h_t = tanh(W_hh h_(t-1) + W_xh x_t) with T = %llu, B = %llu, H = %llu, D = %llu:\n",
              static_cast<unsigned long long>(model.steps), static_cast<unsigned long long>(model.batch),
              static_cast<unsigned long long>(model.hidden), static_cast<unsigned long long>(model.input));
  print_cost("forward, T B (H^2 + H D)", forward_multiplications(model));
  print_cost("backward, T B (2 H^2 + H D)", backward_multiplications(model));
  std::printf("  time O(T B (H^2 + H D)): linear in T, the steps cannot run in parallel\n");
  const double state_mib = static_cast<double>(model.batch * model.hidden * 4) / (1 << 20);
  std::printf("  activations, all states kept:  %5llu states of B x H = %6.1f MiB in fp32   O(T B H)\n",
              static_cast<unsigned long long>(plain.peak_states), state_mib * static_cast<double>(plain.peak_states));
  std::printf("  checkpoint every sqrt(T) = %llu: %5llu states of B x H = %6.1f MiB in fp32   O(sqrt(T) B H)\n",
              static_cast<unsigned long long>(sqrt_steps), static_cast<unsigned long long>(checkpointed.peak_states),
              state_mib * static_cast<double>(checkpointed.peak_states));
  std::printf("  at the price of %llu recomputed steps: %.2f extra forward passes (simulated schedule)\n\n",
              static_cast<unsigned long long>(checkpointed.forward_steps - model.steps),
              static_cast<double>(checkpointed.forward_steps - model.steps) / static_cast<double>(model.steps));

  std::printf("The gradient is a chain of Jacobians: dL/dx_1 = (1xH)(HxH)...(HxH)(HxD), %zu Jacobians.\n", jacobians);
  std::printf("The planner finds left to right (reverse mode, vector-Jacobian products) cheapest:\n");
  print_cost("left to right (reverse mode), planned", reverse_mode.cost());
  print_cost("right to left (forward mode)", reverse_right_to_left);
  std::printf("  %.0fx cheaper; for T = 4 the plan is %.*s\n",
              static_cast<double>(reverse_right_to_left) / static_cast<double>(reverse_mode.cost()),
              static_cast<int>(reverse4.order().size()), reverse4.order().data());
  std::printf("For one input direction, (HxH)...(HxH)(Hx1), right to left (forward mode) wins:\n");
  print_cost("right to left (forward mode), planned", forward_mode.cost());
  print_cost("left to right (reverse mode)", forward_mode.left_to_right_cost());
  std::printf("  %.0fx cheaper; for T = 4 the plan is %.*s\n",
              static_cast<double>(forward_mode.left_to_right_cost()) / static_cast<double>(forward_mode.cost()),
              static_cast<int>(forward4.order().size()), forward4.order().data());
  std::printf("A scalar loss and millions of parameters: reverse mode, which is backpropagation.\n");
}

}  // namespace ordo_examples::q07
