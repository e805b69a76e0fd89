# Helpers for ordo's own tests: warnings, per-space kernel tests, header self-containment,
# must-not-compile cases and consumer builds.

set(ORDO_TEST_THREADS 2 CACHE STRING "OpenMP threads the tests run with")

function(ordo_target_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                             -Wnon-virtual-dtor -Wold-style-cast -Werror)
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

# Pure headers must compile without Kokkos; every public header must compile alone.
set(ORDO_PURE_HEADERS ordo/version.hpp ordo/shape.hpp ordo/chain.hpp)

function(ordo_add_header_tests)
  file(GLOB_RECURSE headers RELATIVE "${PROJECT_SOURCE_DIR}/include"
       CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/include/ordo/*.hpp")
  set(pure_sources)
  set(kokkos_sources)
  foreach(header IN LISTS headers)
    if(header MATCHES "/detail/")
      continue()
    endif()
    string(REGEX REPLACE "[/.]" "_" stem "${header}")
    set(source "${CMAKE_CURRENT_BINARY_DIR}/headers/${stem}.cpp")
    # Included twice to check the include guard as well.
    file(CONFIGURE OUTPUT "${source}" CONTENT "#include <${header}>\n#include <${header}>\n")
    if(header IN_LIST ORDO_PURE_HEADERS)
      list(APPEND pure_sources "${source}")
    else()
      list(APPEND kokkos_sources "${source}")
    endif()
  endforeach()
  add_library(ordo_headers_pure OBJECT EXCLUDE_FROM_ALL ${pure_sources})
  target_link_libraries(ordo_headers_pure PRIVATE ordo::core)
  ordo_target_warnings(ordo_headers_pure)
  add_library(ordo_headers_kokkos OBJECT EXCLUDE_FROM_ALL ${kokkos_sources})
  target_link_libraries(ordo_headers_kokkos PRIVATE ordo::ordo)
  ordo_target_warnings(ordo_headers_kokkos)
  foreach(kind pure kokkos)
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
    add_library(${target} OBJECT EXCLUDE_FROM_ALL "${case}")
    target_link_libraries(${target} PRIVATE ordo::core)
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
                     "-DARGS=${common}" -P "${PROJECT_SOURCE_DIR}/cmake/OrdoConsumerTest.cmake")
    set_tests_properties(consumer.${mode} PROPERTIES FIXTURES_REQUIRED ordo_installed)
    ordo_test_environment(consumer.${mode})
  endforeach()
endfunction()
