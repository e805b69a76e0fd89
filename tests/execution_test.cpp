#include <ordo/kernels/execution.hpp>

#include "support/execution_spaces.hpp"

#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#if defined(KOKKOS_ENABLE_OPENMP)
#include <omp.h>
#endif

namespace {
int expected_threads() {
  const char* value = std::getenv("ORDO_TEST_THREADS");
  return value != nullptr ? std::atoi(value) : 0;
}

// What ordo must call each space, and where each runs, written out per space (docs/development.md).
template <class Space>
constexpr std::string_view expected_name = "unknown";
template <class Space>
constexpr bool runs_on_host = false;
#if defined(KOKKOS_ENABLE_SERIAL)
template <>
constexpr std::string_view expected_name<Kokkos::Serial> = "Serial";
template <>
constexpr bool runs_on_host<Kokkos::Serial> = true;
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
template <>
constexpr std::string_view expected_name<Kokkos::OpenMP> = "OpenMP";
template <>
constexpr bool runs_on_host<Kokkos::OpenMP> = true;
#endif
#if defined(KOKKOS_ENABLE_THREADS)
template <>
constexpr std::string_view expected_name<Kokkos::Threads> = "Threads";
template <>
constexpr bool runs_on_host<Kokkos::Threads> = true;
#endif
#if defined(KOKKOS_ENABLE_CUDA)
template <>
constexpr std::string_view expected_name<Kokkos::Cuda> = "Cuda";
#endif
#if defined(KOKKOS_ENABLE_HIP)
template <>
constexpr std::string_view expected_name<Kokkos::Experimental::HIP> = "HIP";
#endif
}  // namespace

TEST_CASE("the enabled spaces include the host spaces this build asks for") {
  using spaces = ordo::enabled_execution_spaces;
#if defined(KOKKOS_ENABLE_SERIAL)
  static_assert(boost::mp11::mp_contains<spaces, Kokkos::Serial>::value);
  CHECK(ordo::execution_space_name<Kokkos::Serial>() == "Serial");
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  static_assert(boost::mp11::mp_contains<spaces, Kokkos::OpenMP>::value);
  CHECK(ordo::execution_space_name<Kokkos::OpenMP>() == "OpenMP");
#endif
  // Whichever space Kokkos made the default (OpenMP here, Cuda in a CUDA build), ordo lists it and
  // names it.
  static_assert(boost::mp11::mp_contains<spaces, Kokkos::DefaultExecutionSpace>::value);
  static_assert(boost::mp11::mp_contains<spaces, Kokkos::DefaultHostExecutionSpace>::value);
  CHECK(ordo::execution_space_name<Kokkos::DefaultExecutionSpace>() == expected_name<Kokkos::DefaultExecutionSpace>);
  CHECK(ordo::execution_space_name<Kokkos::DefaultExecutionSpace>() != "unknown");
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

TEST_CASE("the list holds each enabled space once, in the documented order") {
  using spaces = ordo::enabled_execution_spaces;
  static_assert(boost::mp11::mp_is_set<spaces>::value);
  // Serial, OpenMP, Threads, Cuda, HIP (docs/development.md), as far as Kokkos enables them.
  std::vector<std::string> expected;
#if defined(KOKKOS_ENABLE_SERIAL)
  expected.push_back("Serial");
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  expected.push_back("OpenMP");
#endif
#if defined(KOKKOS_ENABLE_THREADS)
  expected.push_back("Threads");
#endif
#if defined(KOKKOS_ENABLE_CUDA)
  expected.push_back("Cuda");
#endif
#if defined(KOKKOS_ENABLE_HIP)
  expected.push_back("HIP");
#endif
  std::vector<std::string> listed;
  boost::mp11::mp_for_each<spaces>([&](auto space) { listed.emplace_back(expected_name<decltype(space)>); });
  CHECK(listed == expected);
  // The test harness instantiates kernel tests for exactly this list, or for the default space
  // alone where the build asks for that (ORDO_TEST_SPACES=default).
#if defined(ORDO_TEST_DEFAULT_SPACE_ONLY)
  CHECK(std::is_same_v<ordo_test::execution_spaces, std::tuple<Kokkos::DefaultExecutionSpace>>);
#else
  CHECK(std::tuple_size_v<ordo_test::execution_spaces> == expected.size());
#endif
}

TEST_CASE("print_execution_spaces writes the version, the default space and one line per space") {
  std::ostringstream expected;
  expected << "Kokkos " << KOKKOS_VERSION / 10000 << '.' << KOKKOS_VERSION / 100 % 100 << '.' << KOKKOS_VERSION % 100
           << ", default execution space: " << expected_name<Kokkos::DefaultExecutionSpace> << '\n';
  boost::mp11::mp_for_each<ordo::enabled_execution_spaces>([&](auto space) {
    expected << "  " << expected_name<decltype(space)> << ": concurrency " << space.concurrency() << '\n';
  });
  std::ostringstream out;
  ordo::print_execution_spaces(out);
  CHECK(out.str() == expected.str());
#if defined(KOKKOS_ENABLE_OPENMP) && !defined(KOKKOS_ENABLE_CUDA) && !defined(KOKKOS_ENABLE_HIP)
  // Written out for this build's own configuration, as the tour prints it.
  if (expected_threads() > 0) {
    CHECK(out.str().find("  OpenMP: concurrency " + std::to_string(expected_threads()) + "\n") != std::string::npos);
  }
#endif
}

TEST_CASE_TEMPLATE_DEFINE("each space has its name, and is a host space exactly when it runs on the CPU", ExecutionSpace,
                          space_id) {
  constexpr std::string_view name = ordo::execution_space_name<ExecutionSpace>();
  static_assert(name == expected_name<ExecutionSpace>);
  static_assert(ordo::is_host_space_v<ExecutionSpace> == runs_on_host<ExecutionSpace>);
  // The same call at run time, through a pointer the compiler cannot see through.
  std::string_view (*const volatile name_at_run_time)() = &ordo::execution_space_name<ExecutionSpace>;
  CHECK(name_at_run_time() == expected_name<ExecutionSpace>);
  CHECK(name_at_run_time() != "unknown");
  // A host space's kernels can write host memory: a kernel on it fills a HostSpace View.
  if constexpr (runs_on_host<ExecutionSpace>) {
    const Kokkos::View<int*, Kokkos::HostSpace> marks("marks", 64);
    Kokkos::parallel_for(Kokkos::RangePolicy<ExecutionSpace>(ExecutionSpace(), 0, 64), [=](int i) { marks(i) = i + 1; });
    ExecutionSpace().fence();
    int sum = 0;
    for (int i = 0; i < 64; ++i) sum += marks(i);
    CHECK(sum == 64 * 65 / 2);
  }
}
// Facts about each space, so every enabled space, whatever ORDO_TEST_SPACES asks of kernel tests.
TEST_CASE_TEMPLATE_APPLY(space_id, ordo_test::every_enabled_space);

TEST_CASE("a type that is no enabled execution space is named unknown") {
  static_assert(ordo::execution_space_name<int>() == "unknown");
  static_assert(ordo::execution_space_name<Kokkos::HostSpace>() == "unknown");
  std::string_view (*const volatile name_of_int)() = &ordo::execution_space_name<int>;
  CHECK(name_of_int() == "unknown");
}
