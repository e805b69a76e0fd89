// ordo's list of execution spaces, their names and print_execution_spaces, against what Kokkos
// itself says: the devices its CMake package reports (Kokkos_DEVICES, passed in by
// tests/CMakeLists.txt as ORDO_TEST_KOKKOS_DEVICES), each space's own name(), its version.

#include <ordo/kernels/execution.hpp>

#include "support/execution_spaces.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
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

namespace {

// What a kernel reads of its functor, against what the host wrote into it. A GPU receives the
// functor as bytes, so a member whose layout the host compiler and the device compiler disagree
// on reads as garbage there. The first GPU run's faults (docs/gpu.md) showed kernels that read
// wild pointers and a team scratch level they were not given; these cases tell such a
// disagreement apart from a fault of ordo's own kernels. Host spaces compile both sides with one
// compiler and must agree too.
inline constexpr std::uint64_t marker_before = 0x1111'2222'3333'4444ULL;
inline constexpr std::uint64_t marker_after = 0x5555'6666'7777'8888ULL;
inline constexpr int probe_words = 8;

template <class View>
std::array<std::uint64_t, probe_words> view_words(const View& v, std::uint64_t before, std::uint64_t after) {
  std::array<std::uint64_t, probe_words> words{before, static_cast<std::uint64_t>(v.extent(0)),
                                               static_cast<std::uint64_t>(v.stride(0)),
                                               static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(v.data())),
                                               0, 0, static_cast<std::uint64_t>(v.span()), after};
  if constexpr (View::rank > 1) {
    words[4] = static_cast<std::uint64_t>(v.extent(1));
    words[5] = static_cast<std::uint64_t>(v.stride(1));
  }
  return words;
}

// "before 0x..., extent0 37, stride0 ..." so that a failing check shows both sides.
std::string words_text(const std::array<std::uint64_t, probe_words>& words) {
  static constexpr const char* names[probe_words] = {"before", "extent0", "stride0", "data", "extent1", "stride1",
                                                     "span", "after"};
  std::ostringstream text;
  for (std::size_t w = 0; w < words.size(); ++w) text << (w > 0 ? ", " : "") << names[w] << " 0x" << std::hex << words[w];
  return text.str();
}

template <class View, class Out>
struct view_probe {
  Out out;  // first: the member a disagreement would shift last
  std::uint64_t before;
  View view;
  std::uint64_t after;

  KOKKOS_FUNCTION void operator()(int) const {
    out(0) = before;
    out(1) = static_cast<std::uint64_t>(view.extent(0));
    out(2) = static_cast<std::uint64_t>(view.stride(0));
    out(3) = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(view.data()));
    if constexpr (View::rank > 1) {
      out(4) = static_cast<std::uint64_t>(view.extent(1));
      out(5) = static_cast<std::uint64_t>(view.stride(1));
    } else {
      out(4) = 0;
      out(5) = 0;
    }
    out(6) = static_cast<std::uint64_t>(view.span());
    out(7) = after;
  }
};

template <class ExecutionSpace, class View>
std::array<std::uint64_t, probe_words> read_on(const View& view) {
  using memory = typename ExecutionSpace::memory_space;
  using out_view = Kokkos::View<std::uint64_t*, memory>;
  const out_view out("ordo_test::view_probe", probe_words);
  Kokkos::parallel_for("ordo_test::view_probe", Kokkos::RangePolicy<ExecutionSpace>(ExecutionSpace(), 0, 1),
                       view_probe<View, out_view>{out, marker_before, view, marker_after});
  ExecutionSpace().fence();
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  std::array<std::uint64_t, probe_words> words{};
  for (int w = 0; w < probe_words; ++w) words[static_cast<std::size_t>(w)] = host(w);
  return words;
}

// A team kernel shaped as the portable GEMV's device shape: level-0 scratch only. Each team's
// first thread writes what it sees: league size, team size, whether its level-0 scratch exists
// and whether a level-1 scratch does. On a GPU it must not (the GEMV's fault was an atomic on
// level-1 scratch locks); host spaces back both levels with one buffer, so they may hand one out.
template <class ExecutionSpace>
struct team_probe {
  using member_type = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  Kokkos::View<std::int64_t**, typename ExecutionSpace::memory_space> out;

  KOKKOS_FUNCTION void operator()(const member_type& member) const {
    void* const level0 = member.team_scratch(0).get_shmem(1024);
    void* const level1 = member.team_scratch(1).get_shmem(8);
    member.team_barrier();
    if (member.team_rank() == 0) {
      const int team = member.league_rank();
      out(team, 0) = member.league_size();
      out(team, 1) = member.team_size();
      out(team, 2) = level0 != nullptr ? 1 : 0;
      out(team, 3) = level1 != nullptr ? 1 : 0;
    }
  }
};

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("kernels read their functors' Views and scalars as the host wrote them", ExecutionSpace,
                          agreement_id) {
  using memory = typename ExecutionSpace::memory_space;
  using device = Kokkos::Device<ExecutionSpace, memory>;
  using unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  const Kokkos::View<double**, Kokkos::LayoutRight, memory> right("right", 37, 29);
  const Kokkos::View<double**, Kokkos::LayoutLeft, memory> left("left", 37, 29);
  const Kokkos::View<float*, memory> vector("vector", 1000);
  const auto check = [&](const auto& view, const std::string& what) {
    CAPTURE(what);
    CHECK(words_text(read_on<ExecutionSpace>(view)) == words_text(view_words(view, marker_before, marker_after)));
  };
  // The View types of the kernels that faulted on the first GPU run (docs/gpu.md): the GEMV's
  // operands as ordo::gemm hands them over, the exact sum's input, softmax's rows.
  check(right, "View<double**, LayoutRight>");
  check(left, "View<double**, LayoutLeft>");
  check(vector, "View<float*>");
  check(Kokkos::View<const double**, Kokkos::LayoutRight, memory, unmanaged>(right.data(), 37, 29),
        "View<const double**, LayoutRight, unmanaged>");
  check(Kokkos::View<const double**, Kokkos::LayoutLeft, memory, unmanaged>(left.data(), 37, 29),
        "View<const double**, LayoutLeft, unmanaged>");
  check(Kokkos::View<const double*, Kokkos::LayoutLeft, device, unmanaged>(Kokkos::subview(left, Kokkos::ALL, 3)),
        "a column of a LayoutLeft View, unmanaged (the GEMV's x)");
  check(Kokkos::View<double*, Kokkos::LayoutStride, device, unmanaged>(Kokkos::subview(right, Kokkos::ALL, 3)),
        "a column of a LayoutRight View, unmanaged (the GEMV's y)");
  check(Kokkos::subview(right, Kokkos::ALL, 5), "a column of a LayoutRight View (LayoutStride)");
  check(Kokkos::subview(left, 4, Kokkos::ALL), "a row of a LayoutLeft View (LayoutStride)");

  using policy_type = Kokkos::TeamPolicy<ExecutionSpace>;
  constexpr int teams = 3;
  const Kokkos::View<std::int64_t**, memory> out("ordo_test::team_probe", teams, 4);
  const team_probe<ExecutionSpace> probe{out};
  const auto scratch = Kokkos::PerTeam(2048);
  const int team_size_max =
      policy_type(ExecutionSpace(), teams, 1).set_scratch_size(0, scratch).team_size_max(probe, Kokkos::ParallelForTag());
  const int team_size = team_size_max < 256 ? team_size_max : 256;
  Kokkos::parallel_for("ordo_test::team_probe", policy_type(ExecutionSpace(), teams, team_size).set_scratch_size(0, scratch),
                       probe);
  ExecutionSpace().fence();
  const auto seen = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  for (int team = 0; team < teams; ++team) {
    CAPTURE(team);
    CHECK(seen(team, 0) == teams);
    CHECK(seen(team, 1) == team_size);
    CHECK(seen(team, 2) == 1);
    if constexpr (!ordo::is_host_space_v<ExecutionSpace>) CHECK(seen(team, 3) == 0);
  }
}
TEST_CASE_TEMPLATE_APPLY(agreement_id, ordo_test::every_enabled_space);
