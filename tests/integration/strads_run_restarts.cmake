# `strads run --restarts 1` finishes with the uninterrupted run's checksum and last epoch lines
# when one rank is killed (SIGKILL) at a random operator end, COUNT times; each failure is
# reported naming the killed rank and the last complete checkpoint before the kill.
#   cmake -DSTRADS=strads -DCMD="mpiexec|-n|P|prog|args" -DDIR=work -DEVERY=N -DOPS=N
#         [-DRANKS=P] [-DCOUNT=5] [-DSEED=S] -P strads_run_restarts.cmake
# OPS: the run's operator invocations; the kill points are drawn from 1..OPS-1 and the rank from
# 0..1 (RANKS 2, the default) or from the middle ranks 1..P-2, with SEED (printed; default: a
# fresh one), so that a failure can be reproduced. The first kill runs once more with
# --restarts 0 first: that job must fail (non-zero exit) with the same report.
string(REPLACE "|" ";" cmd "${CMD}")
if(NOT DEFINED COUNT)
  set(COUNT 5)
endif()
if(NOT DEFINED RANKS)
  set(RANKS 2)
endif()
if(RANKS GREATER 2)
  math(EXPR last_middle "${RANKS} - 2")
  set(rank_alphabet "")
  foreach(r RANGE 1 ${last_middle})
    string(APPEND rank_alphabet "${r}")
  endforeach()
else()
  set(rank_alphabet "01")
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
  string(RANDOM LENGTH 1 ALPHABET ${rank_alphabet} rank)
  # The kill comes before the checkpoint of its own operator: the last complete one is the
  # previous multiple of EVERY.
  math(EXPR ckpt_ops "(${op} - 1) / ${EVERY} * ${EVERY}")
  if(ckpt_ops EQUAL 0)
    set(want_ckpt "none")
  else()
    set(want_ckpt "${DIR}/ckpt/ckpt-${ckpt_ops}")
  endif()
  set(want_report "attempt 1 failed \\((exit status|killed by signal) [0-9]+\\): rank ${rank} \\(pid [0-9]+\\) died first; last complete checkpoint: ${want_ckpt}\n")
  file(REMOVE_RECURSE "${DIR}")
  file(MAKE_DIRECTORY "${DIR}")
  if(i EQUAL 1)
    execute_process(
      COMMAND ${CMAKE_COMMAND} -E env STRADS_TEST_KILL_RANK=${rank}:${op}
              ${STRADS} run --restarts 0 --checkpoint ${DIR}/ckpt --checkpoint-every ${EVERY} --
              ${cmd}
      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
    if(rc EQUAL 0 OR NOT err MATCHES "${want_report}" OR err MATCHES "restart 1")
      message(FATAL_ERROR "kill of rank ${rank} at operator ${op} with --restarts 0: exit ${rc}, "
                          "expected a failure reported as '${want_report}':\n${err}")
    endif()
    string(REGEX MATCH "rank [0-9]+ \\(pid [0-9]+\\) died first; last complete checkpoint: [^\n]*" said "${err}")
    message(STATUS "--restarts 0, rank ${rank} killed at operator ${op}: exit ${rc}, '${said}'")
    file(REMOVE_RECURSE "${DIR}")
    file(MAKE_DIRECTORY "${DIR}")
  endif()
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
  if(NOT err MATCHES "${want_report}strads run: restart 1 of 1 from [^\n]* \\(rank ${rank} died\\)")
    message(FATAL_ERROR "kill ${i} (rank ${rank} at operator ${op}): strads run did not report "
                        "the failure as '${want_report}' and the restart:\n${err}")
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
