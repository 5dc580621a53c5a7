# Replay: chaos-recorded runs replayed on the cluster and in one process give the recorded
# results 20 times in a row; chaos runs without replay differ; changed runs diverge.
set(STRADS_TOOL $<TARGET_FILE:strads>)
set(REPLAY_WORK ${CMAKE_CURRENT_BINARY_DIR}/replay)
set(SGDMF_LOCKS --ratings 40000 --users 2000 --items 600 --epochs 3 --async-engine locks)
set(MLR_SSP --samples 20000 --epochs 3 --sync ssp --staleness 2)

add_test(NAME replay_sgdmf_locks_chaos_20x
  COMMAND bash ${STRADS_TEST_SCRIPTS}/replay_chaos.sh ${STRADS_TOOL} ${MPIEXEC_EXECUTABLE} 2 20
          ${REPLAY_WORK}/sgdmf_locks $<TARGET_FILE:sgdmf> ${SGDMF_LOCKS} --threads 2)
# Without chaos, with 3 threads per node: the inline protocol's path for a third thread.
add_test(NAME replay_sgdmf_locks_3_threads_5x
  COMMAND ${CMAKE_COMMAND} -E env NO_CHAOS=1
          bash ${STRADS_TEST_SCRIPTS}/replay_chaos.sh ${STRADS_TOOL} ${MPIEXEC_EXECUTABLE} 2 5
          ${REPLAY_WORK}/sgdmf_locks_3 $<TARGET_FILE:sgdmf> ${SGDMF_LOCKS} --threads 3)
add_test(NAME replay_mlr_ssp_chaos_20x
  COMMAND bash ${STRADS_TEST_SCRIPTS}/replay_chaos.sh ${STRADS_TOOL} ${MPIEXEC_EXECUTABLE} 2 20
          ${REPLAY_WORK}/mlr_ssp $<TARGET_FILE:mlr> ${MLR_SSP} --threads 1)
add_test(NAME chaos_without_replay_differs_sgdmf_locks
  COMMAND bash ${STRADS_TEST_SCRIPTS}/chaos_differs.sh ${MPIEXEC_EXECUTABLE} 2 20
          $<TARGET_FILE:sgdmf> ${SGDMF_LOCKS} --threads 2)
add_test(NAME chaos_without_replay_differs_mlr_ssp
  COMMAND bash ${STRADS_TEST_SCRIPTS}/chaos_differs.sh ${MPIEXEC_EXECUTABLE} 2 20
          $<TARGET_FILE:mlr> ${MLR_SSP} --threads 1)
add_test(NAME replay_diverges_on_changes
  COMMAND bash ${STRADS_TEST_SCRIPTS}/replay_diverges.sh ${STRADS_TOOL} ${MPIEXEC_EXECUTABLE}
          $<TARGET_FILE:sgdmf> ${REPLAY_WORK}/diverges)
# More than two ranks: with two, "the recorded source" and "any source" are the same node, so
# only these check that replay delivers each message from the source the recording names.
add_test(NAME replay_mlr_ssp_4_ranks_chaos_3x
  COMMAND bash ${STRADS_TEST_SCRIPTS}/replay_chaos.sh ${STRADS_TOOL} ${MPIEXEC_EXECUTABLE} 4 3
          ${REPLAY_WORK}/mlr_ssp_4 $<TARGET_FILE:mlr> ${MLR_SSP} --threads 1)
add_test(NAME replay_sgdmf_locks_3_ranks_chaos_3x
  COMMAND bash ${STRADS_TEST_SCRIPTS}/replay_chaos.sh ${STRADS_TOOL} ${MPIEXEC_EXECUTABLE} 3 3
          ${REPLAY_WORK}/sgdmf_locks_3_ranks $<TARGET_FILE:sgdmf> ${SGDMF_LOCKS} --threads 1)
# Everything on one core (2 ranks of 2 threads): the waits that spin on several cores must
# block here, and replay hands the baton over on the one core, recorded results unchanged.
add_test(NAME replay_sgdmf_locks_one_core_chaos_3x
  COMMAND bash ${STRADS_TEST_SCRIPTS}/on_one_core.sh
          bash ${STRADS_TEST_SCRIPTS}/replay_chaos.sh ${STRADS_TOOL} ${MPIEXEC_EXECUTABLE} 2 3
          ${REPLAY_WORK}/sgdmf_locks_one_core $<TARGET_FILE:sgdmf> ${SGDMF_LOCKS} --threads 2)
add_test(NAME sgdmf_one_core_2_threads_equals_1_thread
  COMMAND ${CMAKE_COMMAND}
          "-DA=bash|${STRADS_TEST_SCRIPTS}/on_one_core.sh|$<TARGET_FILE:sgdmf>|--epochs|2|--threads|2"
          "-DB=$<TARGET_FILE:sgdmf>|--epochs|2|--threads|1"
          -P ${STRADS_TEST_SCRIPTS}/compare_runs.cmake)
set_tests_properties(replay_sgdmf_locks_chaos_20x replay_sgdmf_locks_3_threads_5x
  replay_mlr_ssp_chaos_20x replay_mlr_ssp_4_ranks_chaos_3x replay_sgdmf_locks_3_ranks_chaos_3x
  chaos_without_replay_differs_sgdmf_locks chaos_without_replay_differs_mlr_ssp
  replay_diverges_on_changes replay_sgdmf_locks_one_core_chaos_3x
  sgdmf_one_core_2_threads_equals_1_thread PROPERTIES TIMEOUT 600)

# gdb on a single-process replay (gdb -batch).
find_program(STRADS_GDB gdb)
if(STRADS_GDB)
  add_test(NAME replay_single_process_under_gdb
    COMMAND bash ${STRADS_TEST_SCRIPTS}/replay_under_gdb.sh ${STRADS_TOOL} ${MPIEXEC_EXECUTABLE}
            $<TARGET_FILE:sgdmf> ${REPLAY_WORK}/gdb)
  set_tests_properties(replay_single_process_under_gdb PROPERTIES TIMEOUT 300)
endif()
# strads trace diff: identical, different at the right first event, not comparable.
add_test(NAME trace_diff
  COMMAND bash ${STRADS_TEST_SCRIPTS}/trace_diff.sh ${STRADS_TOOL} ${REPLAY_WORK}/trace_diff
          $<TARGET_FILE:sgdmf> $<TARGET_FILE:mlr>)
set_tests_properties(trace_diff PROPERTIES TIMEOUT 300 PASS_REGULAR_EXPRESSION "^ok: ")
# strads trace stats: agrees with trace info; the message matrix counts deliveries.
add_test(NAME trace_stats
  COMMAND bash ${STRADS_TEST_SCRIPTS}/trace_stats.sh ${STRADS_TOOL} ${REPLAY_WORK}/trace_stats
          $<TARGET_FILE:sgdmf> $<TARGET_FILE:mlr>)
set_tests_properties(trace_stats PROPERTIES TIMEOUT 300 PASS_REGULAR_EXPRESSION "ok: ")
