# A checkpointed run killed part-way, then restarted from its last complete checkpoint, prints
# the epoch lines and the checksum of an uninterrupted run.
#   cmake -DCMD="prog|arg|..." -DDIR=work -DEVERY=N -DKILL=ENV=VALUE -DEXPECT=ckpt-M
#         [-DKEEP=K] -P checkpoint_restart.cmake
# CMD (arguments separated by '|') is run three times: uninterrupted; with --checkpoint DIR
# --checkpoint-every N and the environment KILL (a test hook that kills a process: it must fail
# and print no checksum); with --restart DIR, which must name DIR/EXPECT and match the first.
# Without the restore (operators skipped, nothing restored) the checksums differ: the test can
# fail.
string(REPLACE "|" ";" cmd "${CMD}")
if(NOT DEFINED KEEP)
  set(KEEP 2)
endif()
file(REMOVE_RECURSE "${DIR}")

include(${CMAKE_CURRENT_LIST_DIR}/run_helpers.cmake)

run_one("${CMD}" full)

set(ckpt --checkpoint ${DIR} --checkpoint-every ${EVERY} --checkpoint-keep ${KEEP})
execute_process(COMMAND ${CMAKE_COMMAND} -E env ${KILL} ${cmd} ${ckpt}
                RESULT_VARIABLE rc OUTPUT_VARIABLE killed ERROR_VARIABLE err TIMEOUT 300)
if(rc EQUAL 0 OR killed MATCHES "checksum: ")
  message(FATAL_ERROR "the run with ${KILL} was not killed (${rc}):\n${killed}\n${err}")
endif()
if(NOT EXISTS "${DIR}/${EXPECT}/MANIFEST")
  file(GLOB left RELATIVE "${DIR}" "${DIR}/*/*")
  message(FATAL_ERROR "no complete ${EXPECT} after the kill; ${DIR} holds: ${left}")
endif()
file(GLOB manifests "${DIR}/*/MANIFEST")
list(LENGTH manifests complete)
if(complete GREATER KEEP)
  message(FATAL_ERROR "${complete} complete checkpoints in ${DIR}, more than --checkpoint-keep ${KEEP}")
endif()

execute_process(COMMAND ${cmd} --restart ${DIR} ${ckpt}
                RESULT_VARIABLE rc OUTPUT_VARIABLE restarted ERROR_VARIABLE err TIMEOUT 300)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the restart failed (${rc}):\n${restarted}\n${err}")
endif()
if(NOT err MATCHES "restarting from [^\n]*${EXPECT} ")
  message(FATAL_ERROR "the restart did not start from ${EXPECT}:\n${err}")
endif()
lines_of("${full}" "checksum: " sum_full)
lines_of("${restarted}" "checksum: " sum_restarted)
lines_of("${full}" "epoch " epochs_full)
lines_of("${restarted}" "epoch " epochs_restarted)
if(sum_full STREQUAL "" OR NOT sum_full STREQUAL sum_restarted)
  message(FATAL_ERROR "checksums differ: uninterrupted '${sum_full}', restarted '${sum_restarted}'")
endif()
if(NOT epochs_full STREQUAL epochs_restarted)
  message(FATAL_ERROR "epoch lines differ:\n${full}\n---\n${restarted}")
endif()
message(STATUS "restarted from ${EXPECT}: ${sum_restarted}")
