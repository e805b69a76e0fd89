#ifndef ORDO_TESTS_SUPPORT_EXECUTION_SPACES_HPP
#define ORDO_TESTS_SUPPORT_EXECUTION_SPACES_HPP

// Kernel tests are written once with TEST_CASE_TEMPLATE_DEFINE(name, ExecutionSpace, id) and
// instantiated with ORDO_TEST_ALL_SPACES(id) for every space the found Kokkos enables, or, where
// the build defines ORDO_TEST_DEFAULT_SPACE_ONLY (the CMake cache variable ORDO_TEST_SPACES=default),
// for Kokkos::DefaultExecutionSpace alone: every space costs a full instantiation of each case, and
// one preset instantiating them all is enough (docs/development.md). Cases that compare Serial with
// OpenMP bit for bit name both spaces themselves and run in every build.

#include <ordo/kernels/execution.hpp>

#include <doctest/doctest.h>

#include <boost/mp11/algorithm.hpp>

#include <tuple>

namespace ordo_test {
using every_enabled_space = boost::mp11::mp_rename<ordo::enabled_execution_spaces, std::tuple>;
#if defined(ORDO_TEST_DEFAULT_SPACE_ONLY)
using execution_spaces = std::tuple<Kokkos::DefaultExecutionSpace>;
#else
using execution_spaces = every_enabled_space;
#endif
}

#if defined(KOKKOS_ENABLE_SERIAL)
TYPE_TO_STRING(Kokkos::Serial);
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
TYPE_TO_STRING(Kokkos::OpenMP);
#endif
#if defined(KOKKOS_ENABLE_THREADS)
TYPE_TO_STRING(Kokkos::Threads);
#endif
#if defined(KOKKOS_ENABLE_CUDA)
TYPE_TO_STRING(Kokkos::Cuda);
#endif
#if defined(KOKKOS_ENABLE_HIP)
TYPE_TO_STRING(Kokkos::Experimental::HIP);
#endif

#define ORDO_TEST_ALL_SPACES(id) TEST_CASE_TEMPLATE_APPLY(id, ordo_test::execution_spaces)

#endif
