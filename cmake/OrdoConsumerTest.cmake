# Configures, builds and runs the consumer project in SOURCE, using ordo via MODE:
#   find_package      an installed ordo in PREFIX
#   add_subdirectory  this source tree (ORDO_SOURCE)
#   core_only         an installed ordo in PREFIX, with find_package(Kokkos) disabled
#   core_install      ordo configured with ORDO_WITH_KOKKOS=OFF and installed into PREFIX first,
#                     then used as in core_only
#   fails_*           find_package(ordo) of the consumer in SOURCE, against the install in PREFIX,
#                     must fail at configure time with ordo's own message, which contains EXPECT
#   fresh_install     ordo configured with -DBUILD_TESTING=OFF (CMake's convention turns ordo's
#                     tests off) and installed at once, before any build: the install succeeds,
#                     holds the headers and the package, and says that ordo-plan was not built
file(REMOVE_RECURSE "${BUILD}")
if(MODE STREQUAL "fresh_install")
  execute_process(COMMAND "${CMAKE_COMMAND}" -S "${ORDO_SOURCE}" -B "${BUILD}/ordo" ${ARGS} -DBUILD_TESTING=OFF
                          -DORDO_WITH_KOKKOS=OFF -DORDO_BUILD_EXAMPLES=OFF RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "consumer (${MODE}): configuring ordo failed")
  endif()
  file(STRINGS "${BUILD}/ordo/CMakeCache.txt" tests_option REGEX "^ORDO_BUILD_TESTS:")
  if(NOT tests_option STREQUAL "ORDO_BUILD_TESTS:BOOL=OFF")
    message(FATAL_ERROR "consumer (${MODE}): -DBUILD_TESTING=OFF left ${tests_option}")
  endif()
  execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD}/ordo" --prefix "${BUILD}/prefix"
                  RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "consumer (${MODE}): cmake --install before building failed:\n${err}")
  endif()
  string(REGEX REPLACE "[ \t\r\n]+" " " text "${out} ${err}")
  string(FIND "${text}" "ordo-plan was not built, so it was not installed" at)
  if(at EQUAL -1 OR NOT EXISTS "${BUILD}/prefix/include/ordo/core.hpp"
     OR NOT EXISTS "${BUILD}/prefix/share/cmake/ordo/ordoConfig.cmake")
    message(FATAL_ERROR "consumer (${MODE}): the install lacks the headers or the package, or said nothing of "
                        "ordo-plan:\n${out}${err}")
  endif()
  return()
endif()
if(MODE MATCHES "^fails_")
  execute_process(COMMAND "${CMAKE_COMMAND}" -S "${SOURCE}" -B "${BUILD}" ${ARGS} -DORDO_CONSUMER_MODE=find_package
                          "-Dordo_ROOT=${PREFIX}" RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(result EQUAL 0)
    message(FATAL_ERROR "consumer (${MODE}): configuring succeeded, but find_package(ordo) should have failed")
  endif()
  # CMake wraps long messages over several indented lines.
  string(REGEX REPLACE "[ \t\r\n]+" " " text "${out} ${err}")
  string(FIND "${text}" "${EXPECT}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "consumer (${MODE}): configuring failed without the expected text '${EXPECT}':\n${err}")
  endif()
  return()
endif()
set(programs consumer consumer_core)
if(MODE STREQUAL "core_install")
  execute_process(COMMAND "${CMAKE_COMMAND}" -S "${ORDO_SOURCE}" -B "${BUILD}/ordo" ${ARGS} -DORDO_WITH_KOKKOS=OFF
                          -DORDO_BUILD_TESTS=OFF -DORDO_BUILD_EXAMPLES=OFF -DORDO_BUILD_TOOLS=OFF -DORDO_INSTALL=ON
                          -DCMAKE_DISABLE_FIND_PACKAGE_Kokkos=ON RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "consumer (${MODE}): configuring ordo with ORDO_WITH_KOKKOS=OFF failed")
  endif()
  execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD}/ordo" --prefix "${PREFIX}" RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "consumer (${MODE}): installing ordo without Kokkos failed")
  endif()
  if(EXISTS "${PREFIX}/include/ordo/kernels")
    message(FATAL_ERROR "consumer (${MODE}): the core-only install holds the Kokkos layer's headers")
  endif()
endif()
if(MODE MATCHES "^core_")
  set(mode_args "-Dordo_ROOT=${PREFIX}" -DCMAKE_DISABLE_FIND_PACKAGE_Kokkos=ON)
  set(programs consumer_core)
elseif(MODE STREQUAL "find_package")
  set(mode_args "-Dordo_ROOT=${PREFIX}")
else()
  set(mode_args "-DORDO_SOURCE_DIR=${ORDO_SOURCE}")
endif()
if(EXPECT_MPI AND NOT MODE MATCHES "^core_")
  list(APPEND mode_args -DORDO_CONSUMER_EXPECT_MPI=ON)
  list(APPEND programs consumer_mpi)
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${SOURCE}" -B "${BUILD}" ${ARGS} -DORDO_CONSUMER_MODE=${MODE} ${mode_args}
                RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "consumer (${MODE}): configure failed")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BUILD}" RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "consumer (${MODE}): build failed")
endif()
foreach(program IN LISTS programs)
  set(launcher)
  if(program STREQUAL "consumer_mpi")
    # Open MPI leaks at MPI_Finalize in components it unloads (see ordo_add_mpirun_test).
    set(launcher "${CMAKE_COMMAND}" -E env ASAN_OPTIONS=detect_leaks=0)
  endif()
  execute_process(COMMAND ${launcher} "${BUILD}/${program}" RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "consumer (${MODE}): ${program} failed")
  endif()
endforeach()
