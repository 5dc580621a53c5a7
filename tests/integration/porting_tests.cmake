# What a port of a serial program written elsewhere runs into (issue 19): each test is a small
# program with the port's mistake and the error that must name it.

# --nodes P shares the program's globals between its logical nodes: the timeout says so.
add_executable(shared_global ${STRADS_TEST_SCRIPTS}/shared_global.cc)
target_link_libraries(shared_global PRIVATE strads::strads)
add_test(NAME nodes_share_globals
  COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:shared_global>|--nodes|2|--timeout|2"
          -DCODE=1 -DSTREAM=stderr
          "-DREGEX=waited 2 s for a message .*under --nodes the logical nodes are threads of one process and share its global and static variables"
          -P ${STRADS_TEST_SCRIPTS}/expect_exit.cmake)
set_tests_properties(nodes_share_globals PROPERTIES TIMEOUT 60)

