# Outside programs (tests/ports/): ports by someone who had not read the runtime's code. Each
# port gives the same checksums on 2 threads, 2 in-process nodes and 2 MPI ranks as on 1 thread
# (k-means also as its serial twin: its sums are accumulators, added in index order); the rule
# breaks strads detects stop with exit 2 naming the loop, the body and the way out.
set(PORTS ${CMAKE_BINARY_DIR}/tests/ports)
foreach(p kmeans pagerank logreg)
  foreach(run "--threads|2" "--nodes|2" "mpiexec")
    string(REGEX REPLACE "[^a-z0-9]+" "_" suffix "_${run}")
    if(run STREQUAL "mpiexec")
      set(b "${MPIEXEC_EXECUTABLE}|-n|2|${PORTS}/port_${p}|--threads|1")
    else()
      set(b "${PORTS}/port_${p}|${run}")
    endif()
    add_test(NAME port_${p}${suffix}_equals_one_thread
      COMMAND ${CMAKE_COMMAND} "-DA=${PORTS}/port_${p}|--threads|1" "-DB=${b}"
              -P ${STRADS_TEST_SCRIPTS}/compare_runs.cmake)
    set_tests_properties(port_${p}${suffix}_equals_one_thread PROPERTIES TIMEOUT 120)
  endforeach()
endforeach()
add_test(NAME port_kmeans_equals_serial_twin
  COMMAND ${CMAKE_COMMAND} "-DA=${PORTS}/port_kmeans|--threads|2" "-DB=${PORTS}/port_kmeans_serial"
          -P ${STRADS_TEST_SCRIPTS}/compare_runs.cmake)
set_tests_properties(port_kmeans_equals_serial_twin PROPERTIES TIMEOUT 120)

# An off-by-one read past the end, during reconnaissance: the DDS, the index, the loop and body.
strads_refusal_test(port_break_read_past_end_named
  "index 20000 out of range for DDS 'src' of size 20000 \\(in AsyncFor at [^ ]*break_stray_read.cc:[0-9]+, the body of index 19999\\)"
  "${PORTS}/port_break_stray_read|--mode|oob")
# A read offset that changes every epoch: the second call's checked execution.
strads_refusal_test(port_break_changing_offset_named
  "AsyncFor at [^ ]*break_stray_read.cc:[0-9]+, invocation 1: the body of index 0 accessed src\\[2\\] \\(read\\)"
  "${PORTS}/port_break_stray_read|--mode|offset")
# An index array held by `auto&` (the loop only reads it): reconnaissance saw zeros there; the
# error says so, beside the advice on random choices.
strads_refusal_test(port_break_nonconst_index_named
  "invocation 0: the body of index 1 accessed .*idx\\[1\\] \\(write\\).* The body reached x, y and idx without const, as writes.*docs/porting.md, rule 4"
  "${PORTS}/port_break_data_dependent|--mode|nonconst|--threads|1|--epochs|3")
# Which element a body writes follows a value the loop writes: not touched in reconnaissance.
strads_refusal_test(port_break_value_dependent_named
  "DDS 'y' element [0-9]+ accessed in a loop body, but no body touched 'y' during reconnaissance.*\\(in AsyncFor at [^ ]*break_data_dependent.cc:[0-9]+, the body of index [0-9]+\\)"
  "${PORTS}/port_break_data_dependent|--mode|value")
# Accesses that change only in epoch 5 of 8, on a plan of few rounds, whose sampled rounds fall
# in no later call: the default check's spot check (a few bodies every call) stops the run in
# that epoch, on 1 and 2 nodes (docs/async_for.md, "Access checking").
strads_refusal_test(port_break_late_change_named
  "AsyncFor at [^ ]*break_data_dependent.cc:[0-9]+, invocation 4: the body of index [0-9]+ accessed"
  "${PORTS}/port_break_data_dependent|--mode|late|--nodes|2|--threads|2")
strads_refusal_test(port_break_late_change_one_node_named
  "AsyncFor at [^ ]*break_data_dependent.cc:[0-9]+, invocation 4: the body of index [0-9]+ accessed"
  "${PORTS}/port_break_data_dependent|--mode|late|--threads|2")
# A dual test sees it too, and calls it a failure of the program, not an error of its flags (its
# files, kept on a failure, go in the build tree, not $TMPDIR).
add_test(NAME port_break_late_change_dualtest_fails
  COMMAND ${CMAKE_COMMAND}
          "-DCMD=$<TARGET_FILE:strads>|dualtest|--nodes|2|--threads|2|--work|${CMAKE_CURRENT_BINARY_DIR}/dualtest/port_break_late_change|--|${PORTS}/port_break_data_dependent|--mode|late"
          -DCODE=1 "-DREGEX=invocation 4: the body of index 0 accessed.*verdict: FAIL"
          -P ${STRADS_TEST_SCRIPTS}/expect_exit.cmake)
set_tests_properties(port_break_late_change_dualtest_fails PROPERTIES TIMEOUT 120)
