# A command fails with exit code 2 (bad input) and its stderr matches REGEX; it must not hang.
# CLEAN: a directory to remove first (a trace the command would refuse to overwrite).
# TIMEOUT: seconds before the command counts as hung (default 120).
string(REPLACE "|" ";" cmd "${CMD}")
if(NOT TIMEOUT)
  set(TIMEOUT 120)
endif()
if(CLEAN)
  file(REMOVE_RECURSE "${CLEAN}")
endif()
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT ${TIMEOUT})
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "expected exit code 2, got '${rc}'\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(NOT err MATCHES "${REGEX}")
  message(FATAL_ERROR "stderr does not match '${REGEX}':\n${err}")
endif()
message(STATUS "exit 2: ${err}")
