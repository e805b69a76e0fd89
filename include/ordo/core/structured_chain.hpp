#ifndef ORDO_CORE_STRUCTURED_CHAIN_HPP
#define ORDO_CORE_STRUCTURED_CHAIN_HPP

// Generalized chains: products of operands with structure, transposes and inverses, planned with
// a kernel per product and a cost model (docs/structured_chains.md). Pure C++20.
//
//   using namespace ordo::operands;
//   // (X^T X)^-1 X^T y as  S^-1 (X^T y)  with S = X^T X declared SPD:
//   constexpr auto p = ordo::plan_structured_chain(std::array<std::size_t, 4>{50, 50, 1000, 1},
//                                                  std::array<ordo::chain_operand, 3>{spd.inverse(),
//                                                  general.transpose(), general},
//                                                  ordo::cost_model::flops{});
//   static_assert(p.kernels() == "gemv posv" && p.order() == "(A1(A2A3))");
//
// The planner (core/detail/structured_chain_solver.hpp) chooses each product's kernel among those
// that match its factors' kinds (TRMM for a triangular factor, a solve for an inverse: TRSM,
// POSV, SYSV or GESV, SYRK for X^T X of one stored X, scalings for diagonals), infers the kind of
// every intermediate (product_kind_of), and ranks plans by the cost model, predicted time by
// default. An inverse is never formed explicitly unless inverse_policy::allow_explicit says so.

#include <ordo/core/chain_error.hpp>
#include <ordo/core/chain_kernel.hpp>
#include <ordo/core/chain_plan.hpp>
#include <ordo/core/cost_model.hpp>
#include <ordo/core/detail/plan_building.hpp>
#include <ordo/core/detail/structured_chain_solver.hpp>
#include <ordo/core/fixed_string.hpp>
#include <ordo/core/matrix_kind.hpp>
#include <ordo/core/order_view.hpp>
#include <ordo/core/structured_product.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace ordo {

// Whether a plan may form an inverse explicitly (GETRI, POTRI, TRTRI, ...) when that is cheaper
// for the whole chain. The default solves: an explicit inverse rounds worse (docs/precision.md).
enum class inverse_policy : unsigned char { solve_only, allow_explicit };

namespace detail {
template <class Plan, class Model>
constexpr void build_structured_chain_plan(Plan& plan, std::span<const std::size_t> dims,
                                           std::span<const chain_operand> operands, const Model& model,
                                           inverse_policy policy);

// Kernel names of a plan, space-separated: at most "reciprocal reciprocal diagonal_product " each.
constexpr std::size_t kernels_length_bound(std::size_t matrices) noexcept { return 40 * matrices + 12; }
}  // namespace detail

// The plan of an n-operand generalized chain: Matrices is n, or ordo::dynamic.
template <std::size_t Matrices>
class structured_chain_plan {
  static constexpr std::size_t product_count = Matrices == dynamic ? dynamic : Matrices - 1;
  static constexpr std::size_t dim_count = Matrices == dynamic ? dynamic : Matrices + 1;
  static constexpr std::size_t order_capacity = Matrices == dynamic ? dynamic : detail::order_length_bound(Matrices);
  static constexpr std::size_t kernels_capacity =
      Matrices == dynamic ? dynamic : detail::kernels_length_bound(Matrices);

 public:
  constexpr structured_chain_plan() = default;

  constexpr std::size_t matrices() const noexcept { return dims_.size() - 1; }
  constexpr std::span<const std::size_t> dims() const noexcept { return {dims_.data(), dims_.size()}; }
  constexpr std::size_t rows() const noexcept { return dims_.data()[0]; }
  constexpr std::size_t cols() const noexcept { return dims_.data()[dims_.size() - 1]; }
  // The operands as planned: an orthogonal Q^-1 becomes Q^T (normalized()).
  constexpr std::span<const chain_operand> operands() const noexcept { return {operands_.data(), operands_.size()}; }
  // The products in evaluation order (post-order, the root last).
  constexpr std::span<const structured_product> products() const noexcept {
    return {products_.data(), products_.size()};
  }
  // The cost of the plan in the cost model it was planned with (the optimum).
  constexpr std::uint64_t cost() const noexcept { return cost_; }
  // Floating-point operations of the plan's kernels (kernel_flops), whatever the cost model.
  constexpr std::uint64_t flops() const noexcept { return flops_; }
  // The parenthesization, as chain_plan::order() writes it: "(A1(A2A3))".
  constexpr order_view order() const noexcept { return std::string_view{order_.data(), order_length_}; }
  // The kernels in evaluation order, space-separated, an explicit inversion before its product:
  // "syrk posv", "trsm trsm", "getri gemm".
  constexpr std::string_view kernels() const noexcept { return {kernels_.data(), kernels_length_}; }
  // The kind of the whole product as the planner infers it.
  constexpr matrix_kind result_kind() const noexcept { return result_kind_; }
  // One operand that is an inverse, alone: the plan is its explicit inversion (no products).
  constexpr bool inverts_single_operand() const noexcept { return matrices() == 1 && operands_[0].inverted; }
  // The most intermediate elements alive at once (chain_plan's layout; diagonals as vectors).
  constexpr std::uint64_t peak_temporary_elements() const noexcept { return peak_temporary_elements_; }

 private:
  template <class Plan, class Model>
  friend constexpr void detail::build_structured_chain_plan(Plan&, std::span<const std::size_t>,
                                                            std::span<const chain_operand>, const Model&,
                                                            inverse_policy);

  detail::plan_storage<std::size_t, dim_count> dims_{};
  detail::plan_storage<chain_operand, Matrices> operands_{};
  detail::plan_storage<structured_product, product_count> products_{};
  detail::plan_storage<char, order_capacity> order_{};
  detail::plan_storage<char, kernels_capacity> kernels_{};
  std::size_t order_length_ = 0, kernels_length_ = 0;
  std::uint64_t cost_ = 0, flops_ = 0, peak_temporary_elements_ = 0;
  matrix_kind result_kind_ = matrix_kind::general;
};

namespace detail {

using structured_message = fixed_string<chain_error::message_capacity>;

constexpr structured_message& append_operand(structured_message& m, std::size_t i, std::span<const std::size_t> dims) {
  return m.append("A").append(i + 1).append(" (").append(dims[i]).append("x").append(dims[i + 1]).append(")");
}

// Throws chain_argument_error unless there is one operand per matrix, every kind but general is
// square, every inverse is square, and operands that read one stored matrix agree on it.
constexpr void check_chain_operands(std::span<const std::size_t> dims, std::span<const chain_operand> operands) {
  if (dims.size() < 2) {
    throw chain_argument_error(
        "ordo::plan_structured_chain(dims, operands) requires at least 2 dims: d0..dn describe n >= 1 matrices");
  }
  if (operands.size() != dims.size() - 1) {
    structured_message m;
    m.append("ordo::plan_structured_chain(dims, operands): ").append(dims.size() - 1).append(" matrices but ");
    throw chain_argument_error(m.append(operands.size()).append(" operands").view());
  }
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const chain_operand& a = operands[i];
    if (dims[i] == dims[i + 1]) continue;
    if (a.kind != matrix_kind::general || a.inverted) {
      structured_message m;
      append_operand(m.append("ordo::plan_structured_chain: "), i, dims);
      m.append(a.inverted && a.kind == matrix_kind::general ? " is an inverse" : " is ");
      if (a.kind != matrix_kind::general) m.append(kind_name(a.kind));
      throw chain_argument_error(m.append(" but not square").view());
    }
  }
  for (std::size_t i = 0; i < operands.size(); ++i) {
    for (std::size_t j = i + 1; j < operands.size(); ++j) {
      const chain_operand &a = operands[i], &b = operands[j];
      if (a.source == 0 || a.source != b.source) continue;
      // The stored matrix's shape: an operand's own, swapped when it is transposed.
      const std::size_t a_rows = a.transposed ? dims[i + 1] : dims[i], a_cols = a.transposed ? dims[i] : dims[i + 1];
      const std::size_t b_rows = b.transposed ? dims[j + 1] : dims[j], b_cols = b.transposed ? dims[j] : dims[j + 1];
      if (a.kind != b.kind || a_rows != b_rows || a_cols != b_cols) {
        structured_message m;
        append_operand(m.append("ordo::plan_structured_chain: "), i, dims).append(" and ");
        append_operand(m, j, dims).append(" read stored matrix ").append(a.source);
        throw chain_argument_error(m.append(" but disagree on its kind or shape").view());
      }
    }
  }
}

constexpr void append_token(char* out, std::size_t& length, std::string_view token) {
  if (length > 0) out[length++] = ' ';
  for (const char c : token) out[length++] = c;
}

template <class Plan, class Model>
constexpr void build_structured_chain_plan(Plan& plan, std::span<const std::size_t> dims,
                                           std::span<const chain_operand> given, const Model& model,
                                           inverse_policy policy) {
  check_chain_operands(dims, given);
  const std::size_t n = dims.size() - 1;
  const bool allow_explicit = policy == inverse_policy::allow_explicit;
  resize_storage(plan.dims_, n + 1);
  for (std::size_t i = 0; i <= n; ++i) plan.dims_.data()[i] = dims[i];
  resize_storage(plan.operands_, n);
  for (std::size_t i = 0; i < n; ++i) plan.operands_.data()[i] = normalized(given[i]);
  const std::span<const chain_operand> operands(plan.operands_.data(), n);
  resize_storage(plan.kernels_, kernels_length_bound(n));
  resize_storage(plan.order_, order_length_bound(n));
  resize_storage(plan.products_, n - 1);

  if (n == 1) {
    plan.order_length_ = write_order(plan.products_.data(), n, plan.order_.data());
    plan.result_kind_ = effective_kind(operands[0]);
    if (operands[0].inverted) {
      if (!allow_explicit) {
        throw chain_argument_error(
            "ordo::plan_structured_chain: the chain is one inverse, which only an explicit inversion computes; pass "
            "ordo::inverse_policy::allow_explicit");
      }
      const kernel_call inversion{explicit_inverse_kernel(operands[0].kind), dims[0], dims[0], dims[0]};
      plan.cost_ = model(inversion);
      plan.flops_ = kernel_flops(inversion);
      append_token(plan.kernels_.data(), plan.kernels_length_, kernel_name(inversion.kernel));
    }
    return;
  }

  const structured_solution solution = solve_structured_chain(dims, operands, model, allow_explicit);
  if (!solution.feasible[n - 1]) {
    throw chain_argument_error(
        "ordo::plan_structured_chain: every order multiplies two inverses with no kernel between them (A^-1 B^-1); "
        "pass ordo::inverse_policy::allow_explicit, or write (B A)^-1");
  }
  if (solution.cost[n - 1] == saturated_cost) {
    throw chain_overflow_error("ordo::plan_structured_chain: the optimal cost does not fit in 64 bits");
  }
  plan.cost_ = solution.cost[n - 1];
  plan.result_kind_ = solution.kind[n - 1];
  const std::size_t* d = dims.data();
  const preorder_splits splits = structured_splits(solution);
  visit_products(n, splits,
                 [&](std::size_t index, std::size_t left, std::size_t right, std::size_t first, std::size_t k,
                     std::size_t last) {
                   const product_option& o = solution.choice[first * n + last];
                   const chain_factor l = solution.factor(operands, first, k), r = solution.factor(operands, k + 1, last);
                   plan.products_.data()[index] = {left,     right,           first,           last,
                                                   d[first], d[k + 1],        d[last + 1],     o.kernel,
                                                   o.side,   o.left_inverse,  o.right_inverse, solution.kind[first * n + last],
                                                   option_cost(model, o, l, r, d[first], d[k + 1], d[last + 1]), 0};
                 });
  plan.order_length_ = write_order(plan.products_.data(), n, plan.order_.data());
  plan.peak_temporary_elements_ = lay_out_workspace(plan.products_.data(), n);
  for (std::size_t p = 0; p + 1 < n; ++p) {
    const structured_product& step = plan.products_.data()[p];
    const std::size_t s = step.inner;
    const auto invert = [&](const chain_operand& operand) {
      const kernel_call inversion{explicit_inverse_kernel(operand.kind), s, s, s};
      plan.flops_ = clamp_add(plan.flops_, kernel_flops(inversion));
      append_token(plan.kernels_.data(), plan.kernels_length_, kernel_name(inversion.kernel));
    };
    if (step.left_inverse == inverse_use::explicit_inverse) invert(operands[step.left]);
    if (step.right_inverse == inverse_use::explicit_inverse) invert(operands[step.right]);
    plan.flops_ = clamp_add(plan.flops_, kernel_flops({step.kernel, step.rows, step.inner, step.cols}));
    append_token(plan.kernels_.data(), plan.kernels_length_, kernel_name(step.kernel));
  }
}

}  // namespace detail

// Plans the chain whose dims d0..dn are known at compile time, operand i being operands[i]
// (core/matrix_kind.hpp), under the cost model (predicted time by default). Usable in constant
// expressions. Throws ordo::chain_argument_error for operands that do not describe the chain (a
// structured or inverted operand that is not square, a count that differs, one stored matrix seen
// two ways) or when every order needs an explicit inverse that the policy forbids, and
// ordo::chain_overflow_error when the optimal cost does not fit in 64 bits.
template <std::size_t DimCount, chain_cost_model Model = cost_model::predicted_time>
constexpr structured_chain_plan<(DimCount >= 2 ? DimCount - 1 : 1)> plan_structured_chain(
    const std::array<std::size_t, DimCount>& dims,
    const std::array<chain_operand, (DimCount >= 2 ? DimCount - 1 : 1)>& operands, const Model& model = {},
    inverse_policy policy = inverse_policy::solve_only) {
  static_assert(DimCount >= 2, "ordo::plan_structured_chain(dims, operands) requires at least 2 dims");
  structured_chain_plan<(DimCount >= 2 ? DimCount - 1 : 1)> plan;
  detail::build_structured_chain_plan(plan, dims, operands, model, policy);
  return plan;
}

// The same for a chain known at run time.
template <chain_cost_model Model = cost_model::predicted_time>
constexpr structured_chain_plan<dynamic> plan_structured_chain(std::span<const std::size_t> dims,
                                                               std::span<const chain_operand> operands,
                                                               const Model& model = {},
                                                               inverse_policy policy = inverse_policy::solve_only) {
  structured_chain_plan<dynamic> plan;
  detail::build_structured_chain_plan(plan, dims, operands, model, policy);
  return plan;
}

}  // namespace ordo

#endif
