# Dual testing (strads dualtest, --test-mode, --dual-in/--dual-out): the examples' own dual
# tests are registered in examples/CMakeLists.txt with strads_add_dual_test. Here: dual tests
# catch injected bugs and name the first differing iteration; bad .dual files and bad usage are
# refused with exit code 2 and a message naming the file and line; the installed package works.
set(DUAL_SGDMF "$<TARGET_FILE:sgdmf>|--ratings|20000|--users|1000|--items|300|--epochs|2")
set(DUAL_MLR "$<TARGET_FILE:mlr>|--samples|3000|--features|200|--classes|4|--epochs|3")
set(DUAL_WORK ${CMAKE_CURRENT_BINARY_DIR}/dualtest)

# A scheduler that puts two conflicting groups in one round (on different nodes: their updates
# of the shared block are lost), in-process and under mpiexec.
add_test(NAME dualtest_catches_conflicting_round
  COMMAND ${CMAKE_COMMAND} -DSTRADS=$<TARGET_FILE:strads> -DBUG=conflicting-round
          "-DARGS=dualtest|--nodes|2|--threads|1|--work|${DUAL_WORK}/conflicting_round|--|${DUAL_SGDMF}"
          "-DREGEX=forward: FAIL: first difference at iteration 1 \\(AsyncFor at sgdmf.cc:[0-9]+, invocation 0\\)[^\n]*\n  output: first difference at epoch 1: serial 'epoch 1 rmse"
          -P ${STRADS_TEST_SCRIPTS}/dualtest_fails.cmake)
add_test(NAME dualtest_catches_conflicting_round_mpi
  COMMAND ${CMAKE_COMMAND} -DSTRADS=$<TARGET_FILE:strads> -DBUG=conflicting-round
          "-DARGS=dualtest|--nodes|2|--threads|1|--mpi|--mpiexec|${MPIEXEC_EXECUTABLE}|--work|${DUAL_WORK}/conflicting_round_mpi|--|${DUAL_SGDMF}"
          "-DREGEX=backward: FAIL: first difference at iteration 1 \\(AsyncFor at sgdmf.cc:[0-9]+, invocation 0\\)"
          -P ${STRADS_TEST_SCRIPTS}/dualtest_fails.cmake)
# BSP aggregation summing the node updates in reverse order (4 nodes: with 2 the sum would
# commute). The printed loss is equal to 6 digits; the state after iteration 1 is not.
add_test(NAME dualtest_catches_aggregation_order
  COMMAND ${CMAKE_COMMAND} -DSTRADS=$<TARGET_FILE:strads> -DBUG=aggregation-order
          "-DARGS=dualtest|--nodes|4|--threads|2|--work|${DUAL_WORK}/aggregation_order|--|${DUAL_MLR}"
          "-DREGEX=forward: FAIL: first difference at iteration 1 \\(SyncFor at mlr.cc:[0-9]+, invocation 0\\): serial state [0-9a-f]+ vs parallel state [0-9a-f]+"
          -P ${STRADS_TEST_SCRIPTS}/dualtest_fails.cmake)

# Untrusted .dual files: every defect is exit code 2 with the file and line.
set(DUAL_BAD ${CMAKE_CURRENT_BINARY_DIR}/dual_bad)
file(MAKE_DIRECTORY ${DUAL_BAD})
file(WRITE ${DUAL_BAD}/no_end.dual "strads-dual 1\nworkers 2 1\n")
file(WRITE ${DUAL_BAD}/short_order.dual
     "strads-dual 1\nworkers 2 1\nasyncfor 0 0 3 order x.cc:1\n3\n1\n")
file(WRITE ${DUAL_BAD}/bad_index.dual
     "strads-dual 1\nworkers 2 1\nasyncfor 0 0 2 order x.cc:1\n2\n-x\n1\nend\n")
file(WRITE ${DUAL_BAD}/wrong_program.dual
     "strads-dual 1\nworkers 2 1\nasyncfor 0 0 2 order x.cc:1\n2\n0\n1\nend\n")
file(WRITE ${DUAL_BAD}/not_dual.dual "0\n1\n2\n")
set(EXPECT_ERROR ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
add_test(NAME dual_in_truncated_no_end
  COMMAND ${CMAKE_COMMAND} "-DCMD=${DUAL_SGDMF}|--nodes|2|--dual-in|${DUAL_BAD}/no_end.dual"
          "-DREGEX=no_end.dual:2: truncated: no 'end' line" -P ${EXPECT_ERROR})
add_test(NAME dual_in_truncated_order_mpi
  COMMAND ${CMAKE_COMMAND}
          "-DCMD=${MPIEXEC_EXECUTABLE}|${MPIEXEC_NUMPROC_FLAG}|2|${DUAL_SGDMF}|--dual-in|${DUAL_BAD}/short_order.dual"
          "-DREGEX=short_order.dual:5: truncated: the order of line 3 lists 2 of 4 indices"
          -P ${EXPECT_ERROR})
add_test(NAME dual_in_bad_index
  COMMAND ${CMAKE_COMMAND} "-DCMD=${DUAL_SGDMF}|--dual-in|${DUAL_BAD}/bad_index.dual"
          "-DREGEX=bad_index.dual:5: loop index '-x' is not an integer" -P ${EXPECT_ERROR})
add_test(NAME dual_in_other_program
  COMMAND ${CMAKE_COMMAND} "-DCMD=${DUAL_SGDMF}|--nodes|2|--dual-in|${DUAL_BAD}/wrong_program.dual"
          "-DREGEX=wrong_program.dual: no order for invocation 0 of the AsyncFor at [^ ]*sgdmf.cc:[0-9]+ \\(the file lists 0\\)"
          -P ${EXPECT_ERROR})
add_test(NAME dual_in_not_a_dual_file
  COMMAND ${CMAKE_COMMAND} "-DCMD=${DUAL_SGDMF}|--dual-in|${DUAL_BAD}/not_dual.dual"
          "-DREGEX=not_dual.dual:1: not a strads dual-test file" -P ${EXPECT_ERROR})
add_test(NAME dual_in_missing_file
  COMMAND ${CMAKE_COMMAND} "-DCMD=${DUAL_MLR}|--dual-in|${DUAL_BAD}/nonexistent.dual"
          "-DREGEX=nonexistent.dual: cannot open" -P ${EXPECT_ERROR})
add_test(NAME dual_sync_workers_needs_one_node
  COMMAND ${CMAKE_COMMAND} "-DCMD=${DUAL_MLR}|--nodes|2|--sync-workers|4x1"
          "-DREGEX=--sync-workers emulates P nodes of T threads serially" -P ${EXPECT_ERROR})
add_test(NAME dual_sync_workers_malformed
  COMMAND ${CMAKE_COMMAND} "-DCMD=${DUAL_MLR}|--sync-workers|4by1"
          "-DREGEX='4by1' is not of the form PxT" -P ${EXPECT_ERROR})
add_test(NAME dualtest_missing_program
  COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:strads>|dualtest|--|/nonexistent/prog"
          "-DREGEX=cannot run '/nonexistent/prog'" -P ${EXPECT_ERROR})
# Its working directory goes in $TMPDIR without --work: one that does not exist is named.
add_test(NAME dualtest_missing_tmpdir
  COMMAND ${CMAKE_COMMAND}
          "-DCMD=${CMAKE_COMMAND}|-E|env|TMPDIR=${DUAL_BAD}/no such dir|$<TARGET_FILE:strads>|dualtest|--|${DUAL_MLR}"
          "-DREGEX=dualtest: [^\n]*/no such dir/strads-dualtest-[^\n]*: cannot create: No such file"
          -P ${EXPECT_ERROR})
# A run that hangs is killed at --timeout and reported (the program here ignores its flags).
file(WRITE ${DUAL_BAD}/hang.sh "#!/bin/sh\nexec sleep 600\n")
file(CHMOD ${DUAL_BAD}/hang.sh PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
add_test(NAME dualtest_kills_a_hanging_run
  COMMAND ${CMAKE_COMMAND}
          "-DCMD=$<TARGET_FILE:strads>|dualtest|--timeout|1|--work|${DUAL_WORK}/hang|--|${DUAL_BAD}/hang.sh"
          -DCODE=1 "-DREGEX=forward: FAIL: the serial run timed out after 1 s and was killed"
          -P ${STRADS_TEST_SCRIPTS}/expect_exit.cmake)
# What dualtest compares: every stdout line by default, so a program's `epoch:0` lines count
# (this fake program prints its node count there and writes an empty dual file); --compare X
# takes one value, leaving `--` to end the options, and the report names what it skipped.
file(WRITE ${DUAL_BAD}/prints_nodes.sh [=[#!/bin/sh
nodes=1 out=/dev/null
while [ $# -gt 0 ]; do
  case $1 in --nodes) nodes=$2; shift ;; --dual-out) out=$2; shift ;; esac
  shift
done
printf 'epoch:0 nodes %s\nchecksum: 0\n' "$nodes"
printf 'strads-dual 1\nworkers 1 1\nend\n' > "$out"
]=])
file(CHMOD ${DUAL_BAD}/prints_nodes.sh PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
# NAME CODE REGEX [DUALTEST FLAGS...]: strads dualtest FLAGS -- prints_nodes.sh exits with CODE
# and its report matches REGEX.
function(add_prints_nodes_test name code regex)
  string(JOIN "|" flags dualtest ${ARGN} --work ${DUAL_WORK}/${name} -- ${DUAL_BAD}/prints_nodes.sh)
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:strads>|${flags}" -DCODE=${code}
            "-DREGEX=${regex}" -P ${STRADS_TEST_SCRIPTS}/expect_exit.cmake)
endfunction()
add_prints_nodes_test(dualtest_compares_every_line 1
  "forward: FAIL: first difference at line 1: serial 'epoch:0 nodes 1' vs parallel 'epoch:0 nodes 2'")
add_prints_nodes_test(dualtest_compare_keeps_the_double_dash 1
  "forward: FAIL: first difference at line 1: serial 'epoch:0 nodes 1'.*NOTE: 1 stdout line[(]s[)] were not compared: they start with none of --compare 'epoch:'"
  --compare epoch:)
add_prints_nodes_test(dualtest_compare_says_what_it_skipped 0
  "forward: PASS [(]1 output lines and 0 loop states equal\n  NOTE: 1 stdout line[(]s[)] were not compared"
  --compare checksum:)
set_tests_properties(dualtest_kills_a_hanging_run dualtest_catches_conflicting_round
  dualtest_catches_conflicting_round_mpi
  dualtest_catches_aggregation_order dual_in_truncated_no_end dual_in_truncated_order_mpi
  dual_in_bad_index dual_in_other_program dual_in_not_a_dual_file dual_in_missing_file
  dual_sync_workers_needs_one_node dual_sync_workers_malformed dualtest_missing_program
  dualtest_missing_tmpdir
  dualtest_compares_every_line dualtest_compare_keeps_the_double_dash
  dualtest_compare_says_what_it_skipped PROPERTIES TIMEOUT 240)

# The installed package (headers, libraries, `strads`, strads_add_dual_test) from another
# project: about 10 s, most of it compiling the consumer.
add_test(NAME install_package_dual_tests
  COMMAND ${CMAKE_COMMAND} -DBUILD=${PROJECT_BINARY_DIR} -DSOURCE=${PROJECT_SOURCE_DIR}/tests/install
          -DREADME=${PROJECT_SOURCE_DIR}/README.md
          -DWORK=${CMAKE_CURRENT_BINARY_DIR}/install_package -P ${STRADS_TEST_SCRIPTS}/install_package.cmake)
# no-sanitizer: the consumer is built with the installed package's flags, which do not carry
# -fsanitize, so it cannot link instrumented libraries (scripts/sanitize.sh).
set_tests_properties(install_package_dual_tests PROPERTIES TIMEOUT 300 LABELS no-sanitizer)
