#ifndef ORDO_TESTS_SUPPORT_KOKKOS_TOOLS_RECORDER_HPP
#define ORDO_TESTS_SUPPORT_KOKKOS_TOOLS_RECORDER_HPP

// Records what Kokkos Tools sees while alive: the bytes of every allocation and the names of the
// regions pushed (ordo::gemm announces each product as a region). One recorder at a time.
// Kokkos may call the hooks from several host threads at once (OpenMP threads growing their team
// scratch inside a kernel), so the record is guarded by a mutex.

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace ordo_test {

class kokkos_tools_recorder {
 public:
  kokkos_tools_recorder() {
    state() = {};
    Kokkos::Tools::Experimental::set_allocate_data_callback(&on_allocate);
    Kokkos::Tools::Experimental::set_push_region_callback(&on_push_region);
  }
  ~kokkos_tools_recorder() {
    Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr);
    Kokkos::Tools::Experimental::set_push_region_callback(nullptr);
  }
  kokkos_tools_recorder(const kokkos_tools_recorder&) = delete;
  kokkos_tools_recorder& operator=(const kokkos_tools_recorder&) = delete;

  std::uint64_t allocated_bytes() const { return state().bytes; }
  const std::vector<std::string>& allocation_labels() const { return state().labels; }
  const std::vector<std::string>& regions() const { return state().regions; }

 private:
  struct recorded {
    std::uint64_t bytes = 0;
    std::vector<std::string> labels;
    std::vector<std::string> regions;
  };
  static recorded& state() {
    static recorded r;
    return r;
  }
  static std::mutex& guard() {
    static std::mutex m;
    return m;
  }
  static void on_allocate(Kokkos::Profiling::SpaceHandle, const char* label, const void*, std::uint64_t size) {
    const std::lock_guard<std::mutex> lock(guard());
    state().bytes += size;
    state().labels.emplace_back(label);
  }
  static void on_push_region(const char* name) {
    const std::lock_guard<std::mutex> lock(guard());
    state().regions.emplace_back(name);
  }
};

}  // namespace ordo_test

#endif
