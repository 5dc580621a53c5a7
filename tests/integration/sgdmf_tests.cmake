# sgdmf integration tests: checksums across transports, node and thread counts; the reported
# serial order; accuracy against the serial program; bad input.
set(SGDMF_SMALL --ratings 60000 --users 3000 --items 800 --epochs 3)
string(REPLACE ";" "|" SGDMF_ARGS "${SGDMF_SMALL}")
set(MPI_RUN "${MPIEXEC_EXECUTABLE}|${MPIEXEC_NUMPROC_FLAG}")
set(COMPARE ${STRADS_TEST_SCRIPTS}/compare_runs.cmake)

# --nodes 4 equals mpiexec -n 4, and one node of one thread equals the serial program in the
# reported order: for the generated ratings, and for them ordered by user (--by-user, the same
# stable sort in sgdmf and its serial twin).
foreach(layout "" "_by_user")
  set(extra "")
  if(layout)
    set(extra "|--by-user")
  endif()
  add_test(NAME sgdmf${layout}_nodes4_equals_mpiexec4
    COMMAND ${CMAKE_COMMAND} "-DA=$<TARGET_FILE:sgdmf>|${SGDMF_ARGS}${extra}|--nodes|4|--threads|1"
            "-DB=${MPI_RUN}|4|$<TARGET_FILE:sgdmf>|${SGDMF_ARGS}${extra}|--threads|1" -P ${COMPARE})
  add_test(NAME sgdmf${layout}_serial_in_reported_order
    COMMAND ${CMAKE_COMMAND} -DSTRADS=$<TARGET_FILE:sgdmf> -DSERIAL=$<TARGET_FILE:sgdmf_serial>
            "-DARGS=${SGDMF_ARGS}${extra}" -DWORK=${CMAKE_CURRENT_BINARY_DIR}/sgdmf${layout}_order
            -P ${STRADS_TEST_SCRIPTS}/serial_order.cmake)
endforeach()
add_test(NAME sgdmf_mpiexec2_equals_threads2
  COMMAND ${CMAKE_COMMAND} "-DA=${MPI_RUN}|2|$<TARGET_FILE:sgdmf>|${SGDMF_ARGS}|--threads|2"
          "-DB=$<TARGET_FILE:sgdmf>|${SGDMF_ARGS}|--threads|2" -P ${COMPARE})
add_test(NAME sgdmf_mpiexec4_threads2_equals_one_thread
  COMMAND ${CMAKE_COMMAND} "-DA=${MPI_RUN}|4|$<TARGET_FILE:sgdmf>|${SGDMF_ARGS}|--threads|2"
          "-DB=$<TARGET_FILE:sgdmf>|${SGDMF_ARGS}|--threads|1" -P ${COMPARE})
add_test(NAME sgdmf_rmse_close_to_serial
  COMMAND ${CMAKE_COMMAND} "-DA=${MPI_RUN}|4|$<TARGET_FILE:sgdmf>|${SGDMF_ARGS}|--threads|1"
          "-DB=$<TARGET_FILE:sgdmf_serial>|${SGDMF_ARGS}" -DTOLERANCE=2
          -P ${STRADS_TEST_SCRIPTS}/rmse_close.cmake)
add_test(NAME sgdmf_missing_data_file
  COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:sgdmf>|--nodes|2|--data|/nonexistent/r.txt"
          "-DREGEX=/nonexistent/r.txt: cannot open" -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/bad_ratings.txt "1 2 3.5\n# comment\n4 5 2\n7 x 1\n")
add_test(NAME sgdmf_malformed_data_file
  COMMAND ${CMAKE_COMMAND}
          "-DCMD=${MPI_RUN}|2|$<TARGET_FILE:sgdmf>|--data|${CMAKE_CURRENT_BINARY_DIR}/bad_ratings.txt"
          "-DREGEX=bad_ratings.txt:4: item id 'x'" -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
# --threads 0 is refused, from the flag and from STRADS_THREADS alike: the default (the cores /
# local nodes) is had by leaving the flag out (RuntimeOptions::threads).
add_test(NAME sgdmf_bad_flag
  COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:sgdmf>|--threads|0"
          "-DREGEX=--threads: Value 0 not in range 1 to" -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
add_test(NAME sgdmf_threads_env_zero
  COMMAND ${CMAKE_COMMAND} "-DCMD=${CMAKE_COMMAND}|-E|env|STRADS_THREADS=0|$<TARGET_FILE:sgdmf>"
          "-DREGEX=--threads: Value 0 not in range 1 to" -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
# Ordered by user, each rank holds little more than its share of the ratings.
add_test(NAME sgdmf_by_user_rank_holds_its_share
  COMMAND bash ${STRADS_TEST_SCRIPTS}/by_user_memory.sh $<TARGET_FILE:sgdmf>
          ${MPIEXEC_EXECUTABLE})
set_tests_properties(sgdmf_nodes4_equals_mpiexec4 sgdmf_mpiexec2_equals_threads2
  sgdmf_mpiexec4_threads2_equals_one_thread sgdmf_serial_in_reported_order
  sgdmf_rmse_close_to_serial sgdmf_missing_data_file sgdmf_malformed_data_file sgdmf_bad_flag
  sgdmf_threads_env_zero
  sgdmf_by_user_serial_in_reported_order sgdmf_by_user_nodes4_equals_mpiexec4
  sgdmf_by_user_rank_holds_its_share
  PROPERTIES TIMEOUT 180)

# The element-lock engine (--async-engine locks): one thread on one node is the serial program
# in index order; on 4 ranks with 2 threads it completes and the RMSE falls.
add_test(NAME sgdmf_locks_one_thread_is_serial
  COMMAND ${CMAKE_COMMAND}
          "-DA=$<TARGET_FILE:sgdmf>|${SGDMF_ARGS}|--async-engine|locks|--threads|1"
          "-DB=$<TARGET_FILE:sgdmf_serial>|${SGDMF_ARGS}" -P ${COMPARE})
add_test(NAME sgdmf_locks_mpiexec4
  COMMAND ${CMAKE_COMMAND}
          "-DA=${MPI_RUN}|4|$<TARGET_FILE:sgdmf>|${SGDMF_ARGS}|--async-engine|locks|--threads|2"
          "-DB=$<TARGET_FILE:sgdmf_serial>|${SGDMF_ARGS}" -DTOLERANCE=400
          -P ${STRADS_TEST_SCRIPTS}/rmse_close.cmake)
set_tests_properties(sgdmf_locks_one_thread_is_serial sgdmf_locks_mpiexec4 PROPERTIES TIMEOUT 180)
