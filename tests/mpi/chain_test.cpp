// Distributed chains (mpi/distributed_chain.hpp) under mpirun with 1 to 4 ranks, on every process
// grid of every rank count up to the world's: random chains of integer matrices equal a 64-bit
// integer product computed on one rank (exact, so any lost or misplaced block shows), every rank
// holds the same plan, the order changes with the grid as the model says, and bad input throws
// ordo::mpi::error on every rank. Built into mpi_sum_test (one executable, one mpirun per count).
#include <ordo/mpi/distributed_chain.hpp>

#include "mpi_support.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace {

using ordo::mpi::distributed_matrix;
using ordo::mpi::process_grid;
using integer_matrix = std::vector<std::vector<std::int64_t>>;  // row-major

integer_matrix random_integers(std::size_t rows, std::size_t cols, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> value(-3, 3);
  integer_matrix m(rows, std::vector<std::int64_t>(cols));
  for (auto& row : m)
    for (auto& e : row) e = value(rng);
  return m;
}
integer_matrix transposed(const integer_matrix& m, std::size_t rows, std::size_t cols) {
  integer_matrix t(cols, std::vector<std::int64_t>(rows));
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) t[j][i] = m[i][j];
  return t;
}
integer_matrix product(const integer_matrix& a, const integer_matrix& b, std::size_t inner, std::size_t cols) {
  integer_matrix c(a.size(), std::vector<std::int64_t>(cols, 0));
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t k = 0; k < inner; ++k)
      for (std::size_t j = 0; j < cols; ++j) c[i][j] += a[i][k] * b[k][j];
  return c;
}
template <class T>
std::vector<T> flat(const integer_matrix& m) {
  std::vector<T> values;
  for (const auto& row : m)
    for (const auto e : row) values.push_back(static_cast<T>(e));
  return values;
}

// Every pr x pc grid of `ranks` ranks.
std::vector<std::pair<int, int>> grids_of(int ranks) {
  std::vector<std::pair<int, int>> grids;
  for (int r = 1; r <= ranks; ++r)
    if (ranks % r == 0) grids.push_back({r, ranks / r});
  return grids;
}

// One random chain of n operands (the same on every rank: same seed), its distributed product
// gathered on rank 0 against the integer product of the operands as written: through
// ordo::mpi::multiply on a span of operands, and through ordo::mpi::chain and evaluate.
template <class T>
void check_random_chain(const process_grid& grid, std::size_t n, std::mt19937_64& rng) {
  constexpr std::size_t extents[] = {1, 2, 3, 5, 8, 13, 17};
  std::uniform_int_distribution<std::size_t> pick(0, 6), block_pick(1, 4), coin(0, 2);
  std::vector<std::size_t> dims(n + 1);
  for (auto& d : dims) d = extents[pick(rng)];
  const std::size_t block = block_pick(rng);
  std::vector<bool> transposed_operand(n);
  std::vector<integer_matrix> stored;
  integer_matrix reference;
  for (std::size_t i = 0; i < n; ++i) {
    transposed_operand[i] = coin(rng) == 0;
    const std::size_t rows = transposed_operand[i] ? dims[i + 1] : dims[i], cols = transposed_operand[i] ? dims[i] : dims[i + 1];
    stored.push_back(random_integers(rows, cols, rng));
    const integer_matrix as_written = transposed_operand[i] ? transposed(stored[i], rows, cols) : stored[i];
    reference = i == 0 ? as_written : product(reference, as_written, dims[i], dims[i + 1]);
  }
  std::vector<distributed_matrix<T>> operands;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t rows = stored[i].size(), cols = stored[i].empty() ? 0 : stored[i][0].size();
    operands.push_back(distributed_matrix<T>::scatter(grid, flat<T>(stored[i]), rows, cols, block));
  }
  std::vector<ordo::mpi::oriented<T>> oriented;
  for (std::size_t i = 0; i < n; ++i) oriented.push_back({operands[i], transposed_operand[i]});
  const std::vector<T> gathered =
      ordo::mpi::multiply(ordo::cost_model::summa{}, std::span<const ordo::mpi::oriented<T>>(oriented)).gather();
  if (ordo_test::rank_in(grid.comm()) == 0) {
    const std::vector<T> expected = flat<T>(reference);
    CAPTURE(n);
    CAPTURE(block);
    CHECK(gathered == expected);
  }
}

// The variadic forms on a three-operand chain: ordo::mpi::chain, evaluate(chain, result),
// evaluate(chain), plan_chain + evaluate(plan, result, operands...).
template <class T>
void check_variadic_forms(const process_grid& grid, std::mt19937_64& rng) {
  const integer_matrix a = random_integers(5, 7, rng), b = random_integers(3, 7, rng), c = random_integers(3, 4, rng);
  const auto da = distributed_matrix<T>::scatter(grid, flat<T>(a), 5, 7, 2),
             db = distributed_matrix<T>::scatter(grid, flat<T>(b), 3, 7, 2),
             dc = distributed_matrix<T>::scatter(grid, flat<T>(c), 3, 4, 2);
  const std::vector<T> expected = flat<T>(product(product(a, transposed(b, 3, 7), 7, 3), c, 3, 4));
  const auto held = ordo::mpi::chain(da, ordo::mpi::transpose(db), dc);
  distributed_matrix<T> into(grid, 5, 4, 2);
  ordo::mpi::evaluate(held, into);
  const std::vector<T> from_chain = into.gather(), from_new = ordo::mpi::evaluate(held).gather();
  const auto plan = ordo::mpi::plan_chain(da, ordo::mpi::transpose(db), dc);
  distributed_matrix<T> planned(grid, 5, 4, 2);
  ordo::mpi::evaluate(plan, planned, da, ordo::mpi::transpose(db), dc);
  const std::vector<T> from_plan = planned.gather();
  if (ordo_test::rank_in(grid.comm()) == 0) {
    CHECK(from_chain == expected);
    CHECK(from_new == expected);
    CHECK(from_plan == expected);
  }
}

}  // namespace

TEST_CASE("distributed chains equal the integer product exactly, on every grid of 1 to 4 ranks") {
  // BLACS initializes itself over MPI_COMM_WORLD at its first call, on every rank: a grid of the
  // world first (process_grid.hpp).
  const process_grid world(MPI_COMM_WORLD);
  for (int ranks = 1; ranks <= ordo_test::world_size(); ++ranks) {
    const ordo_test::first_ranks comm(ranks);
    if (!comm.member()) continue;
    for (const auto& shape : grids_of(ranks)) {
      const int rows = shape.first, cols = shape.second;  // (clang 14 lambdas cannot capture bindings)
      CAPTURE(rows);
      CAPTURE(cols);
      const process_grid grid(comm.get(), rows, cols);
      std::mt19937_64 rng(static_cast<std::uint64_t>(100 * rows + cols));  // the same on every rank
      for (int trial = 0; trial < 4; ++trial) {
        for (const std::size_t n : std::array<std::size_t, 4>{1, 2, 3, 5}) check_random_chain<double>(grid, n, rng);
        // float: |values| < 17^3 3^4 < 2^24, exact
        for (const std::size_t n : std::array<std::size_t, 2>{2, 4}) check_random_chain<float>(grid, n, rng);
      }
      check_variadic_forms<double>(grid, rng);
    }
  }
}

TEST_CASE("distributed matrices: scatter, gather and element access on the owning rank") {
  const process_grid grid(MPI_COMM_WORLD);
  std::vector<double> values(7 * 5);
  for (std::size_t e = 0; e < values.size(); ++e) values[e] = static_cast<double>(e);
  auto a = distributed_matrix<double>::scatter(grid, values, 7, 5, 2);
  std::size_t owned = 0;
  for (std::size_t i = 0; i < 7; ++i) {
    for (std::size_t j = 0; j < 5; ++j) {
      if (a.owns(i, j)) {
        CHECK(a.at(i, j) == static_cast<double>(i * 5 + j));
        a.at(i, j) += 100;
        ++owned;
      } else {
        CHECK_THROWS_WITH_AS(static_cast<void>(a.at(i, j)),
                             ("ordo::mpi::distributed_matrix::at(" + std::to_string(i) + ", " + std::to_string(j) +
                              "): rank " + std::to_string(a.owner(i, j)) + " holds the element, not rank " +
                              std::to_string(ordo_test::world_rank()))
                                 .c_str(),
                             ordo::mpi::error);
      }
    }
  }
  CHECK(owned == a.local_rows() * a.local_cols());
  const std::vector<double> back = a.gather();
  if (ordo_test::world_rank() == 0) {
    for (std::size_t e = 0; e < values.size(); ++e) CHECK(back[e] == values[e] + 100);
  } else {
    CHECK(back.empty());
  }
}

TEST_CASE("distributed chains: the best order on a 2 x 2 grid differs from one rank's, and every rank holds the same plan") {
  // 100 x 50 x 100 x 400 (docs/distributed.md): one rank multiplies (A1(A2A3)) (fewer flops); on
  // 2 x 2 SUMMA's broadcasts of the 400-wide panels make ((A1A2)A3) cheaper under this model.
  const ordo::cost_model::summa machine{1, 1, 64, 100'000, 20'000'000'000, 1'000'000, 8};
  for (int ranks : {1, 4}) {
    if (ranks > ordo_test::world_size()) continue;
    const ordo_test::first_ranks comm(ranks);
    if (!comm.member()) continue;
    const process_grid grid(comm.get());
    const distributed_matrix<double> a1(grid, 100, 50, 8), a2(grid, 50, 100, 8), a3(grid, 100, 400, 8);
    const auto plan = ordo::mpi::plan_chain(machine, a1, a2, a3);
    CHECK(plan.order() == (ranks == 1 ? "(A1(A2A3))" : "((A1A2)A3)"));
    const std::string order(plan.order());
    CHECK(ordo_test::same_on_every_rank(comm.get(), order.data(), order.size()));
  }
  // A rank that plans under another model would multiply in another order: every rank throws.
  if (ordo_test::world_size() == 4) {
    const process_grid grid(MPI_COMM_WORLD);
    const distributed_matrix<double> a1(grid, 100, 50, 8), a2(grid, 50, 100, 8), a3(grid, 100, 400, 8);
    ordo::cost_model::summa mine = machine;
    if (ordo_test::world_rank() == 0) mine.alpha_fs = 0, mine.beta_fs_per_byte = 0;  // rank 0: flops only
    CHECK_THROWS_WITH_AS(static_cast<void>(ordo::mpi::plan_chain(mine, a1, a2, a3)),
                         doctest::Contains("ordo::mpi::plan_chain: the ranks disagree on the plan"), ordo::mpi::error);
  }
}

TEST_CASE("distributed chains: bad grids, shapes and blocks throw ordo::mpi::error on every rank") {
  const int size = ordo_test::world_size();
  CHECK_THROWS_WITH_AS(process_grid(MPI_COMM_WORLD, size + 1, 2),
                       ("ordo::mpi::process_grid: a " + std::to_string(size + 1) + "x2 grid needs " +
                        std::to_string(2 * (size + 1)) + " ranks but the communicator has " + std::to_string(size))
                           .c_str(),
                       ordo::mpi::error);
  const process_grid grid(MPI_COMM_WORLD);
  const distributed_matrix<double> a(grid, 5, 4, 2), b(grid, 5, 3, 2), c(grid, 4, 3, 3);
  CHECK_THROWS_WITH_AS(static_cast<void>(ordo::mpi::plan_chain(a, b)),
                       "ordo::mpi::plan_chain: A1 has 4 columns but A2 (5x3) has 5 rows", ordo::mpi::error);
  CHECK_THROWS_WITH_AS(static_cast<void>(ordo::mpi::plan_chain(a, c)),
                       "ordo::mpi::plan_chain: A2 (4x3) is in blocks of 3 but A1 in blocks of 2", ordo::mpi::error);
  // Shapes that differ between ranks: caught when the matrix is made, on every rank.
  if (size > 1) {
    const std::size_t rows = ordo_test::world_rank() == 0 ? 6 : 5;
    CHECK_THROWS_WITH_AS(distributed_matrix<double>(grid, rows, 4, 2),
                         doctest::Contains("the ranks disagree on the matrix's rows"), ordo::mpi::error);
  }
  // A result of the wrong shape, and root's values of the wrong size.
  const auto plan = ordo::mpi::plan_chain(ordo::mpi::transpose(a), b);
  distributed_matrix<double> wrong(grid, 3, 4, 2);
  CHECK_THROWS_WITH_AS(ordo::mpi::evaluate(plan, wrong, ordo::mpi::transpose(a), b),
                       "ordo::mpi::evaluate: the chain's result is 4x3 but the result matrix is 3x4", ordo::mpi::error);
  const std::vector<double> too_few(ordo_test::world_rank() == 0 ? 3 : 0);
  if (ordo_test::world_rank() == 0) {
    CHECK_THROWS_WITH_AS(static_cast<void>(distributed_matrix<double>::scatter(grid, too_few, 2, 2)),
                         "ordo::mpi::distributed_matrix::scatter: rank 0 holds 3 values for a 2x2 matrix",
                         ordo::mpi::error);
  } else {
    CHECK_THROWS_WITH_AS(static_cast<void>(distributed_matrix<double>::scatter(grid, too_few, 2, 2)),
                         doctest::Contains("another rank rejected its arguments"), ordo::mpi::error);
  }
}
