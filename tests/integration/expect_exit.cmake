# A command exits with code CODE and its stdout (with -DSTREAM=stderr: its stderr) matches
# REGEX; it must not hang.
#   cmake "-DCMD=prog|arg|arg" -DCODE=1 "-DREGEX=..." [-DSTREAM=stderr] -P expect_exit.cmake
string(REPLACE "|" ";" cmd "${CMD}")
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 120)
if(NOT rc EQUAL CODE)
  message(FATAL_ERROR "expected exit code ${CODE}, got '${rc}'\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(STREAM STREQUAL "stderr")
  set(out "${err}")
else()
  set(STREAM stdout)
endif()
if(NOT out MATCHES "${REGEX}")
  message(FATAL_ERROR "${STREAM} does not match '${REGEX}':\n${out}")
endif()
message(STATUS "exit ${CODE}: ${out}")
