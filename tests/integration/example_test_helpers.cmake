# Test helpers shared by the examples' *_tests.cmake files (issue 17).

# strads_add_bad_input_tests(SERIAL_TARGET PARALLEL_TARGET CASE...): for each CASE
# "file:line: message" (a file written into CMAKE_CURRENT_BINARY_DIR, the expected error as a
# regex), two tests, NAME_serial and NAME_mpiexec2 (NAME: the file name up to the dot), that
# run the program on `--data file` and expect exit code 2 with that message on stderr.
function(strads_add_bad_input_tests serial parallel)
  foreach(case IN LISTS ARGN)
    string(REGEX MATCH "^[a-z0-9_]+" name "${case}")
    string(REGEX MATCH "^[a-z0-9_.]+" file "${case}")
    add_test(NAME ${name}_serial
      COMMAND ${CMAKE_COMMAND}
              "-DCMD=$<TARGET_FILE:${serial}>|--data|${CMAKE_CURRENT_BINARY_DIR}/${file}"
              "-DREGEX=${case}" -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
    add_test(NAME ${name}_mpiexec2
      COMMAND ${CMAKE_COMMAND}
              "-DCMD=${MPIEXEC_EXECUTABLE}|${MPIEXEC_NUMPROC_FLAG}|2|$<TARGET_FILE:${parallel}>|--data|${CMAKE_CURRENT_BINARY_DIR}/${file}"
              "-DREGEX=${case}" -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
    set_tests_properties(${name}_serial ${name}_mpiexec2 PROPERTIES TIMEOUT 120)
  endforeach()
endfunction()

# strads_add_chaos_replay_tests(NAME PROGRAM ITERATIONS RUNS ARG...): a nondeterministic mode of
# PROGRAM on 2 MPI ranks. replay_NAME_chaos_<ITERATIONS>x records ITERATIONS chaos runs and
# replays each on the cluster and in one process; chaos_without_replay_differs_NAME shows that
# RUNS chaos runs without replay give at least 2 checksums (so the first test can fail).
function(strads_add_chaos_replay_tests name program iterations runs)
  add_test(NAME replay_${name}_chaos_${iterations}x
    COMMAND bash ${STRADS_TEST_SCRIPTS}/replay_chaos.sh $<TARGET_FILE:strads>
            ${MPIEXEC_EXECUTABLE} 2 ${iterations} ${CMAKE_CURRENT_BINARY_DIR}/replay/${name}
            $<TARGET_FILE:${program}> ${ARGN})
  add_test(NAME chaos_without_replay_differs_${name}
    COMMAND bash ${STRADS_TEST_SCRIPTS}/chaos_differs.sh ${MPIEXEC_EXECUTABLE} 2 ${runs}
            $<TARGET_FILE:${program}> ${ARGN})
  set_tests_properties(replay_${name}_chaos_${iterations}x chaos_without_replay_differs_${name}
    PROPERTIES TIMEOUT 600)
endfunction()

# strads_add_nodes2_equals_mpiexec2_test(PROGRAM ARG...): PROGRAM_nodes2_equals_mpiexec2, the
# checksum and epoch lines of `--nodes 2` (in-process) equal those of `mpiexec -n 2`, 1 thread.
function(strads_add_nodes2_equals_mpiexec2_test program)
  string(REPLACE ";" "|" args "${ARGN}")
  add_test(NAME ${program}_nodes2_equals_mpiexec2
    COMMAND ${CMAKE_COMMAND} "-DA=$<TARGET_FILE:${program}>|${args}|--nodes|2|--threads|1"
            "-DB=${MPIEXEC_EXECUTABLE}|${MPIEXEC_NUMPROC_FLAG}|2|$<TARGET_FILE:${program}>|${args}|--threads|1"
            -P ${STRADS_TEST_SCRIPTS}/compare_runs.cmake)
  set_tests_properties(${program}_nodes2_equals_mpiexec2 PROPERTIES TIMEOUT 180)
endfunction()
