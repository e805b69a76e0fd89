#include <ordo/kernels/execution.hpp>

#include "support/execution_spaces.hpp"

#include <cstdlib>
#include <sstream>
#include <string>

#if defined(KOKKOS_ENABLE_OPENMP)
#include <omp.h>
#endif

namespace {
int expected_threads() {
  const char* value = std::getenv("ORDO_TEST_THREADS");
  return value != nullptr ? std::atoi(value) : 0;
}
}  // namespace

TEST_CASE("the enabled spaces include the host spaces this build asks for") {
  using spaces = ordo::enabled_execution_spaces;
#if defined(KOKKOS_ENABLE_SERIAL)
  static_assert(boost::mp11::mp_contains<spaces, Kokkos::Serial>::value);
  CHECK(ordo::execution_space_name<Kokkos::Serial>() == "Serial");
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  static_assert(boost::mp11::mp_contains<spaces, Kokkos::OpenMP>::value);
  static_assert(std::is_same_v<Kokkos::DefaultExecutionSpace, Kokkos::OpenMP>);
  CHECK(ordo::execution_space_name<Kokkos::DefaultExecutionSpace>() == "OpenMP");
#endif
  CHECK(boost::mp11::mp_size<spaces>::value >= 1);
  std::ostringstream out;
  ordo::print_execution_spaces(out);
  CHECK(out.str().find("default execution space") != std::string::npos);
}

#if defined(KOKKOS_ENABLE_OPENMP)
TEST_CASE("OpenMP runs with the thread count the test environment sets") {
  const int threads = expected_threads();
  REQUIRE(threads > 0);
  CHECK(Kokkos::OpenMP().concurrency() == threads);
  // Every thread really takes part: each marks the slot of its OpenMP thread number.
  Kokkos::View<int*, Kokkos::HostSpace> seen("seen", static_cast<std::size_t>(threads));
  Kokkos::parallel_for(
      Kokkos::RangePolicy<Kokkos::OpenMP, Kokkos::Schedule<Kokkos::Static>>(0, 1 << 16),
      [=](int) { seen(static_cast<std::size_t>(omp_get_thread_num())) = 1; });
  Kokkos::fence();
  int participating = 0;
  for (int t = 0; t < threads; ++t) participating += seen(static_cast<std::size_t>(t));
  CHECK(participating == threads);
}
#endif

TEST_CASE_TEMPLATE_DEFINE("a parallel sum of 0..n-1 matches n(n-1)/2", ExecutionSpace, sum_id) {
  const long n = 100'003;
  long total = 0;
  Kokkos::parallel_reduce(
      Kokkos::RangePolicy<ExecutionSpace>(ExecutionSpace(), 0, n),
      KOKKOS_LAMBDA(long i, long& partial) { partial += i; }, total);
  CHECK(total == n * (n - 1) / 2);
  CHECK(ordo::execution_space_name<ExecutionSpace>() != "unknown");
}
ORDO_TEST_ALL_SPACES(sum_id);
