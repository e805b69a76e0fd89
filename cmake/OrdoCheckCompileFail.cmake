# cmake -DRECORD=<file> -DTARGET=<case> -DEXPECTED=text|text -P OrdoCheckCompileFail.cmake
# Passes only when the build's compile of the case (recorded in RECORD by
# OrdoCompileFailLauncher.cmake) failed and its diagnostics contain every expected text.
if(NOT EXISTS "${RECORD}")
  message(FATAL_ERROR "must-not-compile case ${TARGET}: no record ${RECORD}; build the project first")
endif()
file(READ "${RECORD}" output)
if(output MATCHES "^exit status: 0\n")
  message(FATAL_ERROR "must-not-compile case ${TARGET} compiled")
endif()
string(REPLACE "|" ";" EXPECTED "${EXPECTED}")
foreach(text IN LISTS EXPECTED)
  string(FIND "${output}" "${text}" where)
  if(where EQUAL -1)
    message("${output}")
    message(FATAL_ERROR "must-not-compile case ${TARGET} failed, but without the text: ${text}")
  endif()
endforeach()
message(STATUS "${TARGET} failed to compile with the expected diagnostics")
