# Helpers for ordo's own tests: warnings, per-space kernel tests, header self-containment,
# must-not-compile cases and consumer builds.

set(ORDO_TEST_THREADS 2 CACHE STRING "OpenMP threads the tests run with")

# In a build whose Kokkos enables CUDA, nvcc compiles the targets that use Kokkos (Kokkos' compiler
# launcher sends it every compile that carries Kokkos' flags; with nvcc_wrapper as the compiler,
# every target). nvcc's front end rewrites functional casts such as T(0) and std::size_t{n} into
# C casts before the host compiler sees them, so -Wold-style-cast would flag nvcc's rewriting
# (and CUDA's own headers) rather than ordo's code: it is left to the host builds, which compile
# the same sources. nvcc's own check that host-only functions are not called from device code
# becomes an error instead. Call after target_link_libraries.
function(ordo_target_warnings target)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang|NVIDIA")
    return()
  endif()
  set(nvcc OFF)
  if(ORDO_KOKKOS_CUDA)
    get_target_property(libraries ${target} LINK_LIBRARIES)
    if(CMAKE_CXX_COMPILER MATCHES "nvcc" OR "ordo::ordo" IN_LIST libraries OR "ordo_test_main" IN_LIST libraries)
      set(nvcc ON)
    endif()
  endif()
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wnon-virtual-dtor -Werror)
  if(nvcc)
    target_compile_options(${target} PRIVATE -Werror=cross-execution-space-call)
  else()
    target_compile_options(${target} PRIVATE -Wold-style-cast)
  endif()
endfunction()

function(ordo_test_environment test)
  set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT
    "OMP_NUM_THREADS=${ORDO_TEST_THREADS}" "OMP_PROC_BIND=false"
    "ORDO_TEST_THREADS=${ORDO_TEST_THREADS}")
endfunction()

# ordo_add_test(name [KOKKOS] SOURCES ...): KOKKOS tests get the Kokkos-initializing main.
function(ordo_add_test name)
  cmake_parse_arguments(arg "KOKKOS" "" "SOURCES" ${ARGN})
  add_executable(${name} ${arg_SOURCES})
  target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}/tests")
  if(arg_KOKKOS)
    target_link_libraries(${name} PRIVATE ordo_test_main ordo::ordo doctest::doctest)
  else()
    target_compile_definitions(${name} PRIVATE DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN)
    target_link_libraries(${name} PRIVATE ordo::core doctest::doctest)
  endif()
  ordo_target_warnings(${name})
  add_test(NAME ${name} COMMAND ${name})
  ordo_test_environment(${name})
endfunction()

# Every header, detail ones included, must compile alone; the pure layer (ordo/core.hpp and
# ordo/core/) against ordo::core, which has no Kokkos, so a Kokkos include there fails the build.
function(ordo_add_header_tests)
  file(GLOB_RECURSE headers RELATIVE "${PROJECT_SOURCE_DIR}/include"
       CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/include/ordo/*.hpp")
  set(pure_sources)
  set(kokkos_sources)
  set(mpi_sources)
  foreach(header IN LISTS headers)
    if(header MATCHES "/x86/" AND NOT CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
      continue()
    endif()
    # The Kokkos layer's x86 kernels are host-only: their includers leave them out when nvcc
    # compiles, so a CUDA build does not compile them alone either.
    if(header MATCHES "^ordo/kernels/detail/x86/" AND ORDO_KOKKOS_CUDA)
      continue()
    endif()
    string(REGEX REPLACE "[/.]" "_" stem "${header}")
    set(source "${CMAKE_CURRENT_BINARY_DIR}/headers/${stem}.cpp")
    # Included twice to check the include guard as well.
    file(CONFIGURE OUTPUT "${source}" CONTENT "#include <${header}>\n#include <${header}>\n")
    if(header MATCHES "^ordo/core(/|\\.hpp$)")
      list(APPEND pure_sources "${source}")
    elseif(header MATCHES "^ordo/mpi(/|\\.hpp$)")
      list(APPEND mpi_sources "${source}")
    else()
      list(APPEND kokkos_sources "${source}")
    endif()
  endforeach()
  add_library(ordo_headers_pure OBJECT EXCLUDE_FROM_ALL ${pure_sources})
  target_link_libraries(ordo_headers_pure PRIVATE ordo::core)
  ordo_target_warnings(ordo_headers_pure)
  set(kinds pure)
  if(TARGET ordo::ordo)
    add_library(ordo_headers_kokkos OBJECT EXCLUDE_FROM_ALL ${kokkos_sources})
    target_link_libraries(ordo_headers_kokkos PRIVATE ordo::ordo)
    ordo_target_warnings(ordo_headers_kokkos)
    list(APPEND kinds kokkos)
  endif()
  if(TARGET ordo::mpi)
    add_library(ordo_headers_mpi OBJECT EXCLUDE_FROM_ALL ${mpi_sources})
    target_link_libraries(ordo_headers_mpi PRIVATE ordo::mpi)
    ordo_target_warnings(ordo_headers_mpi)
    list(APPEND kinds mpi)
  endif()
  foreach(kind IN LISTS kinds)
    add_test(NAME headers.${kind}
             COMMAND "${CMAKE_COMMAND}" --build "${PROJECT_BINARY_DIR}" --target ordo_headers_${kind})
    set_tests_properties(headers.${kind} PROPERTIES RESOURCE_LOCK ordo_build)
  endforeach()
endfunction()

# Each source in DIR is a must-not-compile case. Its comments name the diagnostic text expected:
#   // expect: text                   (any compiler)
#   // expect-gcc: text / expect-clang: text
#   // expect-compiles                (proves the harness fails when a source compiles)
#   // expect-harness-failure         (proves the harness fails on a different diagnostic)
function(ordo_add_compile_fail_tests dir)
  file(GLOB cases CONFIGURE_DEPENDS "${dir}/*.cpp")
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    set(compiler_key clang)
  else()
    set(compiler_key gcc)
  endif()
  foreach(case IN LISTS cases)
    get_filename_component(name "${case}" NAME_WE)
    # The expectations live in the source: editing it must reconfigure.
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${case}")
    file(STRINGS "${case}" lines REGEX "^// expect")
    set(expected)
    set(expect_compiles OFF)
    set(harness_failure OFF)
    foreach(line IN LISTS lines)
      # CMake evaluates both sides of OR and a failed MATCHES clears CMAKE_MATCH_1: test apart.
      if(line MATCHES "^// expect: (.*)$")
        list(APPEND expected "${CMAKE_MATCH_1}")
      elseif(line MATCHES "^// expect-${compiler_key}: (.*)$")
        list(APPEND expected "${CMAKE_MATCH_1}")
      elseif(line MATCHES "^// expect-compiles")
        set(expect_compiles ON)
      elseif(line MATCHES "^// expect-harness-failure")
        set(harness_failure ON)
      endif()
    endforeach()
    if(NOT expected AND NOT expect_compiles)
      message(FATAL_ERROR "ordo: compile-fail case ${case} names no expected diagnostic")
    endif()
    set(target compile_fail_${name})
    # Cases that include Kokkos-layer headers say so with "// needs: kokkos".
    file(STRINGS "${case}" needs_kokkos REGEX "^// needs: kokkos")
    if(needs_kokkos AND NOT TARGET ordo::ordo)
      continue()
    endif()
    # ... and those of the MPI layer with "// needs: mpi".
    file(STRINGS "${case}" needs_mpi REGEX "^// needs: mpi")
    if(needs_mpi AND NOT TARGET ordo::mpi)
      continue()
    endif()
    add_library(${target} OBJECT EXCLUDE_FROM_ALL "${case}")
    if(needs_mpi)
      target_link_libraries(${target} PRIVATE ordo::mpi)
    elseif(needs_kokkos)
      target_link_libraries(${target} PRIVATE ordo::ordo)
    else()
      target_link_libraries(${target} PRIVATE ordo::core)
    endif()
    if(expect_compiles)
      list(APPEND expected "this text is never printed by a compiler")
    endif()
    string(REPLACE ";" "|" expected_arg "${expected}")
    add_test(NAME compile_fail.${name}
             COMMAND "${CMAKE_COMMAND}" -DBUILD_DIR=${PROJECT_BINARY_DIR} -DTARGET=${target}
                     "-DEXPECTED=${expected_arg}" -P "${PROJECT_SOURCE_DIR}/cmake/OrdoCheckCompileFail.cmake")
    set_tests_properties(compile_fail.${name} PROPERTIES RESOURCE_LOCK ordo_build)
    if(expect_compiles OR harness_failure)
      set_tests_properties(compile_fail.${name} PROPERTIES WILL_FAIL TRUE)
    endif()
  endforeach()
endfunction()

# Builds and runs DIR as a separate project twice: against an installed ordo through
# find_package(ordo), and through add_subdirectory of this source tree.
function(ordo_add_consumer_tests dir)
  set(prefix "${CMAKE_CURRENT_BINARY_DIR}/consumer/install")
  set(common -G "${CMAKE_GENERATOR}" -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
             -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE} -DKokkos_DIR=${Kokkos_DIR} -DBoost_DIR=${Boost_DIR})
  add_test(NAME consumer.install
           COMMAND "${CMAKE_COMMAND}" --install "${PROJECT_BINARY_DIR}" --prefix "${prefix}")
  set_tests_properties(consumer.install PROPERTIES FIXTURES_SETUP ordo_installed)
  foreach(mode find_package add_subdirectory)
    set(build "${CMAKE_CURRENT_BINARY_DIR}/consumer/${mode}")
    add_test(NAME consumer.${mode}
             COMMAND "${CMAKE_COMMAND}" -DSOURCE=${dir} -DBUILD=${build}
                     -DMODE=${mode} -DPREFIX=${prefix} -DORDO_SOURCE=${PROJECT_SOURCE_DIR}
                     -DEXPECT_MPI=${ORDO_HAS_MPI} "-DARGS=${common}"
                     -P "${PROJECT_SOURCE_DIR}/cmake/OrdoConsumerTest.cmake")
    set_tests_properties(consumer.${mode} PROPERTIES FIXTURES_REQUIRED ordo_installed)
    ordo_test_environment(consumer.${mode})
    # consumer_mpi runs as a singleton MPI process; Open MPI needs these to run as root.
    set_property(TEST consumer.${mode} APPEND PROPERTY ENVIRONMENT
      "OMPI_ALLOW_RUN_AS_ROOT=1" "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
  endforeach()
  # The pure layer without Kokkos: no Kokkos_DIR, and find_package(Kokkos) disabled.
  set(core_common -G "${CMAKE_GENERATOR}" -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
                  -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE} -DBoost_DIR=${Boost_DIR})
  foreach(mode core_only core_install)
    set(build "${CMAKE_CURRENT_BINARY_DIR}/consumer/${mode}")
    if(mode STREQUAL "core_install")
      set(mode_prefix "${CMAKE_CURRENT_BINARY_DIR}/consumer/install_core")
    else()
      set(mode_prefix "${prefix}")
    endif()
    add_test(NAME consumer.${mode}
             COMMAND "${CMAKE_COMMAND}" -DSOURCE=${PROJECT_SOURCE_DIR}/tests/consumer_core -DBUILD=${build}
                     -DMODE=${mode} -DPREFIX=${mode_prefix} -DORDO_SOURCE=${PROJECT_SOURCE_DIR}
                     "-DARGS=${core_common}" -P "${PROJECT_SOURCE_DIR}/cmake/OrdoConsumerTest.cmake")
    set_tests_properties(consumer.${mode} PROPERTIES FIXTURES_REQUIRED ordo_installed)
  endforeach()
endfunction()

# Every ```cpp block of README.md and docs/*.md is a complete program: each is compiled and run,
# so the documentation cannot drift from the code.
function(ordo_add_doc_snippet_tests)
  file(GLOB docs CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/docs/*.md")
  list(PREPEND docs "${PROJECT_SOURCE_DIR}/README.md")
  foreach(doc IN LISTS docs)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${doc}")
    get_filename_component(doc_name "${doc}" NAME_WE)
    file(READ "${doc}" text)
    # Protect semicolons and brackets from CMake's list handling.
    string(REPLACE ";" "<ordo-semicolon>" text "${text}")
    string(REPLACE "[" "<ordo-open>" text "${text}")
    string(REPLACE "]" "<ordo-close>" text "${text}")
    string(REPLACE "\n" ";" lines "${text}")
    set(inside OFF)
    set(count 0)
    foreach(line IN LISTS lines)
      if(NOT inside AND line MATCHES "^```cpp *$")
        set(inside ON)
        set(code "")
      elseif(inside AND line MATCHES "^``` *$")
        set(inside OFF)
        math(EXPR count "${count} + 1")
        string(REPLACE "<ordo-semicolon>" ";" code "${code}")
        string(REPLACE "<ordo-open>" "[" code "${code}")
        string(REPLACE "<ordo-close>" "]" code "${code}")
        set(name doc_${doc_name}_${count})
        # Snippets that include <ordo/mpi.hpp> run under mpirun with 2 ranks when MPI is found.
        string(FIND "${code}" "#include <ordo/mpi" uses_mpi)
        if(uses_mpi GREATER -1 AND NOT TARGET ordo::mpi)
          continue()
        endif()
        file(CONFIGURE OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/doc_snippets/${name}.cpp" CONTENT "${code}" @ONLY)
        add_executable(${name} "${CMAKE_CURRENT_BINARY_DIR}/doc_snippets/${name}.cpp")
        ordo_target_warnings(${name})
        if(uses_mpi GREATER -1)
          target_link_libraries(${name} PRIVATE ordo::mpi)
          ordo_add_mpirun_test(doc.${doc_name}.${count} 2 $<TARGET_FILE:${name}>)
        else()
          target_link_libraries(${name} PRIVATE ordo::ordo)
          add_test(NAME doc.${doc_name}.${count} COMMAND ${name})
          ordo_test_environment(doc.${doc_name}.${count})
        endif()
      elseif(inside)
        string(APPEND code "${line}\n")
      endif()
    endforeach()
  endforeach()
endfunction()

# Where the CUDA toolkit is installed, nvcc compiles the pure layer (planner and its compile-time
# facts) as CUDA C++. The Kokkos layer needs a CUDA-enabled Kokkos: see the cuda preset.
function(ordo_add_nvcc_tests)
  find_program(ORDO_NVCC nvcc PATHS /usr/local/cuda/bin)
  if(NOT ORDO_NVCC)
    return()
  endif()
  foreach(source examples/chain_planning.cpp tests/support/nvcc_planner.cu)
    get_filename_component(name "${source}" NAME_WE)
    add_test(NAME nvcc.${name}
             COMMAND "${ORDO_NVCC}" -std=c++20 -x cu -I "${PROJECT_SOURCE_DIR}/include" -c
                     "${PROJECT_SOURCE_DIR}/${source}" -o "${CMAKE_CURRENT_BINARY_DIR}/nvcc_${name}.o")
  endforeach()
endfunction()

# ordo_add_mpirun_test(name ranks command...): runs command under mpirun with `ranks` ranks, one
# OpenMP thread each, and a timeout, so that a hanging rank fails the test. LeakSanitizer is off
# for these: Open MPI 4.1 leaves allocations behind at MPI_Finalize and unloads the components
# that made them, so their leaks cannot be told from ordo's (the same kernels run leak-checked
# in the single-process tests); AddressSanitizer's other checks and UBSan stay on.
function(ordo_add_mpirun_test name ranks)
  add_test(NAME ${name} COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} --oversubscribe
                                ${MPIEXEC_PREFLAGS} ${ARGN} ${MPIEXEC_POSTFLAGS})
  set_tests_properties(${name} PROPERTIES TIMEOUT 180 PROCESSORS 2
    ENVIRONMENT "OMP_NUM_THREADS=1;OMP_PROC_BIND=false;ORDO_TEST_THREADS=1;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_btl_vader_single_copy_mechanism=none;ASAN_OPTIONS=detect_leaks=0")
endfunction()
