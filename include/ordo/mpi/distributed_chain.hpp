#ifndef ORDO_MPI_DISTRIBUTED_CHAIN_HPP
#define ORDO_MPI_DISTRIBUTED_CHAIN_HPP

// Matrix chains over MPI ranks: planned with communication in the cost (the generalized chain
// planner under ordo::cost_model::summa, core/distributed_cost_model.hpp) and evaluated with
// ScaLAPACK's p?gemm and p?gemv in the planned order (docs/distributed.md, "Chains across ranks"):
//
//   ordo::mpi::process_grid grid(MPI_COMM_WORLD);
//   distributed_matrix<double> a = ..., b = ..., x = ...;
//   auto y = ordo::mpi::multiply(a, ordo::mpi::transpose(b), x);   // planned on this grid, evaluated
//   ordo::mpi::oriented<double>{b, flag}                            // transposed when flag (run time)
//   auto plan = ordo::mpi::plan_chain(model, a, b, x);              // or: the plan, then
//   ordo::mpi::evaluate(plan, y, a, b, x);                          // the products into y
//   auto c = ordo::mpi::chain(a, b, x);                             // or: a chain held for later,
//   ordo::mpi::evaluate(c, y);  auto z = ordo::mpi::evaluate(c);    // planned when evaluated
//
// Collective over the grid's communicator. Every rank plans from the same shapes and the same
// model, and one allreduce checks that every rank holds the same plan and the same operands'
// shapes, grid and block: a mismatch throws ordo::mpi::error on every rank, never hangs. Operands
// are general matrices, each maybe transposed (ordo::mpi::transpose); the intermediates are
// allocated once, before the first product.

#include <ordo/core/distributed_cost_model.hpp>
#include <ordo/core/structured_chain.hpp>
#include <ordo/mpi/detail/communicator.hpp>
#include <ordo/mpi/detail/scalapack.hpp>
#include <ordo/mpi/distributed_matrix.hpp>
#include <ordo/mpi/error.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace ordo::mpi {

// A distributed matrix as a chain reads it: itself, or its transpose (p?gemm's 'T'; no data
// moves). ordo::mpi::transpose(m) makes the second; a plain distributed_matrix is the first.
template <class T>
struct oriented {
  using value_type = T;
  const distributed_matrix<T>& matrix;
  bool transposed = false;
};
template <class T>
oriented<T> transpose(const distributed_matrix<T>& m) noexcept {
  return {m, true};
}

namespace detail {

template <class X>
struct distributed_operand_traits {
  static constexpr bool is_operand = false;
};
template <class T>
struct distributed_operand_traits<distributed_matrix<T>> {
  static constexpr bool is_operand = true;
  using value_type = T;
  static const distributed_matrix<T>& matrix(const distributed_matrix<T>& m) noexcept { return m; }
  static bool is_transposed(const distributed_matrix<T>&) noexcept { return false; }
};
template <class T>
struct distributed_operand_traits<oriented<T>> {
  static constexpr bool is_operand = true;
  using value_type = T;
  static const distributed_matrix<T>& matrix(const oriented<T>& o) noexcept { return o.matrix; }
  static bool is_transposed(const oriented<T>& o) noexcept { return o.transposed; }
};

template <class X>
concept distributed_operand = distributed_operand_traits<std::remove_cvref_t<X>>::is_operand;

// Words of a message, appended piece by piece (numbers as decimals): g++ 12 at -O3 warns falsely
// (-Wrestrict, GCC bug 105329) on "literal" + std::string chains once they are inlined.
inline void append_piece(std::string& s, std::string_view piece) { s.append(piece); }
inline void append_piece(std::string& s, std::size_t number) { s.append(std::to_string(number)); }
template <class... Pieces>
std::string words(const Pieces&... pieces) {
  std::string s;
  (append_piece(s, pieces), ...);
  return s;
}

// FNV-1a of the plan's order and kernels and its cost: what every rank must agree on.
template <class Plan>
std::int64_t plan_hash(const Plan& plan) {
  std::uint64_t h = 14695981039346656037ULL;
  const auto mix = [&h](std::string_view text) {
    for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  };
  mix(plan.order());
  mix(plan.kernels());
  h ^= plan.cost();
  return static_cast<std::int64_t>(h >> 1);
}

}  // namespace detail

// The cost model for this grid and block: the model's machine numbers (flop time, alpha, beta),
// the grid's shape.
inline cost_model::summa grid_cost_model(const process_grid& grid, std::size_t block, cost_model::summa machine = {}) {
  machine.process_rows = static_cast<std::uint64_t>(grid.rows());
  machine.process_cols = static_cast<std::uint64_t>(grid.cols());
  machine.block = block;
  return machine;
}

namespace detail {

// The operands as oriented matrices of one scalar type (the variadic forms' first step).
template <distributed_operand... Operands>
auto oriented_all(const Operands&... operands) {
  using first = distributed_operand_traits<std::remove_cvref_t<std::tuple_element_t<0, std::tuple<Operands...>>>>;
  using T = typename first::value_type;
  static_assert((std::is_same_v<typename distributed_operand_traits<Operands>::value_type, T> && ...),
                "ordo::mpi: every operand of a chain must have the same scalar type");
  const auto orient = [](const auto& operand) {
    using traits = distributed_operand_traits<std::remove_cvref_t<decltype(operand)>>;
    return oriented<T>{traits::matrix(operand), traits::is_transposed(operand)};
  };
  return std::array<oriented<T>, sizeof...(Operands)>{orient(operands)...};
}

}  // namespace detail

// The plan of the operands (each a distributed_matrix, read transposed or not) on their grid,
// under `machine`'s flop time, alpha and beta. Collective: checks that the operands share one
// grid and block and that every rank computed the same plan.
template <class T>
structured_chain_plan<dynamic> plan_chain(cost_model::summa machine, std::span<const oriented<T>> operands) {
  constexpr const char* operation = "ordo::mpi::plan_chain";
  if (operands.empty()) throw error(std::string(operation) + ": a chain needs at least one operand");
  const distributed_matrix<T>& lead = operands[0].matrix;
  std::vector<std::size_t> dims(operands.size() + 1);
  std::vector<chain_operand> ops(operands.size());
  std::string problem;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const distributed_matrix<T>& m = operands[i].matrix;
    const bool t = operands[i].transposed;
    const std::size_t rows = t ? m.cols() : m.rows(), cols = t ? m.rows() : m.cols();
    const std::string name = detail::words("A", i + 1, " (", rows, "x", cols, ")");
    if (problem.empty() && !(m.grid() == lead.grid())) problem = detail::words(name, " lives on another process grid than A1");
    if (problem.empty() && m.block() != lead.block()) {
      problem = detail::words(name, " is in blocks of ", m.block(), " but A1 in blocks of ", lead.block());
    }
    if (problem.empty() && i > 0 && dims[i] != rows) {
      problem = detail::words("A", i, " has ", dims[i], " columns but ", name, " has ", rows, " rows");
    }
    if (i == 0) dims[0] = rows;
    dims[i + 1] = cols;
    ops[i] = ordo::operands::general;
    ops[i].transposed = t;
  }
  std::optional<structured_chain_plan<dynamic>> plan;
  std::exception_ptr failure;
  if (!problem.empty()) {
    failure = std::make_exception_ptr(error(std::string(operation) + ": " + problem));
  } else {
    plan = plan_structured_chain(std::span<const std::size_t>(dims), std::span<const chain_operand>(ops),
                                 grid_cost_model(lead.grid(), lead.block(), machine));
  }
  const detail::errors_return_scope scope(lead.grid().comm(), operation);
  detail::check_agreement<1>(lead.grid().comm(), operation,
                             {{{"the plan (a hash of its order, kernels and cost)", plan ? detail::plan_hash(*plan) : 0,
                                nullptr}}},
                             failure);
  return *plan;
}
template <detail::distributed_operand... Operands>
structured_chain_plan<dynamic> plan_chain(cost_model::summa machine, const Operands&... operands) {
  const auto all = detail::oriented_all(operands...);
  return plan_chain(machine, std::span<const typename decltype(all)::value_type>(all));
}
template <detail::distributed_operand... Operands>
structured_chain_plan<dynamic> plan_chain(const Operands&... operands) {
  return plan_chain(cost_model::summa{}, operands...);
}

namespace detail {

template <class T>
struct distributed_node {
  const distributed_matrix<T>* matrix = nullptr;
  bool transposed = false;
  std::size_t rows() const { return transposed ? matrix->cols() : matrix->rows(); }
  std::size_t cols() const { return transposed ? matrix->rows() : matrix->cols(); }
};

// c = op(a) op(b): p?gemv for a matrix times a stored column, p?gemm otherwise.
template <class T>
void distributed_product(const distributed_node<T>& a, const distributed_node<T>& b, distributed_matrix<T>& c) {
  const int m = static_cast<int>(c.rows()), n = static_cast<int>(c.cols()), k = static_cast<int>(a.cols()), one = 1;
  const T alpha(1), beta(0);
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::fill(c.local_data(), c.local_data() + c.local_rows() * c.local_cols(), T(0));
    return;
  }
  const char ta = a.transposed ? 'T' : 'N', tb = b.transposed ? 'T' : 'N';
  if (n == 1 && !b.transposed && m > 1) {
    const int rows = static_cast<int>(a.matrix->rows()), cols = static_cast<int>(a.matrix->cols());
    pblas<T>::gemv(&ta, &rows, &cols, &alpha, a.matrix->local_data(), &one, &one, a.matrix->descriptor(),
                   b.matrix->local_data(), &one, &one, b.matrix->descriptor(), &one, &beta, c.local_data(), &one, &one,
                   c.descriptor(), &one);
    return;
  }
  pblas<T>::gemm(&ta, &tb, &m, &n, &k, &alpha, a.matrix->local_data(), &one, &one, a.matrix->descriptor(),
                 b.matrix->local_data(), &one, &one, b.matrix->descriptor(), &beta, c.local_data(), &one, &one,
                 c.descriptor());
}

}  // namespace detail

// result = the chain the plan describes (plan_chain of the same operands). Collective: a result
// on another grid, in another block, or of another shape throws ordo::mpi::error on every rank.
template <std::size_t Matrices, class T>
void evaluate(const structured_chain_plan<Matrices>& plan, distributed_matrix<T>& result,
              std::span<const oriented<T>> operands) {
  constexpr const char* operation = "ordo::mpi::evaluate";
  const std::size_t n = plan.matrices();
  std::vector<detail::distributed_node<T>> nodes;
  nodes.reserve(2 * n);
  bool aliases = false;
  std::string problem;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const distributed_matrix<T>& m = operands[i].matrix;
    nodes.push_back({&m, operands[i].transposed});
    if (problem.empty() && i < n &&
        (nodes.back().rows() != plan.dims()[i] || nodes.back().cols() != plan.dims()[i + 1] ||
         plan.operands()[i].transposed != nodes.back().transposed)) {
      problem = detail::words("A", i + 1, " is not the plan's operand ", i + 1);
    }
    if (problem.empty() && (!(m.grid() == result.grid()) || m.block() != result.block())) {
      problem = detail::words("A", i + 1, " and the result live on different grids or in different blocks");
    }
    aliases = aliases || &m == &result;  // each matrix owns its blocks: sharing them means being the same object
  }
  if (problem.empty() && operands.size() != n) {
    problem = detail::words("the plan has ", n, " operands but ", operands.size(), " were given");
  }
  if (problem.empty() && (result.rows() != plan.rows() || result.cols() != plan.cols())) {
    problem = detail::words("the chain's result is ", plan.rows(), "x", plan.cols(), " but the result matrix is ",
                            result.rows(), "x", result.cols());
  }
  {
    const detail::errors_return_scope scope(result.grid().comm(), operation);
    detail::check_agreement<1>(
        result.grid().comm(), operation, {{{"the plan (a hash of its order, kernels and cost)", detail::plan_hash(plan), nullptr}}},
        problem.empty() ? std::exception_ptr{} : std::make_exception_ptr(error(std::string(operation) + ": " + problem)));
  }
  if (n == 1) {  // a single operand: the result is its copy, transposed if the plan says so
    const std::vector<T> whole = nodes[0].matrix->gather();  // row-major on rank 0, as stored
    std::vector<T> values(whole.size());
    const std::size_t r = nodes[0].rows(), c = nodes[0].cols();
    for (std::size_t i = 0; i < r && !whole.empty(); ++i)
      for (std::size_t j = 0; j < c; ++j) values[i * c + j] = nodes[0].transposed ? whole[j * r + i] : whole[i * c + j];
    result = distributed_matrix<T>::scatter(result.grid(), values, r, c, result.block());
    return;
  }
  // The intermediates, allocated once before the first product; the root goes to the result, or
  // to a temporary when the result is also an operand.
  const auto products = plan.products();
  std::vector<distributed_matrix<T>> temporaries;
  temporaries.reserve(products.size());
  for (std::size_t p = 0; p + 1 < products.size(); ++p) {
    temporaries.emplace_back(result.grid(), products[p].rows, products[p].cols, result.block());
  }
  std::optional<distributed_matrix<T>> aside;
  if (aliases) aside.emplace(result.grid(), result.rows(), result.cols(), result.block());
  for (std::size_t p = 0; p < products.size(); ++p) {
    const bool root = p + 1 == products.size();
    distributed_matrix<T>& c = root ? (aside ? *aside : result) : temporaries[p];
    detail::distributed_product(nodes[products[p].left], nodes[products[p].right], c);
    nodes.push_back({&c, false});
  }
  if (aside) result = std::move(*aside);
}
template <std::size_t Matrices, class T, detail::distributed_operand... Operands>
void evaluate(const structured_chain_plan<Matrices>& plan, distributed_matrix<T>& result, const Operands&... operands) {
  const auto all = detail::oriented_all(operands...);
  static_assert(std::is_same_v<typename decltype(all)::value_type, oriented<T>>,
                "ordo::mpi::evaluate(plan, result, operands...): every operand must have the result's scalar type");
  evaluate(plan, result, std::span<const oriented<T>>(all));
}

// The product of the operands, planned on their grid under `machine` (or the default model) and
// evaluated into a new distributed matrix in the operands' block.
template <class T>
distributed_matrix<T> multiply(cost_model::summa machine, std::span<const oriented<T>> operands) {
  const auto plan = plan_chain(machine, operands);
  const distributed_matrix<T>& lead = operands[0].matrix;
  distributed_matrix<T> result(lead.grid(), plan.rows(), plan.cols(), lead.block());
  evaluate(plan, result, operands);
  return result;
}
template <detail::distributed_operand... Operands>
auto multiply(cost_model::summa machine, const Operands&... operands) {
  const auto all = detail::oriented_all(operands...);
  return multiply(machine, std::span<const typename decltype(all)::value_type>(all));
}
template <detail::distributed_operand... Operands>
auto multiply(const Operands&... operands) {
  return multiply(cost_model::summa{}, operands...);
}

// A chain of distributed operands held for later: ordo::mpi::chain(a, transpose(b), x), then
// evaluate(c) for a new matrix or evaluate(c, result), each planned on the operands' grid under
// the given model. The operands are referenced, not copied: they must outlive the chain.
template <class T, std::size_t N>
class distributed_chain {
 public:
  explicit distributed_chain(const std::array<oriented<T>, N>& operands) : operands_(operands) {}
  std::span<const oriented<T>> operands() const noexcept { return operands_; }
  structured_chain_plan<dynamic> plan(cost_model::summa machine = {}) const { return plan_chain(machine, operands()); }

 private:
  std::array<oriented<T>, N> operands_;
};

template <detail::distributed_operand... Operands>
auto chain(const Operands&... operands) {
  const auto all = detail::oriented_all(operands...);
  return distributed_chain<typename decltype(all)::value_type::value_type, sizeof...(Operands)>(all);
}

template <class T, std::size_t N>
void evaluate(const distributed_chain<T, N>& c, distributed_matrix<T>& result, cost_model::summa machine = {}) {
  evaluate(c.plan(machine), result, c.operands());
}
template <class T, std::size_t N>
distributed_matrix<T> evaluate(const distributed_chain<T, N>& c, cost_model::summa machine = {}) {
  return multiply(machine, c.operands());
}

// A distributed matrix in a single-node expression (ordo::matrix's operator*) is a mistake that
// would otherwise read as "no operator*": say what to write instead.
template <class Left, class Right>
  requires(detail::distributed_operand<Left> || detail::distributed_operand<Right>)
void operator*(const Left&, const Right&) {
  static_assert(!std::is_same_v<Left, Left>,
                "ordo::mpi: operator*: a distributed_matrix does not join single-node expressions; multiply "
                "distributed matrices with ordo::mpi::multiply(a, b, ...) (or plan_chain and evaluate)");
}

}  // namespace ordo::mpi

#endif
