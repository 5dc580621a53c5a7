# `strads run --restarts 1` finishes with the uninterrupted run's checksum and last epoch lines
# when one rank is killed (SIGKILL) at a random operator end, COUNT times.
#   cmake -DSTRADS=strads -DCMD="mpiexec|-n|2|prog|args" -DDIR=work -DEVERY=N -DOPS=N
#         [-DCOUNT=5] [-DSEED=S] -P strads_run_restarts.cmake
# OPS: the run's operator invocations; the kill points are drawn from 1..OPS-1 and rank 0..1
# with SEED (printed; default: a fresh one), so that a failure can be reproduced.
string(REPLACE "|" ";" cmd "${CMD}")
if(NOT DEFINED COUNT)
  set(COUNT 5)
endif()
if(NOT DEFINED SEED)
  string(RANDOM LENGTH 6 ALPHABET 0123456789 SEED)
endif()
message(STATUS "kill points drawn with -DSEED=${SEED}")
string(RANDOM LENGTH 1 ALPHABET 0 RANDOM_SEED ${SEED} ignored)  # seeds the generator

include(${CMAKE_CURRENT_LIST_DIR}/run_helpers.cmake)

run_one("${CMD}" full)
lines_of("${full}" "checksum: " sum_full)
lines_of("${full}" "epoch " epochs_full)
list(LENGTH epochs_full n_epochs)

math(EXPR last_point "${OPS} - 1")
foreach(i RANGE 1 ${COUNT})
  string(RANDOM LENGTH 4 ALPHABET 0123456789 r)
  math(EXPR op "1 + (${r} % ${last_point})")
  string(RANDOM LENGTH 1 ALPHABET 01 rank)
  file(REMOVE_RECURSE "${DIR}")
  file(MAKE_DIRECTORY "${DIR}")
  set(once "${DIR}/killed")
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env STRADS_TEST_KILL_RANK=${rank}:${op}:${once}
            ${STRADS} run --restarts 1 --checkpoint ${DIR}/ckpt --checkpoint-every ${EVERY} --
            ${cmd}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  if(NOT rc EQUAL 0 OR NOT EXISTS "${once}")
    message(FATAL_ERROR "kill ${i} (rank ${rank} at operator ${op}): strads run exit ${rc}, killed: "
                        "${once}\n${out}\n${err}")
  endif()
  if(NOT err MATCHES "attempt 1 failed \\((exit status|killed by signal) [0-9]+\\); last complete checkpoint: [^\n]*\nstrads run: restart 1 of 1 from")
    message(FATAL_ERROR "kill ${i}: strads run did not report the failure and the restart:\n${err}")
  endif()
  lines_of("${out}" "checksum: " sum)
  lines_of("${out}" "epoch " epochs)
  list(LENGTH epochs n)
  math(EXPR from "${n} - ${n_epochs}")
  list(SUBLIST epochs ${from} ${n_epochs} last_epochs)
  if(NOT sum STREQUAL sum_full OR NOT last_epochs STREQUAL epochs_full)
    message(FATAL_ERROR "kill ${i} (rank ${rank} at operator ${op}): restarted run printed "
                        "'${sum}', the uninterrupted '${sum_full}'\n${out}\n---\n${full}\n${err}")
  endif()
  string(REGEX MATCH "last complete checkpoint: [^\n]*" from_ckpt "${err}")
  message(STATUS "kill ${i}: rank ${rank} at operator ${op}, ${from_ckpt}: ${sum}")
endforeach()
