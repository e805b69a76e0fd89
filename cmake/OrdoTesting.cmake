# Helpers for ordo's own tests: warnings, per-space kernel tests, header self-containment,
# must-not-compile cases and consumer builds.

set(ORDO_TEST_THREADS 2 CACHE STRING "OpenMP threads the tests run with")

# What a test build covers (docs/development.md, "Test scope"). Every check runs in at least one
# CI preset; the checks that prove the same thing in any configuration run in one.
set(ORDO_TEST_SPACES all CACHE STRING
    "Execution spaces the kernel tests are instantiated for: all (every enabled space) or default (Kokkos::DefaultExecutionSpace)")
set_property(CACHE ORDO_TEST_SPACES PROPERTY STRINGS all default)
if(NOT ORDO_TEST_SPACES MATCHES "^(all|default)$")
  message(FATAL_ERROR "ordo: ORDO_TEST_SPACES is '${ORDO_TEST_SPACES}'; expected all or default")
endif()
option(ORDO_TEST_VARIANTS "Rebuild tests for AVX2, FMA contraction and -ffast-math" ON)
option(ORDO_TEST_DOCS "Compile and run the docs' code blocks, build the docs site, compile the planner with nvcc" ON)
option(ORDO_TEST_INSTALL "Install ordo and build consumer projects against it" ON)
# The asan-ubsan preset compiles at -O0, where batch_norm_test compiles in 41 s instead of 177 s
# at -O1; the tests whose run time is arithmetic (the exact sums: 185 s at -O0 against 51 s at
# -O1 under the sanitizers) and the fuzzer (inputs per second) get these options on top.
set(ORDO_TEST_ARITHMETIC_FLAGS "" CACHE STRING
    "Compile options for the arithmetic-bound tests and fuzzers (reduce_test, chain_fuzz) on top of the build's own")
option(ORDO_TEST_HEADERS "Compile every header alone" ON)
option(ORDO_TEST_COMPILE_FAIL "Check the diagnostics of the must-not-compile cases" ON)
option(ORDO_TEST_CORE "Build and run the pure layer's tests (ordo::core, ordo-plan)" ON)
option(ORDO_TEST_MPI "Build and run the MPI layer's tests under mpirun (when MPI is found)" ON)

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
    if(CMAKE_CXX_COMPILER MATCHES "nvcc" OR "ordo::ordo" IN_LIST libraries OR "ordo_test_main" IN_LIST libraries
       OR "ordo::mpi" IN_LIST libraries OR "ordo_mpi_test_main" IN_LIST libraries)
      set(nvcc ON)
    endif()
  endif()
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wnon-virtual-dtor -Werror)
  if(nvcc)
    # -Werror reaches the host compiler only; nvcc's own warnings (its front end's) fail the build
    # through all-warnings.
    target_compile_options(${target} PRIVATE -Werror=cross-execution-space-call -Werror=all-warnings)
  else()
    target_compile_options(${target} PRIVATE -Wold-style-cast)
  endif()
endfunction()

# ordo_test_environment(test [THREADED]): the environment every test runs with. A THREADED test
# (one that starts Kokkos' OpenMP threads) holds ORDO_TEST_THREADS of ctest's -j slots
# (PROCESSORS), so ctest -j2 on 2 cores never runs two of them at once: oversubscribed, libgomp's
# spinning barriers wait on descheduled threads (batch_norm_test took 52 s and mask_test 45 s
# under ctest -j2 at 44fc0bb; alone, 2 s and 0.1 s).
function(ordo_test_environment test)
  cmake_parse_arguments(arg "THREADED" "" "" ${ARGN})
  set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT
    "OMP_NUM_THREADS=${ORDO_TEST_THREADS}" "OMP_PROC_BIND=false"
    "ORDO_TEST_THREADS=${ORDO_TEST_THREADS}" "ORDO_FIXTURE_DIR=${PROJECT_SOURCE_DIR}/tests/fixtures")
  if(arg_THREADED)
    set_property(TEST ${test} PROPERTY PROCESSORS ${ORDO_TEST_THREADS})
  endif()
endfunction()

# ordo_add_test(name [KOKKOS] SOURCES ...): KOKKOS tests get the Kokkos-initializing main
# (ordo_test_main), the others doctest's own, compiled once for all of them (ordo_test_main_pure).
function(ordo_add_test name)
  cmake_parse_arguments(arg "KOKKOS" "" "SOURCES" ${ARGN})
  add_executable(${name} ${arg_SOURCES})
  target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}/tests")
  if(arg_KOKKOS)
    target_link_libraries(${name} PRIVATE ordo_test_main ordo::ordo doctest::doctest)
    if(ORDO_TEST_SPACES STREQUAL "default")
      target_compile_definitions(${name} PRIVATE ORDO_TEST_DEFAULT_SPACE_ONLY)
    endif()
  else()
    if(NOT TARGET ordo_test_main_pure)
      add_library(ordo_test_main_pure OBJECT "${PROJECT_SOURCE_DIR}/tests/support/doctest_main.cpp")
      target_link_libraries(ordo_test_main_pure PUBLIC doctest::doctest)
      ordo_target_warnings(ordo_test_main_pure)
    endif()
    target_link_libraries(${name} PRIVATE ordo_test_main_pure ordo::core doctest::doctest)
  endif()
  ordo_target_warnings(${name})
  add_test(NAME ${name} COMMAND ${name})
  if(arg_KOKKOS)
    ordo_test_environment(${name} THREADED)
  else()
    ordo_test_environment(${name})
  endif()
endfunction()

# Every header, detail ones included, must compile alone; the pure layer (ordo/core.hpp and
# ordo/core/) against ordo::core, which has no Kokkos, so a Kokkos include there fails the build.
# The headers compile in the build phase, in parallel with everything else; the tests headers.<kind>
# ask the build tool whether they are up to date (a no-op after a good build). No precompiled
# header ever reaches these targets: they prove that each header brings what it needs.
function(ordo_add_header_tests)
  if(NOT ORDO_TEST_HEADERS)
    return()
  endif()
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
    # Distributed chains need ScaLAPACK; the rest of ordo::mpi does not.
    if(header MATCHES "^ordo/mpi/(distributed_|process_grid|detail/scalapack)" AND NOT ORDO_HAS_SCALAPACK)
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
  add_library(ordo_headers_pure OBJECT ${pure_sources})
  target_link_libraries(ordo_headers_pure PRIVATE ordo::core)
  ordo_target_warnings(ordo_headers_pure)
  set(kinds pure)
  if(TARGET ordo::ordo)
    add_library(ordo_headers_kokkos OBJECT ${kokkos_sources})
    target_link_libraries(ordo_headers_kokkos PRIVATE ordo::ordo)
    ordo_target_warnings(ordo_headers_kokkos)
    list(APPEND kinds kokkos)
  endif()
  # The umbrella header in the configurations this build is not: a BLAS without LAPACK, and
  # neither (the macros the found libraries define, taken away again): code for a library that is
  # absent must not even be named there.
  if(TARGET ordo::ordo AND ORDO_HAS_BLAS AND NOT ORDO_KOKKOS_CUDA)
    set(fewer_sources)
    foreach(variant IN ITEMS without_lapack without_blas)
      set(source "${CMAKE_CURRENT_BINARY_DIR}/headers/ordo_hpp_${variant}.cpp")
      file(CONFIGURE OUTPUT "${source}" CONTENT "#include <ordo/ordo.hpp>\n")
      list(APPEND fewer_sources "${source}")
    endforeach()
    add_library(ordo_headers_fewer_libraries OBJECT ${fewer_sources})
    target_link_libraries(ordo_headers_fewer_libraries PRIVATE ordo::ordo)
    ordo_target_warnings(ordo_headers_fewer_libraries)
    set_source_files_properties("${CMAKE_CURRENT_BINARY_DIR}/headers/ordo_hpp_without_lapack.cpp"
                                PROPERTIES COMPILE_OPTIONS "-UORDO_HAS_LAPACK")
    set_source_files_properties("${CMAKE_CURRENT_BINARY_DIR}/headers/ordo_hpp_without_blas.cpp"
                                PROPERTIES COMPILE_OPTIONS "-UORDO_HAS_LAPACK;-UORDO_HAS_BLAS")
    list(APPEND kinds fewer_libraries)
  endif()
  # A build that targets AVX-512 itself (-march=native on such a CPU) takes code paths of its own
  # (fast_exp's AVX-512 form is then forced inline rather than the twins' target function): the
  # softmax kernels instantiated under those flags, compiled only (the CPU need not have AVX-512).
  if(TARGET ordo::ordo AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64" AND NOT ORDO_KOKKOS_CUDA)
    set(source "${CMAKE_CURRENT_BINARY_DIR}/headers/softmax_avx512_build.cpp")
    file(CONFIGURE OUTPUT "${source}" CONTENT "#include <ordo/nn/softmax.hpp>\n\
void softmax_avx512_build(const Kokkos::View<float**, Kokkos::LayoutRight>& x,\n\
                          const Kokkos::View<float**, Kokkos::LayoutRight>& y) {\n\
  ordo::nn::softmax(x, y);\n\
}\n")
    add_library(ordo_headers_avx512_build OBJECT "${source}")
    target_link_libraries(ordo_headers_avx512_build PRIVATE ordo::ordo)
    ordo_target_warnings(ordo_headers_avx512_build)
    target_compile_options(ordo_headers_avx512_build PRIVATE -mavx512f -mavx512bw -mavx512dq -mavx512vl -mf16c)
    list(APPEND kinds avx512_build)
  endif()
  if(TARGET ordo::mpi)
    add_library(ordo_headers_mpi OBJECT ${mpi_sources})
    target_link_libraries(ordo_headers_mpi PRIVATE ordo::mpi)
    ordo_target_warnings(ordo_headers_mpi)
    list(APPEND kinds mpi)
  endif()
  foreach(kind IN LISTS kinds)
    add_test(NAME headers.${kind}
             COMMAND "${CMAKE_COMMAND}" --build "${PROJECT_BINARY_DIR}" --target ordo_headers_${kind})
    set_tests_properties(headers.${kind} PROPERTIES RESOURCE_LOCK ordo_build)
  endforeach()
  # Which layer may include which (docs/architecture.md, "Layers"), and no include cycles.
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    add_test(NAME headers.layers COMMAND "${Python3_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/tests/layering/check_layers.py"
                                         "${PROJECT_SOURCE_DIR}/include")
  else()
    message(STATUS "ordo: Python 3 not found; headers.layers (the layering check) is not registered")
  endif()
endfunction()

# Each source in DIR is a must-not-compile case. Its comments name the diagnostic text expected:
#   // expect: text                   (any compiler)
#   // expect-gcc: text / expect-clang: text
#   // expect-compiles                (proves the harness fails when a source compiles)
#   // expect-harness-failure         (proves the harness fails on a different diagnostic)
# Each case is an object target built in the build phase, in parallel, through a compiler launcher
# (cmake/OrdoCompileFailLauncher.cmake) that runs the real compile command, records its exit
# status and diagnostics, and lets the build go on. The test compile_fail.<case> then checks the
# record (cmake/OrdoCheckCompileFail.cmake): the compile must have failed with every expected text.
function(ordo_add_compile_fail_tests dir)
  if(NOT ORDO_TEST_COMPILE_FAIL)
    return()
  endif()
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
    # "// max-lines: N": the whole diagnostic (every line the compiler printed) is at most N lines;
    # "// first-error[-gcc|-clang]: text": the first line with " error: " contains text;
    # "// reject: text": the diagnostic does not contain text.
    set(max_lines 0)
    set(first_error)
    set(rejected)
    file(STRINGS "${case}" limits REGEX "^// (max-lines|first-error|reject)")
    foreach(line IN LISTS limits)
      if(line MATCHES "^// reject: (.*)$")
        list(APPEND rejected "${CMAKE_MATCH_1}")
      elseif(line MATCHES "^// max-lines: ([0-9]+)$")
        set(max_lines ${CMAKE_MATCH_1})
      elseif(line MATCHES "^// first-error: (.*)$")
        set(first_error "${CMAKE_MATCH_1}")
      elseif(line MATCHES "^// first-error-${compiler_key}: (.*)$")
        set(first_error "${CMAKE_MATCH_1}")
      endif()
    endforeach()
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
    # ... and those of distributed chains with "// needs: scalapack".
    file(STRINGS "${case}" needs_scalapack REGEX "^// needs: scalapack")
    if(needs_scalapack AND NOT ORDO_HAS_SCALAPACK)
      continue()
    endif()
    set(record "${CMAKE_CURRENT_BINARY_DIR}/compile_fail/${name}.log")
    add_library(${target} OBJECT "${case}")
    if(needs_mpi)
      target_link_libraries(${target} PRIVATE ordo::mpi)
    elseif(needs_kokkos)
      target_link_libraries(${target} PRIVATE ordo::ordo)
    else()
      target_link_libraries(${target} PRIVATE ordo::core)
    endif()
    # The launcher replaces ccache for these: a failed compile is never cached anyway.
    set_target_properties(${target} PROPERTIES CXX_COMPILER_LAUNCHER
      "${CMAKE_COMMAND};-DRECORD=${record};-P;${PROJECT_SOURCE_DIR}/cmake/OrdoCompileFailLauncher.cmake;--")
    if(expect_compiles)
      list(APPEND expected "this text is never printed by a compiler")
    endif()
    string(REPLACE ";" "|" expected_arg "${expected}")
    string(REPLACE ";" "|" rejected_arg "${rejected}")
    add_test(NAME compile_fail.${name}
             COMMAND "${CMAKE_COMMAND}" -DRECORD=${record} -DTARGET=${target}
                     "-DEXPECTED=${expected_arg}" -DMAX_LINES=${max_lines} "-DFIRST_ERROR=${first_error}"
                     "-DREJECTED=${rejected_arg}"
                     -P "${PROJECT_SOURCE_DIR}/cmake/OrdoCheckCompileFail.cmake")
    if(expect_compiles OR harness_failure)
      set_tests_properties(compile_fail.${name} PROPERTIES WILL_FAIL TRUE)
    endif()
  endforeach()
endfunction()

# Builds and runs DIR as a separate project twice: against an installed ordo through
# find_package(ordo), and through add_subdirectory of this source tree.
function(ordo_add_consumer_tests dir)
  if(NOT ORDO_TEST_INSTALL)
    return()
  endif()
  set(prefix "${CMAKE_CURRENT_BINARY_DIR}/consumer/install")
  # find_package's consumer gets no Kokkos_DIR: the installed config must find the Kokkos ordo was
  # built against by itself, so that a consumer needs only ordo's prefix.
  set(find_package_common -G "${CMAKE_GENERATOR}" -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
                          -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE} -DBoost_DIR=${Boost_DIR})
  set(add_subdirectory_common ${find_package_common} -DKokkos_DIR=${Kokkos_DIR})
  add_test(NAME consumer.install
           COMMAND "${CMAKE_COMMAND}" --install "${PROJECT_BINARY_DIR}" --prefix "${prefix}")
  set_tests_properties(consumer.install PROPERTIES FIXTURES_SETUP ordo_installed)
  foreach(mode find_package add_subdirectory)
    set(build "${CMAKE_CURRENT_BINARY_DIR}/consumer/${mode}")
    add_test(NAME consumer.${mode}
             COMMAND "${CMAKE_COMMAND}" -DSOURCE=${dir} -DBUILD=${build}
                     -DMODE=${mode} -DPREFIX=${prefix} -DORDO_SOURCE=${PROJECT_SOURCE_DIR}
                     -DEXPECT_MPI=${ORDO_HAS_MPI} "-DARGS=${${mode}_common}"
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
    if(mode STREQUAL "core_install")
      set_tests_properties(consumer.${mode} PROPERTIES FIXTURES_SETUP ordo_core_installed)
    endif()
  endforeach()
  # find_package(ordo) without components means core + kernels: it must fail, with ordo's own
  # message naming COMPONENTS core, against a core-only install and when Kokkos cannot be found.
  add_test(NAME consumer.fails_core_install_without_components
           COMMAND "${CMAKE_COMMAND}" -DSOURCE=${dir} -DBUILD=${CMAKE_CURRENT_BINARY_DIR}/consumer/fails_core
                   -DMODE=fails_core_install -DPREFIX=${CMAKE_CURRENT_BINARY_DIR}/consumer/install_core
                   "-DEXPECT=this ordo was installed with ORDO_WITH_KOKKOS=OFF: it has only the pure layer; ask for it with find_package(ordo COMPONENTS core)"
                   "-DARGS=${core_common}" -P "${PROJECT_SOURCE_DIR}/cmake/OrdoConsumerTest.cmake")
  set_tests_properties(consumer.fails_core_install_without_components PROPERTIES FIXTURES_REQUIRED ordo_core_installed)
  set(without_kokkos ${core_common} -DCMAKE_DISABLE_FIND_PACKAGE_Kokkos=ON)
  add_test(NAME consumer.fails_without_kokkos
           COMMAND "${CMAKE_COMMAND}" -DSOURCE=${dir} -DBUILD=${CMAKE_CURRENT_BINARY_DIR}/consumer/fails_kokkos
                   -DMODE=fails_without_kokkos -DPREFIX=${prefix}
                   "-DEXPECT=ordo's Kokkos layer (ordo::ordo) needs Kokkos >= 3.4, which CMake did not find"
                   "-DARGS=${without_kokkos}" -P "${PROJECT_SOURCE_DIR}/cmake/OrdoConsumerTest.cmake")
  set_tests_properties(consumer.fails_without_kokkos PROPERTIES FIXTURES_REQUIRED ordo_installed)
  # Configure with -DBUILD_TESTING=OFF and install before building (about 2 s).
  add_test(NAME consumer.fresh_install
           COMMAND "${CMAKE_COMMAND}" -DBUILD=${CMAKE_CURRENT_BINARY_DIR}/consumer/fresh_install -DMODE=fresh_install
                   -DORDO_SOURCE=${PROJECT_SOURCE_DIR} "-DARGS=${without_kokkos}"
                   -P "${PROJECT_SOURCE_DIR}/cmake/OrdoConsumerTest.cmake")
endfunction()

# Every ```cpp block of README.md and docs/*.md is a complete program: each is compiled and run,
# so the documentation cannot drift from the code. A page's blocks compile as one translation
# unit, doc_<page> (doc_<page>_mpi for those that include <ordo/mpi.hpp>): each block in a
# namespace of its own, its includes hoisted above them, with #line pointing diagnostics at the
# Markdown, and a main that runs block N in its own process (doc_<page> N; test doc.<page>.N).
# So a block's main must end with a return.
function(ordo_add_doc_snippet_tests)
  if(NOT ORDO_TEST_DOCS)
    return()
  endif()
  file(GLOB docs CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/docs/*.md")
  list(PREPEND docs "${PROJECT_SOURCE_DIR}/README.md")
  foreach(doc IN LISTS docs)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${doc}")
    get_filename_component(doc_name "${doc}" NAME_WE)
    file(RELATIVE_PATH doc_path "${PROJECT_SOURCE_DIR}" "${doc}")
    file(READ "${doc}" text)
    # Protect semicolons and brackets from CMake's list handling.
    string(REPLACE ";" "<ordo-semicolon>" text "${text}")
    string(REPLACE "[" "<ordo-open>" text "${text}")
    string(REPLACE "]" "<ordo-close>" text "${text}")
    string(REPLACE "\n" ";" lines "${text}")
    set(inside OFF)
    set(count 0)
    set(line_number 0)
    foreach(kind plain mpi)
      set(${kind}_blocks)
      set(${kind}_includes)
      set(${kind}_code "")
    endforeach()
    foreach(line IN LISTS lines)
      math(EXPR line_number "${line_number} + 1")
      if(NOT inside AND line MATCHES "^```cpp *$")
        set(inside ON)
        set(code "")
        set(includes)
        math(EXPR first_line "${line_number} + 1")
      elseif(inside AND line MATCHES "^``` *$")
        set(inside OFF)
        math(EXPR count "${count} + 1")
        set(kind plain)
        if(includes MATCHES "#include <ordo/mpi")
          set(kind mpi)
        endif()
        list(APPEND ${kind}_blocks ${count})
        list(APPEND ${kind}_includes ${includes})
        string(APPEND ${kind}_code "namespace ordo_doc_block_${count} {\n#line ${first_line} \"${doc_path}\"\n"
                                   "${code}}  // namespace ordo_doc_block_${count}\n\n")
      elseif(inside AND line MATCHES "^[ \t]*#[ \t]*include")
        # Hoisted above the namespaces; an empty line keeps #line right.
        list(APPEND includes "${line}")
        string(APPEND code "\n")
      elseif(inside)
        string(APPEND code "${line}\n")
      endif()
    endforeach()
    foreach(kind plain mpi)
      if(NOT ${kind}_blocks OR (kind STREQUAL "mpi" AND (NOT TARGET ordo::mpi OR NOT ORDO_TEST_MPI)))
        continue()
      endif()
      set(name doc_${doc_name})
      if(kind STREQUAL "mpi")
        set(name doc_${doc_name}_mpi)
      endif()
      list(REMOVE_DUPLICATES ${kind}_includes)
      list(JOIN ${kind}_includes "\n" include_lines)
      list(JOIN ${kind}_blocks ", " block_list)
      set(cases "")
      foreach(block IN LISTS ${kind}_blocks)
        string(APPEND cases "    case ${block}: return ordo_doc_run(ordo_doc_block_${block}::main, argc, argv);\n")
      endforeach()
      string(CONCAT source "// Generated by cmake/OrdoTesting.cmake from the cpp blocks of ${doc_path}: run as ${name} N.\n"
                 "${include_lines}\n\n#include <cstdio>\n#include <cstdlib>\n#include <type_traits>\n\n"
                 "template <class Main>\nint ordo_doc_run(Main main, int argc, char** argv) {\n"
                 "  if constexpr (std::is_invocable_v<Main, int, char**>) {\n    return main(argc, argv)<ordo-semicolon>\n"
                 "  } else {\n    return main()<ordo-semicolon>\n  }\n}\n\n"
                 "${${kind}_code}")
      # Diagnostics in what follows point at the generated file again.
      string(REGEX MATCHALL "\n" newlines "${source}")
      list(LENGTH newlines line_count)
      math(EXPR line_count "${line_count} + 2")
      string(APPEND source "#line ${line_count} \"${name}.cpp\"\n"
                 "int main(int argc, char** argv) {\n"
                 "  const int block = argc > 1 ? std::atoi(argv<ordo-open>1<ordo-close>) : 0<ordo-semicolon>\n"
                 "  if (block > 0) {\n    argv<ordo-open>1<ordo-close> = argv<ordo-open>0<ordo-close><ordo-semicolon>\n"
                 "    --argc<ordo-semicolon>\n    ++argv<ordo-semicolon>\n  }\n"
                 "  switch (block) {\n${cases}    default: break<ordo-semicolon>\n  }\n"
                 "  std::fprintf(stderr, \"usage: %s N, N a cpp block of ${doc_path}: ${block_list}\\n\", argv<ordo-open>0<ordo-close>)<ordo-semicolon>\n"
                 "  return 2<ordo-semicolon>\n}\n")
      string(REPLACE "<ordo-semicolon>" ";" source "${source}")
      string(REPLACE "<ordo-open>" "[" source "${source}")
      string(REPLACE "<ordo-close>" "]" source "${source}")
      file(CONFIGURE OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/doc_snippets/${name}.cpp" CONTENT "${source}" @ONLY)
      add_executable(${name} "${CMAKE_CURRENT_BINARY_DIR}/doc_snippets/${name}.cpp")
      if(kind STREQUAL "mpi")
        target_link_libraries(${name} PRIVATE ordo::mpi)
      else()
        target_link_libraries(${name} PRIVATE ordo::ordo)
      endif()
      ordo_target_warnings(${name})
      foreach(block IN LISTS ${kind}_blocks)
        if(kind STREQUAL "mpi")
          ordo_add_mpirun_test(doc.${doc_name}.${block} 2 $<TARGET_FILE:${name}> ${block})
        else()
          add_test(NAME doc.${doc_name}.${block} COMMAND ${name} ${block})
          ordo_test_environment(doc.${doc_name}.${block} THREADED)
        endif()
      endforeach()
    endforeach()
  endforeach()
endfunction()

# Where the CUDA toolkit is installed, nvcc compiles the pure layer (planner and its compile-time
# facts) as CUDA C++. The Kokkos layer needs a CUDA-enabled Kokkos: see the cuda preset.
function(ordo_add_nvcc_tests)
  if(NOT ORDO_TEST_DOCS)
    return()
  endif()
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
