# lasso integration tests: checksums across transports, node and thread counts; the objective
# falls and ends within 2% of the serial program's; bad input; the lock engine under chaos
# recorded and replayed.
set(LASSO_SMALL --samples 2000 --features 4000 --column-nnz 12 --support 40 --batch 100 --epochs 3)
string(REPLACE ";" "|" LASSO_ARGS "${LASSO_SMALL}")
include(${CMAKE_CURRENT_LIST_DIR}/example_test_helpers.cmake)

strads_add_nodes2_equals_mpiexec2_test(lasso ${LASSO_SMALL})
add_test(NAME lasso_nodes4_threads2_equals_one_thread
  COMMAND ${CMAKE_COMMAND} "-DA=$<TARGET_FILE:lasso>|${LASSO_ARGS}|--nodes|4|--threads|2"
          "-DB=$<TARGET_FILE:lasso>|${LASSO_ARGS}|--threads|1"
          -P ${STRADS_TEST_SCRIPTS}/compare_runs.cmake)
set(LASSO_CONVERGE --samples|20000|--features|40000|--column-nnz|24|--support|400|--batch|1000|--epochs|6)
add_test(NAME lasso_objective_close_to_serial
  COMMAND ${CMAKE_COMMAND} "-DA=$<TARGET_FILE:lasso>|${LASSO_CONVERGE}|--nodes|2|--threads|2"
          "-DB=$<TARGET_FILE:lasso_serial>|${LASSO_CONVERGE}" -DKEY=objective -DTOLERANCE=2
          -P ${STRADS_TEST_SCRIPTS}/rmse_close.cmake)
# Malformed LIBSVM regression files: file:line: what, exit code 2, on every program.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/lasso_bad_target.txt "1.5 1:0.5 3:1\nx 2:1\n")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/lasso_bad_feature.txt "1 1:0.5\n0.5 2:1\n-2 4000001:1\n")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/lasso_bad_value.txt "1 1:0.5\n\n2 7:nan\n")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/lasso_repeated_feature.txt "1 1:0.5 3:1\n2 9:1 4:2 9:0.5\n")
set(LASSO_BAD_CASES
  "lasso_bad_target.txt:2: target 'x' is not a finite number"
  "lasso_bad_feature.txt:3: feature id 4000001 is beyond the model's 200000 features"
  "lasso_bad_value.txt:3: feature value 'nan' is not a finite number"
  "lasso_repeated_feature.txt:2: feature id 9 appears more than once on the line")
strads_add_bad_input_tests(lasso_serial lasso ${LASSO_BAD_CASES})
set_tests_properties(lasso_nodes4_threads2_equals_one_thread
  lasso_objective_close_to_serial PROPERTIES TIMEOUT 180)

# The lock engine (nondeterministic): chaos runs differ without replay, and recorded ones
# replay identically on the cluster and in one process.
set(LASSO_LOCKS ${LASSO_SMALL} --async-engine locks --threads 2)
strads_add_chaos_replay_tests(lasso_locks lasso 5 10 ${LASSO_LOCKS})
