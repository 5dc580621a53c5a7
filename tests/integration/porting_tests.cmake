# What a port of a serial program written elsewhere runs into (issue 19): each test is a small
# program with the port's mistake and the error that must name it.

# --nodes P shares the program's globals between its logical nodes: one node calls an operator
# the other skips, and the node left waiting says so at once (collective calls are stamped).
add_executable(shared_global ${STRADS_TEST_SCRIPTS}/shared_global.cc)
target_link_libraries(shared_global PRIVATE strads::strads)
add_test(NAME nodes_share_globals
  COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:shared_global>|--nodes|2|--timeout|2"
          -DCODE=2 -DSTREAM=stderr
          "-DREGEX=(in its collective call 2, an all-gather.*, while node [01] returned from the driver after 1 collective calls|returned from the driver after 1 collective calls, while node [01] is in its collective call 2, an all-gather).*every node must call the operators .*under --nodes the logical nodes are threads of one process and share its global and static variables"
          -P ${STRADS_TEST_SCRIPTS}/expect_exit.cmake)
set_tests_properties(nodes_share_globals PROPERTIES TIMEOUT 60)

# An operator called on the leader only (a checksum printed inside `if (rt.leader())`): the
# leader is told at once that the other nodes returned from the driver, on both transports,
# well before the --timeout of 100 s.
add_executable(leader_only_operator ${STRADS_TEST_SCRIPTS}/leader_only_operator.cc)
target_link_libraries(leader_only_operator PRIVATE strads::strads)
set(LEADER_ONLY_ERROR "(node 0 is in its collective call [0-9]+, a hash in node order \\(as in Checksum\\), while node 1 returned from the driver|node 1 returned from the driver after [0-9]+ collective calls, while node 0 is in its collective call [0-9]+, a hash in node order \\(as in Checksum\\)).*every node must call the operators")
# A Sum on node 0 where node 1 calls Max: the same kind of collective at the same count, told
# apart by the reduction's functions.
set(NODE_DEPENDENT_ERROR "node [01] is in its collective call [0-9]+, an all-gather .* for Reduce of 'x' \\(functions [0-9a-f]+\\), while node [01] is in its collective call [0-9]+, an all-gather .* for Reduce of 'x' \\(functions [0-9a-f]+\\): every node must call")
# One AsyncFor over other bounds on node 0, and one SyncFor with another mini-batch: the same
# collectives at the same count, told apart by the operator's name in the stamp. Before, both
# ran to a checksum.
set(NODE_RANGE_ERROR "node [01] is in its collective call 2, .* for AsyncFor at [^ ]*leader_only_operator.cc:[0-9]+ over \\[0, (999|499)\\], while node [01] is in its collective call 2, .* for AsyncFor at [^ ]*leader_only_operator.cc:[0-9]+ over \\[0, (999|499)\\]: every node must call")
set(NODE_MINIBATCH_ERROR "for SyncFor at [^ ]*leader_only_operator.cc:[0-9]+ over 'x', mini-batch (10|20), BSP, while node [01] is in its collective call [0-9]+, .* for SyncFor at [^ ]*leader_only_operator.cc:[0-9]+ over 'x', mini-batch (10|20), BSP: every node must call")
# A dvector made with another length on node 1 (a node sizing it by its own share of a file):
# before, Sum returned the same wrong total on both nodes and the AsyncFor stopped with an
# internal error; making a DDS is now a stamped barrier.
set(NODE_SIZE_ERROR "node [01] is in its collective call 2, a barrier for making the DDS 'y' \\((1000|800) elements of 8 bytes\\), while node [01] is in its collective call 2, a barrier for making the DDS 'y' \\((1000|800) elements of 8 bytes\\): every node must call")
# A mutable local() on the leader only, then a driver read of a block every node held: the
# leader fetches the block again and the other node does not. Each stops at the other's next
# message, both when the block is the other node's (the leader waits for it) and when it is the
# leader's own (the leader sends it); before, the first waited until --timeout.
set(LEADER_LOCAL_OTHER_ERROR "a driver read of DDS elements for 'x' \\[500, 1000\\).*every node must call the operators.*a mutable local\\(\\) made on some nodes only")
set(LEADER_LOCAL_OWN_ERROR "a driver read of DDS elements for 'x' \\[0, 500\\).*every node must call the operators.*a mutable local\\(\\) made on some nodes only")
foreach(mistake leader_only node_dependent node_range node_minibatch node_size leader_local_other
        leader_local_own)
  string(TOUPPER ${mistake} upper)
  string(REPLACE "_" "-" flag ${mistake})
  set(program "$<TARGET_FILE:leader_only_operator>|--mistake|${flag}|--timeout|100")
  foreach(launch "nodes2;${program}|--nodes|2" "mpiexec2;${MPIEXEC_EXECUTABLE}|-n|2|${program}")
    list(GET launch 0 how)
    list(GET launch 1 cmd)
    add_test(NAME ${mistake}_operator_${how}
      COMMAND ${CMAKE_COMMAND} "-DCMD=${cmd}" -DCODE=2 -DSTREAM=stderr
              "-DREGEX=${${upper}_ERROR}" -P ${STRADS_TEST_SCRIPTS}/expect_exit.cmake)
    set_tests_properties(${mistake}_operator_${how} PROPERTIES TIMEOUT 60)
  endforeach()
endforeach()

# AsyncFor bodies whose accesses change from call to call (random negatives from a shared draw
# counter) are stopped with an error naming the site, the index, the DDS and the element, by
# default (sampled checking) and in test mode, on both engines; the same program with its
# negatives seeded by the index, or declared dynamic, passes, also its dual tests.
add_executable(random_negatives ${STRADS_TEST_SCRIPTS}/random_negatives.cc)
target_link_libraries(random_negatives PRIVATE strads::strads)
set(ACCESS_ERROR "AsyncFor at [^ ]*random_negatives.cc:[0-9]+, invocation 0: the body of index [0-9]+ accessed rows\\[[0-9]+\\] \\(write\\).* not the elements it accessed in this loop's reconnaissance run.*seeded by its index.*strads::DynamicAsyncFor")
foreach(mode default test_mode nodes locks)
  set(args "")
  if(mode STREQUAL "test_mode")
    set(args "|--test-mode")
  elseif(mode STREQUAL "nodes")
    set(args "|--nodes|2|--threads|2")
  elseif(mode STREQUAL "locks")
    set(args "|--async-engine|locks|--threads|2")
  endif()
  add_test(NAME access_check_stops_changing_accesses_${mode}
    COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:random_negatives>${args}"
            "-DREGEX=${ACCESS_ERROR}" -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
endforeach()
# Switched off, nothing stops it (and nothing is right about its result).
add_test(NAME access_check_off COMMAND random_negatives --access-check off --threads 2)
set_tests_properties(access_check_off PROPERTIES PASS_REGULAR_EXPRESSION "checksum: [0-9a-f]+")
foreach(fix fixed dynamic)
  add_test(NAME access_check_passes_${fix}
    COMMAND random_negatives --${fix} --access-check all --nodes 2 --threads 2)
  set_tests_properties(access_check_passes_${fix} PROPERTIES
    PASS_REGULAR_EXPRESSION "checksum: [0-9a-f]+" TIMEOUT 60)
  strads_add_dual_test(NAME random_negatives_${fix} COMMAND random_negatives --${fix}
                       NODES 2 THREADS 2 TIMEOUT 120)
endforeach()
set_tests_properties(access_check_stops_changing_accesses_default
  access_check_stops_changing_accesses_test_mode access_check_stops_changing_accesses_nodes
  access_check_stops_changing_accesses_locks access_check_off PROPERTIES TIMEOUT 60)

# A mini-batch loop over rotating bounds plans each distinct batch once (counted by its body
# runs), and its trace numbers the site's calls 0, 1, 2, ... across the plans.
add_executable(minibatch ${STRADS_TEST_SCRIPTS}/minibatch.cc)
target_link_libraries(minibatch PRIVATE strads::strads)
add_test(NAME minibatch_plans_each_batch_once
  COMMAND minibatch --epochs 3 --batches 4 --threads 2)
set_tests_properties(minibatch_plans_each_batch_once PROPERTIES
  PASS_REGULAR_EXPRESSION "calls: 12\nplans: 4\n" TIMEOUT 60)
add_test(NAME minibatch_trace_numbers_invocations
  COMMAND ${CMAKE_COMMAND} -DSTRADS=$<TARGET_FILE:strads>
          -DDIR=${CMAKE_CURRENT_BINARY_DIR}/traces/minibatch
          "-DCMD=$<TARGET_FILE:minibatch>|--epochs|3|--batches|4|--threads|2"
          -DNODES=1 "-DEXPECT=operator_begin 12," -DSITE=minibatch.cc -DCALLS=12
          -P ${STRADS_TEST_SCRIPTS}/record_check.cmake)
set_tests_properties(minibatch_trace_numbers_invocations PROPERTIES TIMEOUT 120)

# --schedule-report describes each plan (NAME REGEX COMMAND...: stderr matches REGEX): sgdmf's
# shows the 2-D block rotation, B rounds of B groups, balanced; the random-access shape of the
# issue many rounds with few groups.
function(add_schedule_report_test name regex)
  string(JOIN "|" cmd ${ARGN} --schedule-report)
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} "-DCMD=${cmd}" -DCODE=0 -DSTREAM=stderr "-DREGEX=${regex}"
            -P ${STRADS_TEST_SCRIPTS}/expect_exit.cmake)
  set_tests_properties(${name} PROPERTIES TIMEOUT 60)
endfunction()
add_schedule_report_test(schedule_report_sgdmf
  "schedule: AsyncFor at [^ ]*sgdmf.cc:[0-9]+ \\[0, 19999\\]: 20000 bodies, 8 rounds, 8-8 groups per round \\(mean 8.0\\), 2500 bodies per round, balance [01][.][0-9]+, estimated speed-up over serial on 2 worker\\(s\\) [12][.][0-9]+x \\(2-D block rotation\\)"
  $<TARGET_FILE:sgdmf> --ratings 20000 --users 1000 --items 300 --epochs 1 --quiet --threads 2
  --blocks 8)
# --schedule-report also times each plan's reconnaissance and planning (node 0's clock), on the
# line after the plan's schedule.
add_schedule_report_test(schedule_report_times_the_plan
  "schedule: AsyncFor at [^ ]*sgdmf.cc:[0-9]+ \\[0, 19999\\]: [^\n]*\nplan: AsyncFor at [^ ]*sgdmf.cc:[0-9]+ \\[0, 19999\\]: reconnaissance [0-9]+[.][0-9] ms, planning [0-9]+[.][0-9] ms\n"
  $<TARGET_FILE:sgdmf> --ratings 20000 --users 1000 --items 300 --epochs 1 --quiet --threads 2)
# AsyncForEach (lasso) too: a plan per index set, each timed.
add_schedule_report_test(schedule_report_times_async_for_each_plans
  "plan: AsyncFor at [^ ]*lasso.cc:[0-9]+ \\[0, [0-9]+\\]: reconnaissance [0-9]+[.][0-9] ms, planning [0-9]+[.][0-9] ms\nschedule: AsyncFor at [^ ]*lasso.cc"
  $<TARGET_FILE:lasso> --samples 2000 --features 4000 --column-nnz 12 --support 40 --batch 100
  --epochs 1 --threads 2)
add_executable(random_rows ${STRADS_TEST_SCRIPTS}/random_rows.cc)
target_link_libraries(random_rows PRIVATE strads::strads)
# The block count the runtime chooses: 4 for the random-access shape (1884 rounds of 16 bodies
# with 16 blocks, 29 with 4), estimated faster than serial on 2 threads; --blocks 16 given by
# hand is estimated slower than serial and runs on one worker; sgdmf keeps the 2-D rotation.
add_schedule_report_test(schedule_report_random_rows
  "schedule: AsyncFor at [^ ]*random_rows.cc:[0-9]+ \\[0, 29999\\]: 30000 bodies, 29 rounds, [0-9]+-[0-9]+ groups per round.* on 2 worker\\(s\\) 1[.][0-9]+x, 4 blocks \\(automatic\\)\n"
  $<TARGET_FILE:random_rows> --epochs 1 --threads 2)
add_schedule_report_test(schedule_report_random_rows_falls_back
  "schedule: AsyncFor at [^ ]*random_rows.cc:[0-9]+ \\[0, 29999\\]: 30000 bodies, 1884 rounds, .* on 2 worker\\(s\\) 0[.][0-9]+x, 16 blocks \\(--blocks\\); slower than serial: runs on one worker"
  $<TARGET_FILE:random_rows> --epochs 1 --threads 2 --blocks 16)
add_schedule_report_test(schedule_report_sgdmf_automatic
  "schedule: AsyncFor at [^ ]*sgdmf.cc:[0-9]+ \\[0, 19999\\]: 20000 bodies, ([0-9]+) rounds, [0-9]+-[0-9]+ groups per round.*\\(2-D block rotation\\), (8|16) blocks \\(automatic\\)"
  $<TARGET_FILE:sgdmf> --ratings 20000 --users 1000 --items 300 --epochs 1 --quiet --threads 2)
# The chosen count gives the same serial order as --blocks 4, and the results are the same on
# any nodes and threads (also after the fallback to one worker); 16 blocks give another order.
foreach(pair "threads1:--threads|1" "nodes2:--nodes|2|--threads|2"
       "blocks4:--blocks|4|--threads|2")
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 suffix)
  list(GET pair 1 run)
  add_test(NAME random_rows_automatic_blocks_${suffix}
    COMMAND ${CMAKE_COMMAND} "-DA=$<TARGET_FILE:random_rows>|--epochs|2|--threads|2"
            "-DB=$<TARGET_FILE:random_rows>|--epochs|2|${run}"
            -P ${STRADS_TEST_SCRIPTS}/compare_runs.cmake)
endforeach()
add_test(NAME random_rows_blocks16_differs
  COMMAND ${CMAKE_COMMAND} "-DA=$<TARGET_FILE:random_rows>|--epochs|2|--threads|2"
          "-DB=$<TARGET_FILE:random_rows>|--epochs|2|--threads|2|--blocks|16" -DEXPECT=different
          -P ${STRADS_TEST_SCRIPTS}/compare_runs.cmake)
add_test(NAME random_rows_fallback_same_results
  COMMAND ${CMAKE_COMMAND} "-DA=$<TARGET_FILE:random_rows>|--epochs|2|--threads|1|--blocks|16"
          "-DB=$<TARGET_FILE:random_rows>|--epochs|2|--nodes|2|--threads|2|--blocks|16"
          -P ${STRADS_TEST_SCRIPTS}/compare_runs.cmake)
set_tests_properties(random_rows_automatic_blocks_threads1 random_rows_automatic_blocks_nodes2
  random_rows_automatic_blocks_blocks4 random_rows_blocks16_differs random_rows_fallback_same_results PROPERTIES TIMEOUT 120)

# The same port with a row width set at run time (dmatrix rows, --width 7): the same checksum
# on one thread and on 2 nodes of 2 threads; its dual test equals the serial order; the width
# changes the result (so the comparisons can fail); a run killed inside a checkpoint write
# restarts from the last complete checkpoint to the uninterrupted run's checksum.
set(RR_WIDTH7 "$<TARGET_FILE:random_rows>|--epochs|3|--bodies|6000|--width|7")
add_test(NAME random_rows_width7_nodes2
  COMMAND ${CMAKE_COMMAND} "-DA=${RR_WIDTH7}|--threads|1" "-DB=${RR_WIDTH7}|--nodes|2|--threads|2"
          -P ${STRADS_TEST_SCRIPTS}/compare_runs.cmake)
add_test(NAME random_rows_width7_differs_from_16
  COMMAND ${CMAKE_COMMAND} "-DA=${RR_WIDTH7}|--threads|1"
          "-DB=$<TARGET_FILE:random_rows>|--epochs|3|--bodies|6000|--width|16|--threads|1"
          -DEXPECT=different -P ${STRADS_TEST_SCRIPTS}/compare_runs.cmake)
strads_add_dual_test(NAME random_rows_width7
                     COMMAND random_rows --epochs 3 --bodies 6000 --width 7
                     NODES 2 THREADS 2 COMPARE "checksum:" TIMEOUT 120)
add_test(NAME checkpoint_random_rows_width7_killed_in_node_file_write
  COMMAND ${CMAKE_COMMAND} "-DCMD=${RR_WIDTH7}|--nodes|2"
          -DDIR=${CMAKE_CURRENT_BINARY_DIR}/checkpoints/random_rows_width7 -DEVERY=1
          -DKILL=STRADS_CHECKPOINT_KILL_AT=2 -DEXPECT=ckpt-1
          -P ${STRADS_TEST_SCRIPTS}/checkpoint_restart.cmake)
set_tests_properties(random_rows_width7_nodes2 random_rows_width7_differs_from_16
  checkpoint_random_rows_width7_killed_in_node_file_write PROPERTIES TIMEOUT 120)
