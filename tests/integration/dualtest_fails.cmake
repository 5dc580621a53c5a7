# A dual test of a program with an injected bug fails, naming the first differing iteration.
#   cmake -DSTRADS=strads -DBUG=conflicting-round|aggregation-order -DARGS="dualtest|...|--|prog|..."
#         -DREGEX=... -P dualtest_fails.cmake
# Passes only if `strads dualtest` exits 1, both tests report FAIL and the output matches REGEX.
# Also runs the same command without the bug, which must pass: the failure is the bug's.
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND ${STRADS} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err TIMEOUT 240)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "without the bug the dual test must pass, got '${rc}':\n${out}\n${err}")
endif()
set(ENV{STRADS_INJECT_BUG} "${BUG}")
execute_process(COMMAND ${STRADS} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err TIMEOUT 240)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "with STRADS_INJECT_BUG=${BUG} expected exit code 1, got '${rc}':\n"
                      "${out}\n${err}")
endif()
foreach(test forward backward)
  if(NOT out MATCHES "${test}: FAIL: ")
    message(FATAL_ERROR "no '${test}: FAIL' line:\n${out}")
  endif()
endforeach()
if(NOT out MATCHES "verdict: FAIL")
  message(FATAL_ERROR "no 'verdict: FAIL' line:\n${out}")
endif()
if(NOT out MATCHES "${REGEX}")
  message(FATAL_ERROR "output does not match '${REGEX}':\n${out}")
endif()
message(STATUS "${out}")
