# Records CMD with `strads record -o DIR`, then checks `strads trace info DIR`: complete, NODES
# nodes, and every node's line of event counts matches EXPECT.
#   cmake -DSTRADS=strads -DDIR=dir -DNODES=4 -DEXPECT=regex -DCMD="a|b|c" -P record_check.cmake
string(REPLACE "|" ";" cmd "${CMD}")
file(REMOVE_RECURSE ${DIR})
execute_process(COMMAND ${STRADS} record -o ${DIR} -- ${cmd}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 170)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "strads record failed (${rc}):\n${out}\n${err}")
endif()
execute_process(COMMAND ${STRADS} trace info ${DIR} RESULT_VARIABLE rc OUTPUT_VARIABLE info
                ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "strads trace info failed (${rc}): ${err}")
endif()
if(NOT info MATCHES ": complete" OR info MATCHES "[Ii][Nn][Cc][Oo][Mm][Pp][Ll][Ee][Tt][Ee]")
  message(FATAL_ERROR "trace not complete:\n${info}")
endif()
if(NOT info MATCHES "nodes: ${NODES},")
  message(FATAL_ERROR "expected ${NODES} nodes:\n${info}")
endif()
math(EXPR last "${NODES} - 1")
foreach(node RANGE ${last})
  string(REGEX MATCH "node ${node}: complete\n  events: [^\n]*" line "${info}")
  if(NOT line MATCHES "${EXPECT}")
    message(FATAL_ERROR "node ${node}: '${line}' does not match '${EXPECT}':\n${info}")
  endif()
endforeach()
message(STATUS "${info}")
