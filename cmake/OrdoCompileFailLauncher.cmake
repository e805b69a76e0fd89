# The compiler launcher of the must-not-compile cases (ordo_add_compile_fail_tests):
#   cmake -DRECORD=<file> -P OrdoCompileFailLauncher.cmake -- <compile command...>
# Runs the compile command and writes its exit status and diagnostics to RECORD, for the test
# compile_fail.<case> to check. Exits 0 either way, so a build runs every case in parallel; when
# the compile failed, as it should, it leaves an empty object file and a dependency file behind,
# so the build tool sees the step done and repeats it when the case or a header it includes changes.
set(command)
set(collect OFF)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE 1 ${last})
  if(collect)
    list(APPEND command "${CMAKE_ARGV${i}}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(collect ON)
  endif()
endforeach()
if(NOT command OR NOT RECORD)
  message(FATAL_ERROR "usage: cmake -DRECORD=<file> -P OrdoCompileFailLauncher.cmake -- <compile command>")
endif()

execute_process(COMMAND ${command} RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
file(WRITE "${RECORD}" "exit status: ${result}\n${output}")
if(result EQUAL 0)
  return()
endif()

# The object (-o) and the dependency file (-MF) the build tool expects.
list(FIND command "-o" at)
if(at GREATER -1)
  math(EXPR at "${at} + 1")
  list(GET command ${at} object)
  file(TOUCH "${object}")
  list(FIND command "-MF" dep_at)
  if(dep_at GREATER -1)
    # Preprocessing alone succeeds where compiling fails, and writes the dependencies.
    set(preprocess ${command})
    list(TRANSFORM preprocess REPLACE "^-c$" "-E")
    list(REMOVE_AT preprocess ${at})
    list(INSERT preprocess ${at} "${object}.ii")
    execute_process(COMMAND ${preprocess} RESULT_VARIABLE ignored OUTPUT_QUIET ERROR_QUIET)
    file(REMOVE "${object}.ii")
  endif()
endif()
