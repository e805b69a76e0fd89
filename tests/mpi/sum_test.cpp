// ordo::mpi::sum and mean across 1 to 4 ranks: the exact policy gives the correctly rounded sum
// of the concatenation (checked against big-integer arithmetic), so the same bits for every rank
// count and every split; every rank returns the same value; mismatches throw on every rank.

#include "mpi_support.hpp"

#include <ordo/core/float16.hpp>
#include <ordo/mpi/sum.hpp>
#include <support/exact_reference.hpp>
#include <support/execution_spaces.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

// Values that make naive, pairwise and rank-by-rank sums differ: magnitudes from 1e-8 to 1e8
// of both signs, and pairs that cancel.
template <class T>
std::vector<T> awkward_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(-27, 27);
  std::vector<T> values;
  values.reserve(n);
  while (values.size() < n) {
    const double v = std::ldexp(mantissa(random), exponent(random)) * (random() % 2 ? 1 : -1);
    values.push_back(static_cast<T>(v));
    if (values.size() < n && random() % 7 == 0) values.push_back(static_cast<T>(-v * 0.999));
  }
  return values;
}

template <class Space, class T>
Kokkos::View<T*, typename Space::memory_space> part_view(const std::vector<T>& all, std::int64_t begin,
                                                          std::int64_t end) {
  Kokkos::View<T*, typename Space::memory_space> v("part", static_cast<std::size_t>(end - begin));
  auto host = Kokkos::create_mirror_view(v);
  for (std::int64_t i = begin; i < end; ++i) host(static_cast<std::size_t>(i - begin)) = all[static_cast<std::size_t>(i)];
  Kokkos::deep_copy(v, host);
  return v;
}

template <class Space, class T>
void check_exact_for_every_rank_count_and_split(const std::vector<T>& all) {
  ordo_test::big_integer exact;
  for (T v : all) exact += ordo_test::big_integer::scaled(v);
  for (int ranks = 1; ranks <= ordo_test::world_size(); ++ranks) {
    const ordo_test::first_ranks group(ranks);
    if (!group.member()) continue;
    const MPI_Comm comm = group.get();
    for (const auto s : ordo_test::all_splits()) {
      CAPTURE(ranks);
      CAPTURE(ordo_test::split_name(s));
      const auto range = ordo_test::cut(static_cast<std::int64_t>(all.size()), ranks,
                                        s)[static_cast<std::size_t>(ordo_test::rank_in(comm))];
      const auto x = part_view<Space>(all, range.first, range.second);
      const T total = ordo::mpi::sum(comm, x);
      const double total_in_double = ordo::mpi::sum<double>(comm, x);
      const T average = ordo::mpi::mean(comm, x);
      CHECK(ordo_test::is_correctly_rounded(total, exact));
      CHECK(ordo_test::is_correctly_rounded(total_in_double, exact));
      CHECK(ordo_test::is_correctly_rounded(average, exact, all.size()));
      CHECK(ordo_test::same_on_every_rank(comm, total));
      CHECK(ordo_test::same_on_every_rank(comm, average));
    }
  }
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("exact sums and means: correctly rounded, the same bits for any rank count and split",
                          ExecutionSpace, exact_id) {
  SUBCASE("float") { check_exact_for_every_rank_count_and_split<ExecutionSpace>(awkward_values<float>(20011, 1)); }
  SUBCASE("double") { check_exact_for_every_rank_count_and_split<ExecutionSpace>(awkward_values<double>(20011, 2)); }
  SUBCASE("equal to ordo::sum of the concatenation") {
    const auto all = awkward_values<float>(5003, 3);
    Kokkos::View<float*, typename ExecutionSpace::memory_space> whole = part_view<ExecutionSpace>(
        all, 0, static_cast<std::int64_t>(all.size()));
    const float single = ordo::sum(whole);
    const int p = ordo_test::world_size();
    const auto range = ordo_test::cut(static_cast<std::int64_t>(all.size()), p, ordo_test::split::skewed)
        [static_cast<std::size_t>(ordo_test::world_rank())];
    const float across = ordo::mpi::sum(MPI_COMM_WORLD, part_view<ExecutionSpace>(all, range.first, range.second));
    CHECK(std::memcmp(&single, &across, sizeof single) == 0);
  }
  SUBCASE("bfloat16 and half storage, summed in float") {
    std::vector<ordo::bfloat16> b;
    std::vector<ordo::half> h;
    ordo_test::big_integer exact_b, exact_h;
    for (float v : awkward_values<float>(4099, 4)) {
      const float small = v * 1e-4f;  // inside half's range
      b.push_back(ordo::bfloat16(v));
      h.push_back(ordo::half(small));
      exact_b += ordo_test::big_integer::scaled(static_cast<float>(b.back()));
      exact_h += ordo_test::big_integer::scaled(static_cast<float>(h.back()));
    }
    const int p = ordo_test::world_size();
    const auto range = ordo_test::cut(static_cast<std::int64_t>(b.size()), p, ordo_test::split::second_rank_empty)
        [static_cast<std::size_t>(ordo_test::world_rank())];
    CHECK(ordo_test::is_correctly_rounded(
        ordo::mpi::sum(MPI_COMM_WORLD, part_view<ExecutionSpace>(b, range.first, range.second)), exact_b));
    CHECK(ordo_test::is_correctly_rounded(
        ordo::mpi::sum(MPI_COMM_WORLD, part_view<ExecutionSpace>(h, range.first, range.second)), exact_h));
  }
  SUBCASE("infinities and NaN on one rank reach every rank") {
    const int rank = ordo_test::world_rank(), last = ordo_test::world_size() - 1;
    std::vector<double> mine{1.0, 2.0};
    if (rank == last) mine.push_back(std::numeric_limits<double>::infinity());
    CHECK(ordo::mpi::sum(MPI_COMM_WORLD, part_view<ExecutionSpace>(mine, 0, 3 - (rank != last))) ==
          std::numeric_limits<double>::infinity());
    if (rank == 0) mine.push_back(-std::numeric_limits<double>::infinity());
    const auto n = static_cast<std::int64_t>(mine.size());
    CHECK(std::isnan(ordo::mpi::sum(MPI_COMM_WORLD, part_view<ExecutionSpace>(mine, 0, n))));
  }
  SUBCASE("empty everywhere: the sum is +0 and the mean throws on every rank") {
    const Kokkos::View<double*, typename ExecutionSpace::memory_space> empty("empty", 0);
    const double s = ordo::mpi::sum(MPI_COMM_WORLD, empty);
    CHECK(s == 0.0);
    CHECK_FALSE(std::signbit(s));
    CHECK_THROWS_WITH_AS(ordo::mpi::mean(MPI_COMM_WORLD, empty), "ordo::mpi::mean: empty range on every rank",
                         std::domain_error);
  }
}
ORDO_TEST_ALL_SPACES(exact_id);

TEST_CASE_TEMPLATE_DEFINE("other policies: the same value on every rank, within their error bounds", ExecutionSpace,
                          policies_id) {
  const auto all = awkward_values<double>(20011, 5);
  ordo_test::big_integer exact;
  double magnitude = 0;
  long double reference = 0;
  for (double v : all) {
    exact += ordo_test::big_integer::scaled(v);
    magnitude += std::fabs(v);
    reference += v;
  }
  const int p = ordo_test::world_size();
  const auto range = ordo_test::cut(static_cast<std::int64_t>(all.size()), p, ordo_test::split::skewed)
      [static_cast<std::size_t>(ordo_test::world_rank())];
  const auto x = part_view<ExecutionSpace>(all, range.first, range.second);
  // Naive's bound (n - 1) u sum |x| holds for any order of the additions, the ranks' included.
  const double bound = static_cast<double>(all.size()) * std::ldexp(1.0, -53) * magnitude;
  const double sums[] = {ordo::mpi::sum(MPI_COMM_WORLD, x, ordo::summation::naive),
                         ordo::mpi::sum(MPI_COMM_WORLD, x, ordo::summation::pairwise),
                         ordo::mpi::sum(MPI_COMM_WORLD, x, ordo::summation::kahan),
                         ordo::mpi::sum(MPI_COMM_WORLD, x, ordo::summation::neumaier),
                         ordo::mpi::mean(MPI_COMM_WORLD, x, ordo::summation::kahan) * static_cast<double>(all.size())};
  for (double s : sums) {
    CHECK(std::fabs(static_cast<long double>(s) - reference) <= bound);
    CHECK(ordo_test::same_on_every_rank(MPI_COMM_WORLD, s));
  }
  // On an instance given explicitly: the same bits as on the View's default instance.
  const ExecutionSpace instance;
  CHECK(ordo::mpi::sum(instance, MPI_COMM_WORLD, x, ordo::summation::kahan) == sums[2]);
  CHECK(ordo::mpi::sum(instance, MPI_COMM_WORLD, x) == ordo::mpi::sum(MPI_COMM_WORLD, x));
  CHECK(ordo::mpi::mean(instance, MPI_COMM_WORLD, x) == ordo::mpi::mean(MPI_COMM_WORLD, x));
}
ORDO_TEST_ALL_SPACES(policies_id);

TEST_CASE("mismatches throw ordo::mpi::error on every rank, naming what each saw") {
  using host = Kokkos::DefaultHostExecutionSpace;
  const int rank = ordo_test::world_rank();
  const Kokkos::View<float*, host::memory_space> f("f", 3);
  const Kokkos::View<double*, host::memory_space> d("d", 3);
  if (ordo_test::world_size() > 1) {
    const std::string mine = rank == 0 ? "float" : "double";
    const std::string expected = "ordo::mpi::sum: the ranks disagree on the value type of x: this rank has " + mine +
                                 ", the ranks have float to double";
    CHECK_THROWS_WITH_AS(rank == 0 ? ordo::mpi::sum<double>(MPI_COMM_WORLD, f) : ordo::mpi::sum<double>(MPI_COMM_WORLD, d),
                         expected.c_str(), ordo::mpi::error);
    const std::string policy = rank == 0 ? "summation::naive" : "summation::exact";
    const std::string expected_policy = "ordo::mpi::mean: the ranks disagree on the summation policy: this rank has " +
                                        policy + ", the ranks have summation::naive to summation::exact";
    CHECK_THROWS_WITH_AS(rank == 0 ? ordo::mpi::mean(MPI_COMM_WORLD, d, ordo::summation::naive)
                                   : ordo::mpi::mean(MPI_COMM_WORLD, d),
                         expected_policy.c_str(), ordo::mpi::error);
  }
  // The communicator still works after the errors.
  CHECK(ordo::mpi::sum(MPI_COMM_WORLD, d) == 0.0);
  CHECK_THROWS_WITH_AS(ordo::mpi::sum(MPI_COMM_NULL, d), "ordo::mpi::sum: the communicator is MPI_COMM_NULL",
                       ordo::mpi::error);
}

TEST_CASE("an MPI error code becomes ordo::mpi::error with MPI's own text") {
  try {
    ordo::mpi::detail::check(MPI_ERR_COMM, "ordo::mpi::test", "MPI_Allreduce");
    FAIL("no exception");
  } catch (const ordo::mpi::error& e) {
    const std::string what = e.what();
    CHECK(what.rfind("ordo::mpi::test: MPI_Allreduce failed: ", 0) == 0);
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(MPI_ERR_COMM, text, &length);
    CHECK(what.find(std::string(text, static_cast<std::size_t>(length))) != std::string::npos);
    CHECK(e.mpi_code() == MPI_ERR_COMM);
  }
  // A real failing call: a negative count.
  int value = 0;
  MPI_Errhandler previous;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &previous);
  {
    const ordo::mpi::detail::errors_return_scope scope(MPI_COMM_WORLD, "ordo::mpi::test");
    CHECK_THROWS_AS(ordo::mpi::detail::check(MPI_Allreduce(MPI_IN_PLACE, &value, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                                             "ordo::mpi::test", "MPI_Allreduce"),
                    ordo::mpi::error);
  }
  MPI_Errhandler now;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &now);
  CHECK(now == previous);  // the user's handler is back
  MPI_Errhandler_free(&previous);
  MPI_Errhandler_free(&now);
}
