# Checkpoints and restart (docs/checkpoints.md): a run killed part-way (inside a checkpoint
# write, or a rank at an operator end) and restarted from its last complete checkpoint ends
# with the uninterrupted run's epoch lines and checksum; restarts that cannot be honoured are
# refused.
set(CKPT_SGDMF --ratings 60000 --users 3000 --items 800 --epochs 6 --threads 1)
set(CKPT_MLR --samples 20000 --features 500 --epochs 6 --threads 1)
string(REPLACE ";" "|" CKPT_SGDMF_ARGS "${CKPT_SGDMF}")
string(REPLACE ";" "|" CKPT_MLR_ARGS "${CKPT_MLR}")
set(CKPT_MPI "${MPIEXEC_EXECUTABLE}|${MPIEXEC_NUMPROC_FLAG}|2")
set(CKPT_RESTART ${STRADS_TEST_SCRIPTS}/checkpoint_restart.cmake)
set(CKPT_WORK ${CMAKE_CURRENT_BINARY_DIR}/checkpoints)

# sgdmf runs 2 operators an epoch (training, error): every 4 is every 2 epochs.
add_test(NAME checkpoint_sgdmf_killed_in_node_file_write
  COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:sgdmf>|${CKPT_SGDMF_ARGS}|--nodes|2"
          -DDIR=${CKPT_WORK}/sgdmf_data -DEVERY=4 -DKILL=STRADS_CHECKPOINT_KILL_AT=8
          -DEXPECT=ckpt-4 -P ${CKPT_RESTART})
add_test(NAME checkpoint_sgdmf_mpiexec2_killed_in_manifest_write
  COMMAND ${CMAKE_COMMAND} "-DCMD=${CKPT_MPI}|$<TARGET_FILE:sgdmf>|${CKPT_SGDMF_ARGS}"
          -DDIR=${CKPT_WORK}/sgdmf_manifest -DEVERY=4 -DKILL=STRADS_CHECKPOINT_KILL_AT=8:manifest
          -DEXPECT=ckpt-4 -P ${CKPT_RESTART})
add_test(NAME checkpoint_sgdmf_mpiexec2_rank1_killed
  COMMAND ${CMAKE_COMMAND} "-DCMD=${CKPT_MPI}|$<TARGET_FILE:sgdmf>|${CKPT_SGDMF_ARGS}"
          -DDIR=${CKPT_WORK}/sgdmf_rank -DEVERY=4 -DKILL=STRADS_TEST_KILL_RANK=1:11
          -DEXPECT=ckpt-8 -P ${CKPT_RESTART})
# mlr BSP runs 1 operator an epoch.
add_test(NAME checkpoint_mlr_bsp_mpiexec2_rank1_killed
  COMMAND ${CMAKE_COMMAND} "-DCMD=${CKPT_MPI}|$<TARGET_FILE:mlr>|${CKPT_MLR_ARGS}"
          -DDIR=${CKPT_WORK}/mlr_rank -DEVERY=2 -DKILL=STRADS_TEST_KILL_RANK=1:5
          -DEXPECT=ckpt-4 -P ${CKPT_RESTART})
add_test(NAME checkpoint_mlr_bsp_killed_in_node_file_write
  COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:mlr>|${CKPT_MLR_ARGS}|--nodes|2"
          -DDIR=${CKPT_WORK}/mlr_data -DEVERY=2 -DKILL=STRADS_CHECKPOINT_KILL_AT=4
          -DEXPECT=ckpt-2 -P ${CKPT_RESTART})
# lda runs 8 operators an epoch (one per slice); its per-topic totals are an accumulator, which
# the checkpoint must carry too.
add_test(NAME checkpoint_lda_killed_in_node_file_write
  COMMAND ${CMAKE_COMMAND}
          "-DCMD=$<TARGET_FILE:lda>|--docs|200|--words|300|--doc-length|30|--topics|8|--epochs|4|--nodes|2"
          -DDIR=${CKPT_WORK}/lda_data -DEVERY=8 -DKILL=STRADS_CHECKPOINT_KILL_AT=16
          -DEXPECT=ckpt-8 -P ${CKPT_RESTART})
add_test(NAME checkpoint_restart_refusals
  COMMAND ${CMAKE_COMMAND} -DPROG=$<TARGET_FILE:sgdmf>
          "-DARGS=--ratings|20000|--users|1000|--items|300|--threads|1"
          -DDIR=${CKPT_WORK}/refusals -P ${STRADS_TEST_SCRIPTS}/checkpoint_refusals.cmake)
set_tests_properties(checkpoint_sgdmf_killed_in_node_file_write checkpoint_lda_killed_in_node_file_write
  checkpoint_sgdmf_mpiexec2_killed_in_manifest_write checkpoint_sgdmf_mpiexec2_rank1_killed
  checkpoint_mlr_bsp_mpiexec2_rank1_killed checkpoint_mlr_bsp_killed_in_node_file_write
  checkpoint_restart_refusals PROPERTIES TIMEOUT 300)

# A rank killed at random operator ends (5 times each), under `strads run --restarts 1`.
set(CKPT_RUN_RESTARTS ${STRADS_TEST_SCRIPTS}/strads_run_restarts.cmake)
add_test(NAME checkpoint_strads_run_sgdmf_random_kills
  COMMAND ${CMAKE_COMMAND} -DSTRADS=$<TARGET_FILE:strads>
          "-DCMD=${CKPT_MPI}|$<TARGET_FILE:sgdmf>|${CKPT_SGDMF_ARGS}" -DDIR=${CKPT_WORK}/run_sgdmf
          -DEVERY=4 -DOPS=12 -P ${CKPT_RUN_RESTARTS})
add_test(NAME checkpoint_strads_run_mlr_bsp_random_kills
  COMMAND ${CMAKE_COMMAND} -DSTRADS=$<TARGET_FILE:strads>
          "-DCMD=${CKPT_MPI}|$<TARGET_FILE:mlr>|${CKPT_MLR_ARGS}" -DDIR=${CKPT_WORK}/run_mlr
          -DEVERY=2 -DOPS=6 -P ${CKPT_RUN_RESTARTS})
# The same on 4 ranks, killing a middle one (1 or 2): the report names the rank that died
# first, not the ranks mpiexec ended after it.
add_test(NAME checkpoint_strads_run_mlr_bsp_mpiexec4_middle_rank_kills
  COMMAND ${CMAKE_COMMAND} -DSTRADS=$<TARGET_FILE:strads>
          "-DCMD=${MPIEXEC_EXECUTABLE}|${MPIEXEC_NUMPROC_FLAG}|4|$<TARGET_FILE:mlr>|${CKPT_MLR_ARGS}"
          -DDIR=${CKPT_WORK}/run_mlr4 -DEVERY=2 -DOPS=6 -DRANKS=4 -DCOUNT=3
          -P ${CKPT_RUN_RESTARTS})
set_tests_properties(checkpoint_strads_run_sgdmf_random_kills
  checkpoint_strads_run_mlr_bsp_random_kills
  checkpoint_strads_run_mlr_bsp_mpiexec4_middle_rank_kills PROPERTIES TIMEOUT 600)


# Recording with checkpoints: the trace cut into segments, bounded disk, replay from a
# checkpoint (tests/integration/segmented_trace.sh says what each mode checks).
set(SEGMENTED_TRACE bash ${STRADS_TEST_SCRIPTS}/segmented_trace.sh)
foreach(mode bounded crash errors)
  add_test(NAME segmented_trace_${mode}
    COMMAND ${SEGMENTED_TRACE} ${mode} $<TARGET_FILE:strads> ${MPIEXEC_EXECUTABLE}
            $<TARGET_FILE:sgdmf> ${CKPT_WORK}/segmented_${mode})
endforeach()
add_test(NAME replay_from_checkpoint_sgdmf_locks_chaos_10x
  COMMAND ${SEGMENTED_TRACE} chaos $<TARGET_FILE:strads> ${MPIEXEC_EXECUTABLE}
          $<TARGET_FILE:sgdmf> ${CKPT_WORK}/segmented_chaos 10)
set_tests_properties(segmented_trace_bounded segmented_trace_crash segmented_trace_errors
  replay_from_checkpoint_sgdmf_locks_chaos_10x PROPERTIES TIMEOUT 600 PASS_REGULAR_EXPRESSION "ok: ")
