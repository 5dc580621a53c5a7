# Hardening (issue 18): untrusted paths, flags and thread counts end in a clear error, exit 2,
# never a hang or a crash.
add_test(NAME fifo_inputs_refused
  COMMAND bash ${STRADS_TEST_SCRIPTS}/fifo_inputs.sh $<TARGET_FILE:strads> $<TARGET_FILE:sgdmf>
          $<TARGET_FILE:mlr> ${CMAKE_CURRENT_BINARY_DIR}/fifo_inputs)
set_tests_properties(fifo_inputs_refused PROPERTIES TIMEOUT 300)

# --timeout out of its range (NaN passed `PositiveNumber`, 1e20 livelocked, 1e10 failed every
# wait at once): refused before any node starts.
foreach(value nan 1e300 1e10 0)
  add_test(NAME timeout_flag_refused_${value}
    COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:sgdmf>|--nodes|2|--timeout|${value}"
            "-DREGEX=--timeout: '${value}' is (not a number|out of range 0.001 .. 2592000 s)"
            -DTIMEOUT=20 -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
endforeach()

# Flags in range that start absurd thread counts: refused before any thread starts, naming the
# bound (262 144 threads exhausted the machine's process limit).
add_test(NAME process_threads_bounded
  COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:sgdmf>|--nodes|256|--threads|1024"
          "-DREGEX=262400 threads in one process, over the bound of 4096" -DTIMEOUT=20
          -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)

# Under mpiexec every rank's failure report reaches the user through `strads replay`, not only
# divergences.
add_test(NAME replay_mpi_error_report
  COMMAND bash ${STRADS_TEST_SCRIPTS}/replay_mpi_error_report.sh $<TARGET_FILE:strads>
          $<TARGET_FILE:sgdmf> ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/replay_mpi_error_report)
set_tests_properties(replay_mpi_error_report PROPERTIES TIMEOUT 180)

# A cleanly closed trace with a short node log is corrupt (exit 2), not incomplete.
add_test(NAME corrupt_clean_trace
  COMMAND bash ${STRADS_TEST_SCRIPTS}/corrupt_clean_trace.sh $<TARGET_FILE:strads>
          $<TARGET_FILE:sgdmf> ${CMAKE_CURRENT_BINARY_DIR}/corrupt_clean_trace)
set_tests_properties(corrupt_clean_trace PROPERTIES TIMEOUT 180)

# Smaller flags (class 11): a negative seed wrapped silently to 2^64 - 1; --parallel without
# --single-process was ignored silently.
add_test(NAME seed_flag_negative_refused
  COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:sgdmf>|--seed|-1"
          "-DREGEX=--seed: Value -1 not in range 0" -DTIMEOUT=20
          -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
add_test(NAME chaos_flag_negative_refused
  COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:sgdmf>|--chaos|-1"
          "-DREGEX=--chaos: Value -1 not in range 0" -DTIMEOUT=20
          -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
add_test(NAME replay_parallel_needs_single_process
  COMMAND ${CMAKE_COMMAND}
          "-DCMD=$<TARGET_FILE:strads>|replay|--parallel|${CMAKE_CURRENT_BINARY_DIR}|--|$<TARGET_FILE:sgdmf>"
          "-DREGEX=--parallel requires --single-process" -DTIMEOUT=20
          -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
# A command that cannot run leaves no trace directory behind (it left an empty one).
add_test(NAME record_nonexistent_leaves_no_trace
  COMMAND bash -c "rm -rf \"$1\"; \"$0\" record -o \"$1\" -- /nonexistent; rc=$?; [ $rc -eq 127 ] && [ ! -e \"$1\" ]"
          $<TARGET_FILE:strads> ${CMAKE_CURRENT_BINARY_DIR}/record_nonexistent)
set_tests_properties(seed_flag_negative_refused chaos_flag_negative_refused
  replay_parallel_needs_single_process record_nonexistent_leaves_no_trace PROPERTIES TIMEOUT 60)

# Sizes from data and flags (class 10): a user id of 2^31 - 1 overflowed `1 + Max` ("negative
# size"), --features 2147483647 ended in std::bad_alloc naming nothing. (Refused on any machine
# of less than 137 GB.)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/huge_user_id.txt "2147483647 1 4.0\n0 0 3.0\n")
add_test(NAME sgdmf_huge_user_id_refused
  COMMAND ${CMAKE_COMMAND}
          "-DCMD=$<TARGET_FILE:sgdmf>|--nodes|2|--data|${CMAKE_CURRENT_BINARY_DIR}/huge_user_id.txt"
          "-DREGEX=dvector 'W' of 2147483648 elements of [0-9]+ bytes: .* over this machine's memory"
          -DTIMEOUT=30 -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
add_test(NAME mlr_huge_features_refused
  COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:mlr>|--features|2147483647|--epochs|1"
          "-DREGEX=dvector 'W' of 2147483648 elements of [0-9]+ bytes: .* over this machine's memory"
          -DTIMEOUT=30 -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
