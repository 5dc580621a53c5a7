# Recording: `strads record` on sgdmf (both AsyncFor engines) and mlr (BSP, SSP) under mpiexec,
# `strads trace info` on the result, refusals, and a SIGKILLed recording.
set(STRADS_TOOL $<TARGET_FILE:strads>)
set(RECORD_CHECK ${STRADS_TEST_SCRIPTS}/record_check.cmake)
set(TRACES ${CMAKE_CURRENT_BINARY_DIR}/traces)
set(MPI_RUN "${MPIEXEC_EXECUTABLE}|${MPIEXEC_NUMPROC_FLAG}")
set(SMALL_SGDMF "--ratings|60000|--users|3000|--items|800|--epochs|3")

function(strads_record_test name nodes expect_regex)
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} -DSTRADS=${STRADS_TOOL} -DDIR=${TRACES}/${name} -DNODES=${nodes}
            "-DEXPECT=${expect_regex}" "-DCMD=${ARGN}" -P ${RECORD_CHECK})
  set_tests_properties(${name} PROPERTIES TIMEOUT 180)
endfunction()

strads_record_test(record_sgdmf_locks_mpiexec4 4 "lock_grant [1-9]"
  "${MPI_RUN}|4|$<TARGET_FILE:sgdmf>|${SMALL_SGDMF}|--async-engine|locks|--threads|2")
strads_record_test(record_sgdmf_schedule_mpiexec4 4 "operator_begin [1-9]"
  "${MPI_RUN}|4|$<TARGET_FILE:sgdmf>|${SMALL_SGDMF}|--threads|2")
strads_record_test(record_mlr_bsp_mpiexec4 4 "operator_begin [1-9]"
  "${MPI_RUN}|4|$<TARGET_FILE:mlr>|--samples|20000|--epochs|2|--threads|1")
strads_record_test(record_mlr_ssp_mpiexec2 2 "delivery [1-9]"
  "${MPI_RUN}|2|$<TARGET_FILE:mlr>|--samples|20000|--epochs|2|--sync|ssp|--staleness|2|--threads|2")

add_test(NAME record_refuses_hybrid
  COMMAND ${CMAKE_COMMAND}
          "-DCMD=${STRADS_TOOL}|record|-o|${TRACES}/hybrid|--|$<TARGET_FILE:mlr>|--samples|2000|--sync|hybrid|--nodes|2"
          "-DREGEX=Hybrid cannot be recorded" -DCLEAN=${TRACES}/hybrid -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
add_test(NAME record_never_overwrites
  COMMAND ${CMAKE_COMMAND}
          "-DCMD=${STRADS_TOOL}|record|-o|${CMAKE_CURRENT_SOURCE_DIR}|--|$<TARGET_FILE:sgdmf>"
          "-DREGEX=not an empty directory" -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
add_test(NAME record_sigkill_leaves_readable_trace
  COMMAND bash ${STRADS_TEST_SCRIPTS}/record_sigkill.sh ${STRADS_TOOL} $<TARGET_FILE:sgdmf>
          ${TRACES}/sigkill)
# NAME: run SCRIPT STRADS PROGRAM DIR SIGNAL, with DIR a fresh trace directory named after the test.
function(add_signal_test name script program signal)
  add_test(NAME ${name}
    COMMAND bash ${STRADS_TEST_SCRIPTS}/${script} ${STRADS_TOOL} ${program} ${TRACES}/${name}
            ${signal})
endfunction()
add_signal_test(record_forwards_sigterm record_stopped_by_signal.sh $<TARGET_FILE:sgdmf> TERM)
add_signal_test(record_survives_ctrl_c record_stopped_by_signal.sh $<TARGET_FILE:sgdmf> INT)
add_test(NAME record_overhead_meter
  COMMAND bash ${STRADS_TEST_SCRIPTS}/record_overhead.sh $<TARGET_FILE:sgdmf> ${TRACES}/overhead)
set_tests_properties(record_refuses_hybrid record_never_overwrites record_overhead_meter
  PROPERTIES TIMEOUT 180)
# The signal tests wait up to 120 s for the first events, then up to 30 s for the end.
set_tests_properties(record_sigkill_leaves_readable_trace record_forwards_sigterm
  record_survives_ctrl_c PROPERTIES TIMEOUT 240)

# SIGSEGV, SIGABRT or SIGTERM during recording: the events handed to the writer are written first.
add_executable(crash_while_recording ${STRADS_TEST_SCRIPTS}/crash_while_recording.cc)
target_link_libraries(crash_while_recording PRIVATE strads::strads)
add_signal_test(record_flushes_on_sigsegv record_crash_signal.sh
                $<TARGET_FILE:crash_while_recording> SEGV)
add_signal_test(record_flushes_on_sigabrt record_crash_signal.sh
                $<TARGET_FILE:crash_while_recording> ABRT)
add_signal_test(record_flushes_on_sigterm record_crash_signal.sh
                $<TARGET_FILE:crash_while_recording> TERM)
set_tests_properties(record_flushes_on_sigsegv record_flushes_on_sigabrt record_flushes_on_sigterm
                     PROPERTIES TIMEOUT 60)

# bench/record_ablation.sh builds its variants from a patch of the recorded path: the test says
# when a change to that path leaves the patch behind, instead of the script failing later.
find_program(STRADS_GIT git)
if(STRADS_GIT)
  add_test(NAME record_ablation_patch_applies
           COMMAND ${STRADS_GIT} apply --check bench/record_ablation.patch
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(record_ablation_patch_applies PROPERTIES TIMEOUT 60)
endif()
