# cmake -DBUILD_DIR=... -DTARGET=... -DEXPECTED=text|text -P OrdoCheckCompileFail.cmake
# Passes only when building TARGET fails and the diagnostics contain every expected text.
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --target "${TARGET}"
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(result EQUAL 0)
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
