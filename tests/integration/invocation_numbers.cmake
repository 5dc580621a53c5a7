# Records CMD with `strads record -o DIR` and checks that node 0's trace numbers the calls of
# the AsyncFor in SITE (a file name) 0, 1, ..., CALLS - 1, in order.
#   cmake -DSTRADS=strads -DDIR=dir -DCMD="a|b|c" -DSITE=prog.cc -DCALLS=12 -P invocation_numbers.cmake
string(REPLACE "|" ";" cmd "${CMD}")
file(REMOVE_RECURSE ${DIR})
execute_process(COMMAND ${STRADS} record -o ${DIR} -- ${cmd}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 100)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "strads record failed (${rc}):\n${out}\n${err}")
endif()
execute_process(COMMAND ${STRADS} trace dump ${DIR} --node 0
                RESULT_VARIABLE rc OUTPUT_VARIABLE dump ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "strads trace dump failed (${rc}): ${err}")
endif()
string(REGEX MATCHALL "operator_begin AsyncFor [^\n]*${SITE}:[0-9]+ \\(invocation [0-9]+\\)"
       begins "${dump}")
set(seen "")
foreach(line IN LISTS begins)
  string(REGEX REPLACE ".*\\(invocation ([0-9]+)\\)" "\\1" n "${line}")
  list(APPEND seen ${n})
endforeach()
math(EXPR last "${CALLS} - 1")
set(expected "")
foreach(n RANGE ${last})
  list(APPEND expected ${n})
endforeach()
if(NOT seen STREQUAL expected)
  message(FATAL_ERROR "the AsyncFor in ${SITE}: invocations '${seen}', expected '${expected}':\n${dump}")
endif()
message(STATUS "the AsyncFor in ${SITE}: invocations ${seen}")
