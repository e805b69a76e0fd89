// ordo's list of execution spaces, their names and print_execution_spaces, against what Kokkos
// itself says: the devices its CMake package reports (Kokkos_DEVICES, passed in by
// tests/CMakeLists.txt as ORDO_TEST_KOKKOS_DEVICES), each space's own name(), its version.

#include <ordo/kernels/execution.hpp>

#include "support/execution_spaces.hpp"

#include <cstddef>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#if !defined(ORDO_TEST_KOKKOS_DEVICES) || !defined(ORDO_TEST_KOKKOS_VERSION)
#error "execution_test needs ORDO_TEST_KOKKOS_DEVICES and ORDO_TEST_KOKKOS_VERSION from tests/CMakeLists.txt"
#endif

namespace {

// The spaces ordo knows, in the order docs/development.md documents, each with the names Kokkos'
// CMake package gives its device (PTHREAD before Kokkos 4, THREADS after).
struct known_space {
  std::string_view name;
  std::vector<std::string_view> kokkos_devices;
};
const std::vector<known_space>& documented_order() {
  static const std::vector<known_space> spaces{{"Serial", {"SERIAL"}},
                                               {"OpenMP", {"OPENMP"}},
                                               {"Threads", {"PTHREAD", "THREADS"}},
                                               {"Cuda", {"CUDA"}},
                                               {"HIP", {"HIP"}}};
  return spaces;
}

bool kokkos_enables(std::string_view device) {
  std::string_view devices = ORDO_TEST_KOKKOS_DEVICES;
  while (!devices.empty()) {
    const std::size_t comma = devices.find(',');
    if (devices.substr(0, comma) == device) return true;
    devices = comma == std::string_view::npos ? std::string_view{} : devices.substr(comma + 1);
  }
  return false;
}

template <class Space>
std::string_view kokkos_name() {
  return Space::name();
}

}  // namespace

TEST_CASE("the enabled spaces are the spaces Kokkos' CMake package reports, in the documented order") {
  using spaces = ordo::enabled_execution_spaces;
  static_assert(boost::mp11::mp_is_set<spaces>::value);
  // Whichever space Kokkos made the default (OpenMP here, Cuda in a CUDA build), ordo lists it.
  static_assert(boost::mp11::mp_contains<spaces, Kokkos::DefaultExecutionSpace>::value);
  static_assert(boost::mp11::mp_contains<spaces, Kokkos::DefaultHostExecutionSpace>::value);
  // Space names joined by spaces, "Serial OpenMP", so that a failure prints both lists.
  std::string expected;
  std::size_t expected_count = 0;
  for (const known_space& space : documented_order()) {
    for (const std::string_view device : space.kokkos_devices) {
      if (kokkos_enables(device)) {
        expected += expected.empty() ? "" : " ";
        expected += space.name;
        ++expected_count;
      }
    }
  }
  const std::string_view kokkos_devices = ORDO_TEST_KOKKOS_DEVICES;
  CAPTURE(kokkos_devices);
  REQUIRE(expected_count > 0);
  std::string listed;
  boost::mp11::mp_for_each<spaces>([&](auto space) {
    static_assert(Kokkos::is_execution_space<decltype(space)>::value);
    listed += listed.empty() ? "" : " ";
    listed += kokkos_name<decltype(space)>();
  });
  CHECK(listed == expected);
  // The test harness instantiates kernel tests for exactly this list, or for the default space
  // alone where the build asks for that (ORDO_TEST_SPACES=default).
#if defined(ORDO_TEST_DEFAULT_SPACE_ONLY)
  CHECK(std::is_same_v<ordo_test::execution_spaces, std::tuple<Kokkos::DefaultExecutionSpace>>);
#else
  CHECK(std::tuple_size_v<ordo_test::execution_spaces> == expected_count);
#endif
}

TEST_CASE("print_execution_spaces writes the version, the default space and one line per space") {
  std::ostringstream expected;
  expected << "Kokkos " << ORDO_TEST_KOKKOS_VERSION << ", default execution space: "
           << kokkos_name<Kokkos::DefaultExecutionSpace>() << '\n';
  boost::mp11::mp_for_each<ordo::enabled_execution_spaces>([&](auto space) {
    expected << "  " << kokkos_name<decltype(space)>() << ": concurrency " << space.concurrency() << '\n';
  });
  std::ostringstream out;
  ordo::print_execution_spaces(out);
  CHECK(out.str() == expected.str());
}

TEST_CASE_TEMPLATE_DEFINE("each space has Kokkos' name for it, and is a host space exactly when its memory is host "
                          "memory",
                          ExecutionSpace, space_id) {
  constexpr std::string_view name = ordo::execution_space_name<ExecutionSpace>();
  static_assert(name != "unknown");
  // The same call at run time, through a pointer the compiler cannot see through.
  std::string_view (*const volatile name_at_run_time)() = &ordo::execution_space_name<ExecutionSpace>;
  CHECK(name_at_run_time() == kokkos_name<ExecutionSpace>());
  CHECK(name == kokkos_name<ExecutionSpace>());
  // A host space's kernels write a HostSpace View; a device's cannot reach host memory.
  constexpr bool host = ordo::is_host_space_v<ExecutionSpace>;
  static_assert(host == std::is_same_v<typename ExecutionSpace::memory_space, Kokkos::HostSpace>);
  bool (*const volatile host_at_run_time)() = [] { return ordo::is_host_space_v<ExecutionSpace>; };
  CHECK(host_at_run_time() == std::is_same_v<typename ExecutionSpace::memory_space, Kokkos::HostSpace>);
  if constexpr (host) {
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
