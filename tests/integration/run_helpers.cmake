# Functions the integration scripts share (include()d; not a test of its own).

# Runs `spec` (a command, arguments separated by '|'), which must succeed; `outvar`: its stdout.
function(run_one spec outvar)
  string(REPLACE "|" ";" cmd "${spec}")
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 300)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${cmd}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  set(${outvar} "${out}" PARENT_SCOPE)
endfunction()

# The lines of `text` that start with `regex`, as a list.
function(lines_of text regex outvar)
  string(REGEX MATCHALL "${regex}[^\n]*" found "${text}")
  set(${outvar} "${found}" PARENT_SCOPE)
endfunction()
