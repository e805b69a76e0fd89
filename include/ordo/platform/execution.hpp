#ifndef ORDO_PLATFORM_EXECUTION_HPP
#define ORDO_PLATFORM_EXECUTION_HPP

// The execution spaces this build of Kokkos enables, as a type list, so that kernels and their
// tests are written once and instantiated for every space (Serial, OpenMP, CUDA, ...).

#include <Kokkos_Core.hpp>
#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <ostream>
#include <string_view>

namespace ordo {

using enabled_execution_spaces = boost::mp11::mp_append<
#if defined(KOKKOS_ENABLE_SERIAL)
    boost::mp11::mp_list<Kokkos::Serial>,
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    boost::mp11::mp_list<Kokkos::OpenMP>,
#endif
#if defined(KOKKOS_ENABLE_THREADS)
    boost::mp11::mp_list<Kokkos::Threads>,
#endif
#if defined(KOKKOS_ENABLE_CUDA)
    boost::mp11::mp_list<Kokkos::Cuda>,
#endif
#if defined(KOKKOS_ENABLE_HIP)
    boost::mp11::mp_list<Kokkos::Experimental::HIP>,
#endif
    boost::mp11::mp_list<>>;

static_assert(boost::mp11::mp_size<enabled_execution_spaces>::value > 0,
              "ordo: the Kokkos found by CMake enables no execution space that ordo knows");

// True for execution spaces that run on the host CPU (Serial, OpenMP, Threads, HPX), false for
// GPUs. Host-only paths (BLAS, x86 kernels, run-time CPU dispatch) are chosen by this trait.
template <class ExecutionSpace>
inline constexpr bool is_host_space_v = Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible;

template <class ExecutionSpace>
constexpr std::string_view execution_space_name() {
  if constexpr (false) {
  }
#if defined(KOKKOS_ENABLE_SERIAL)
  else if constexpr (std::is_same_v<ExecutionSpace, Kokkos::Serial>) {
    return "Serial";
  }
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  else if constexpr (std::is_same_v<ExecutionSpace, Kokkos::OpenMP>) {
    return "OpenMP";
  }
#endif
#if defined(KOKKOS_ENABLE_THREADS)
  else if constexpr (std::is_same_v<ExecutionSpace, Kokkos::Threads>) {
    return "Threads";
  }
#endif
#if defined(KOKKOS_ENABLE_CUDA)
  else if constexpr (std::is_same_v<ExecutionSpace, Kokkos::Cuda>) {
    return "Cuda";
  }
#endif
#if defined(KOKKOS_ENABLE_HIP)
  else if constexpr (std::is_same_v<ExecutionSpace, Kokkos::Experimental::HIP>) {
    return "HIP";
  }
#endif
  else {
    return "unknown";
  }
}

// One line per enabled space: its name and concurrency. Kokkos must be initialized.
inline void print_execution_spaces(std::ostream& out) {
  out << "Kokkos " << KOKKOS_VERSION / 10000 << '.' << KOKKOS_VERSION / 100 % 100 << '.'
      << KOKKOS_VERSION % 100 << ", default execution space: "
      << execution_space_name<Kokkos::DefaultExecutionSpace>() << '\n';
  boost::mp11::mp_for_each<enabled_execution_spaces>([&out](auto space) {
    using space_type = decltype(space);
    out << "  " << execution_space_name<space_type>() << ": concurrency " << space.concurrency()
        << '\n';
  });
}

}  // namespace ordo

#endif
