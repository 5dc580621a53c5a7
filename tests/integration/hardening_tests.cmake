# Hardening (issue 18): untrusted paths, flags and thread counts end in a clear error, exit 2,
# never a hang or a crash.

# NAME: COMMAND (a |-separated list) exits 2 within 30 s with stderr matching REGEX.
function(strads_refusal_test name regex cmd)
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} "-DCMD=${cmd}" "-DREGEX=${regex}" -DTIMEOUT=30
            -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
  set_tests_properties(${name} PROPERTIES TIMEOUT 60)
endfunction()
add_test(NAME fifo_inputs_refused
  COMMAND bash ${STRADS_TEST_SCRIPTS}/fifo_inputs.sh $<TARGET_FILE:strads> $<TARGET_FILE:sgdmf>
          $<TARGET_FILE:mlr> ${CMAKE_CURRENT_BINARY_DIR}/fifo_inputs)
set_tests_properties(fifo_inputs_refused PROPERTIES TIMEOUT 300)

# --timeout out of its range (NaN passed `PositiveNumber`, 1e20 livelocked, 1e10 failed every
# wait at once): refused before any node starts.
foreach(value nan 1e300 1e10 0)
  strads_refusal_test(timeout_flag_refused_${value}
    "--timeout: '${value}' is (not a number|out of range 0.001 .. 2592000 s)"
    "$<TARGET_FILE:sgdmf>|--nodes|2|--timeout|${value}")
endforeach()

# Flags in range that start absurd thread counts: refused before any thread starts, naming the
# bound (262 144 threads exhausted the machine's process limit).
strads_refusal_test(process_threads_bounded
  "262400 threads in one process, over the bound of 4096"
  "$<TARGET_FILE:sgdmf>|--nodes|256|--threads|1024")

# Under mpiexec every rank's failure report reaches the user through `strads replay`, not only
# divergences.
add_test(NAME replay_mpi_error_report
  COMMAND bash ${STRADS_TEST_SCRIPTS}/replay_mpi_error_report.sh $<TARGET_FILE:strads>
          $<TARGET_FILE:sgdmf> ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/replay_mpi_error_report)
set_tests_properties(replay_mpi_error_report PROPERTIES TIMEOUT 180)

# A cleanly closed trace with a short node log is corrupt (exit 2), not incomplete.
add_test(NAME corrupt_clean_trace
  COMMAND bash ${STRADS_TEST_SCRIPTS}/corrupt_clean_trace.sh $<TARGET_FILE:strads>
          $<TARGET_FILE:sgdmf> ${CMAKE_CURRENT_BINARY_DIR}/corrupt_clean_trace)
set_tests_properties(corrupt_clean_trace PROPERTIES TIMEOUT 180)

# Smaller flags (class 11): a negative seed wrapped silently to 2^64 - 1; --parallel without
# --single-process was ignored silently.
foreach(flag seed chaos)
  strads_refusal_test(${flag}_flag_negative_refused
    "--${flag}: '-1' is not an integer from 0 to 18446744073709551615"
    "$<TARGET_FILE:sgdmf>|--${flag}|-1")
endforeach()
# Past 2^64 - 1 CLI11 alone clamped to 2^64 - 1 without a word; an example's --data-seed took
# "-1" as 2^64 - 1 (lda, lasso, word2vec, mlr).
strads_refusal_test(seed_flag_too_large_refused
  "--seed: '18446744073709551616' is not an integer from 0"
  "$<TARGET_FILE:sgdmf>|--seed|18446744073709551616")
foreach(program lda lasso word2vec mlr sgdmf)
  strads_refusal_test(${program}_data_seed_negative_refused
    "--data-seed: '-1' is not an integer from 0 to 18446744073709551615"
    "$<TARGET_FILE:${program}>|--data-seed|-1")
endforeach()
# A word that names no command: CLI11 said only "A subcommand is required".
strads_refusal_test(strads_unknown_command_named
  "unknown command 'bogus' of strads: use record, replay, trace, dualtest, gdb or run"
  "$<TARGET_FILE:strads>|bogus")
strads_refusal_test(strads_trace_unknown_command_named
  "unknown command 'bogus' of strads trace: use info, dump, stats, diff, export or view"
  "$<TARGET_FILE:strads>|trace|bogus")
strads_refusal_test(replay_parallel_needs_single_process "--parallel requires --single-process"
  "$<TARGET_FILE:strads>|replay|--parallel|${CMAKE_CURRENT_BINARY_DIR}|--|$<TARGET_FILE:sgdmf>")
# A command that cannot run leaves no trace directory behind (it left an empty one).
add_test(NAME record_nonexistent_leaves_no_trace
  COMMAND bash -c "rm -rf \"$1\"; \"$0\" record -o \"$1\" -- /nonexistent; rc=$?; [ $rc -eq 127 ] && [ ! -e \"$1\" ]"
          $<TARGET_FILE:strads> ${CMAKE_CURRENT_BINARY_DIR}/record_nonexistent)
set_tests_properties(record_nonexistent_leaves_no_trace PROPERTIES TIMEOUT 60)

# Sizes from data and flags (class 10): a user id of 2^31 - 1 overflowed `1 + Max` ("negative
# size"), --features 2147483647 ended in std::bad_alloc naming nothing. (Refused on any machine
# of less than 137 GB.)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/huge_user_id.txt "2147483647 1 4.0\n0 0 3.0\n")
set(TOO_BIG "dvector 'W' of 2147483648 elements of [0-9]+ bytes: .* over this machine's memory")
# From a file, the refusal names the line of the id that sized the model (file:line).
strads_refusal_test(sgdmf_huge_user_id_refused "huge_user_id.txt:1: user id 2147483647: ${TOO_BIG}"
  "$<TARGET_FILE:sgdmf>|--nodes|2|--data|${CMAKE_CURRENT_BINARY_DIR}/huge_user_id.txt")
# The serial and OpenMP twins load the same files (sgdmf_serial ended in "terminate called ...
# std::bad_alloc", exit 134): an item id on line 2 here.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/huge_item_id.txt "0 0 3.0\n1 2147483646 4.0\n")
foreach(twin sgdmf_serial sgdmf_omp)
  strads_refusal_test(${twin}_huge_item_id_refused
    "huge_item_id.txt:2: item id 2147483646 \\(2147483647 rows of [0-9]+ bytes\\) needs at least [0-9.]+ GB, over this machine's memory"
    "$<TARGET_FILE:${twin}>|--data|${CMAKE_CURRENT_BINARY_DIR}/huge_item_id.txt|--epochs|1")
endforeach()
strads_refusal_test(mlr_huge_features_refused "${TOO_BIG}"
  "$<TARGET_FILE:mlr>|--features|2147483647|--epochs|1")
# A docword header's D (or W) sizes a row of topic counts per document: D = 2^30 ended in
# std::bad_alloc, exit 1. Refused at its header line (on any machine of less than 2^30 rows).
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/lda_huge_docs.txt "1073741824\n3\n1\n1 1 1\n")
foreach(program lda lda_serial)
  strads_refusal_test(${program}_huge_document_count_refused
    "lda_huge_docs.txt:1: document count D 1073741824 needs that many rows of [0-9]+-byte topic counts"
    "$<TARGET_FILE:${program}>|--data|${CMAKE_CURRENT_BINARY_DIR}/lda_huge_docs.txt|--epochs|1")
endforeach()

# A parse error quotes a long token shortened (mlr echoed a whole 1 MB token).
string(REPEAT "x" 100000 LONG_TOKEN)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/long_token.libsvm "0 ${LONG_TOKEN}\n")
strads_refusal_test(mlr_long_token_shortened "long_token.libsvm:1: feature 'x+[.][.][.]' is not"
  "$<TARGET_FILE:mlr>|--data|${CMAKE_CURRENT_BINARY_DIR}/long_token.libsvm")

# Node logs swapped between nodes or copied from another recording (class 5): every chunk names
# its node and run, checked on open (they were "complete", and replay waited 120 s).
add_test(NAME foreign_node_logs_refused
  COMMAND bash ${STRADS_TEST_SCRIPTS}/foreign_node_logs.sh $<TARGET_FILE:strads>
          $<TARGET_FILE:sgdmf> ${CMAKE_CURRENT_BINARY_DIR}/foreign_node_logs)
set_tests_properties(foreign_node_logs_refused PROPERTIES TIMEOUT 180)

# A trace of more nodes than one process runs, replayed --single-process: refused by the trace's
# name (it failed with "--nodes: Value 257 not in range", a flag the user never passed).
add_executable(write_manifest ${STRADS_TEST_SCRIPTS}/write_manifest.cc)
target_link_libraries(write_manifest PRIVATE strads_trace)
set(NODES257 ${CMAKE_CURRENT_BINARY_DIR}/nodes257)
strads_refusal_test(replay_257_nodes_refused
  "nodes257 was recorded on 257 nodes; --single-process runs at most 256 in one process"
  "bash|-c|mkdir -p ${NODES257} && $<TARGET_FILE:write_manifest> ${NODES257} 257 && exec $<TARGET_FILE:strads> replay --single-process ${NODES257} -- $<TARGET_FILE:sgdmf>")

# The examples' real-valued flags: CLI11 reads "nan" and "inf" as numbers and its range checks
# let NaN through, so `--gamma nan` trained a NaN model and exited 0 (examples/common/
# number_flags.h).
foreach(case "sgdmf|--gamma|nan" "mlr|--lr|inf" "lda|--alpha|nan" "word2vec|--sample|nan"
             "lasso|--correlation|nan")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 program)
  list(GET parts 1 flag)
  list(GET parts 2 value)
  strads_refusal_test(${program}_${value}_flag_refused "${flag}: '${value}' is not a finite number"
    "$<TARGET_FILE:${program}>|${flag}|${value}")
endforeach()
strads_refusal_test(checkpoint_seconds_nan_refused "--checkpoint-seconds: 'nan' is not a number"
  "$<TARGET_FILE:sgdmf>|--checkpoint|${CMAKE_CURRENT_BINARY_DIR}/never_written|--checkpoint-seconds|nan")

# A synthetic problem sized by flags past this machine's memory: refused before it is made (the
# word2vec and lasso generators grew to gigabytes until killed; lda ended in std::bad_alloc).
# Sizes past any machine's memory, so that the tests hold on every machine.
strads_refusal_test(lda_synthetic_too_large_refused
  "the synthetic corpus \\(--docs 1073741824 x --doc-length 1048576 tokens, --words [0-9]+\\) needs at least .* GB, over this machine's memory"
  "$<TARGET_FILE:lda>|--docs|1073741824|--doc-length|1048576")
strads_refusal_test(lasso_synthetic_too_large_refused
  "the synthetic problem \\(--features 1073741824 x --column-nnz 65536 entries.* needs at least .* GB"
  "$<TARGET_FILE:lasso_serial>|--features|1073741824|--column-nnz|65536")
# (word2vec's largest --tokens, 2^31, needs about 36 GB: refused on a machine with less, made on
# one with more, so no test of it here.)

# A --checkpoint DIR that cannot be made is refused at the start, with the reason; before, the
# first checkpoint failed after the run's first operators, naming a file inside DIR ("No such
# file or directory") where the cause was a parent that is not a directory (or not writable).
strads_refusal_test(checkpoint_dir_unmakeable_refused
  "--checkpoint [^ ]*CMakeCache.txt/ck: cannot make the directory: Not a directory"
  "$<TARGET_FILE:sgdmf>|--nodes|2|--epochs|1|--quiet|--checkpoint|${CMAKE_BINARY_DIR}/CMakeCache.txt/ck|--checkpoint-every|1")

# MPMD ranks run with other --epochs: the rank with more waits in its next AsyncFor for blocks
# the other, already in the collective after its loop, never sends. Named within seconds (the
# exchange's wait watches for the peer's collective messages), where it waited until --timeout
# with a message naming neither place.
strads_refusal_test(mpmd_ranks_other_epochs_named
  "node 1 is in AsyncFor at [^ ]*sgdmf.cc:[0-9]+ over .*, waiting for node 0's blocks for phase [0-9]+ of [0-9]+, while node 0 is in its collective call [0-9]+"
  "${MPIEXEC_EXECUTABLE}|-n|1|$<TARGET_FILE:sgdmf>|--ratings|20000|--epochs|1|--timeout|60|:|-n|1|$<TARGET_FILE:sgdmf>|--ratings|20000|--epochs|2|--timeout|60")

# A loop whose reconnaissance records or plan would not fit in what the process can still use
# (here --memory-limit; on a machine, MemAvailable or the cgroup's limit) is refused when its
# first body says how large a body's records are, naming the loop and the bound, where it grew
# into the OOM killer (docs/async_for.md, "Refusing a loop the machine cannot hold").
# sgdmf's DDSs fit in 70 MB (refused below about 50 MB), its records (9 bytes a rating binned, 28
# as the lock engine's elements) do not (it runs whole from about 105 MB, 1 thread).
strads_refusal_test(memory_limit_refuses_reconnaissance
  "node 0: reconnaissance of AsyncFor at [^ ]*sgdmf.cc:[0-9]+ \\(1900000 bodies on each of 1 node\\(s\\) of this process, about [0-9]+ bytes each\\) needs about [0-9.e+-]+ GB, over nine tenths of the [0-9.e+-]+ GB this process can still use \\(--memory-limit, less this process's resident memory\\); use more nodes"
  "$<TARGET_FILE:sgdmf>|--threads|1|--epochs|1|--memory-limit|70M")
strads_refusal_test(memory_limit_refuses_lock_engine_records
  "reconnaissance of AsyncFor at [^ ]*sgdmf.cc:[0-9]+ \\(1900000 bodies on each of 1 node\\(s\\) of this process, about [0-9]+ bytes"
  "$<TARGET_FILE:sgdmf>|--threads|1|--async-engine|locks|--epochs|1|--memory-limit|70M")
# no-sanitizer: a sanitizer's shadow memory and redzones move the process's resident bytes, and
# with them the limits between which the records, not the DDSs, are refused.
set_tests_properties(memory_limit_refuses_reconnaissance memory_limit_refuses_lock_engine_records
  PROPERTIES LABELS no-sanitizer)
strads_refusal_test(memory_limit_flag_refused
  "--memory-limit: '1.5G' is not a size"
  "$<TARGET_FILE:sgdmf>|--memory-limit|1.5G")
# A DDS that fits the machine but not what the process can still use: refused when made.
strads_refusal_test(memory_limit_refuses_dds
  "dvector 'ratings' \\(1900000 elements on each of 1 node\\(s\\) of this process, about 12 bytes each\\) needs about [0-9.e+-]+ GB, over nine tenths of the [0-9.e+-]+ GB this process can still use \\(--memory-limit"
  "$<TARGET_FILE:sgdmf>|--epochs|1|--memory-limit|20M")
# The other way round: rank 1 (fewer epochs) waits in Checksum's hash for rank 0's state while rank
# 0 has sent it the blocks of its next AsyncFor call instead; named as well.
strads_refusal_test(mpmd_ranks_other_epochs_named_in_collective
  "node 1 is in its collective call [0-9]+, a hash in node order \\(as in Checksum\\), while node 0 has sent this node blocks of an AsyncFor's exchange between rounds"
  "${MPIEXEC_EXECUTABLE}|-n|1|$<TARGET_FILE:sgdmf>|--ratings|20000|--epochs|2|--timeout|60|:|-n|1|$<TARGET_FILE:sgdmf>|--ratings|20000|--epochs|1|--timeout|60")

# Where both ranks wait to receive first (lasso: rank 0 in AsyncForEach's gather, at its root;
# rank 1 in Checksum's hash, after node 0's state), no message is in flight: each rank's wait
# notice tells the other where it waits. Without notices this waited out --timeout (60 s here),
# naming tag 1 only.
strads_refusal_test(mpmd_ranks_both_receiving_named
  "node [01] is in its collective call [0-9]+, a (gather|hash)[^,]*, while node [01] is in its collective call [0-9]+, a (gather|hash).*, waiting for node [01]: every node must call the operators"
  "${MPIEXEC_EXECUTABLE}|-n|1|$<TARGET_FILE:lasso>|--features|5000|--epochs|3|--timeout|60|:|-n|1|$<TARGET_FILE:lasso>|--features|5000|--epochs|2|--timeout|60")# Four ranks, the last with fewer epochs: it waits in the hash's chain for rank 2, which has left
# the gather (not a root) for the call after it, so the awaited rank's notice tells nothing.
# Rank 0, the gather's root, waits for rank 3 and tells it so: at rank 3's own call number, as
# another collective, which no timing explains. Without that it waited out --timeout.
strads_refusal_test(mpmd_ranks_chain_named
  "node [0-3] is in its collective call [0-9]+, a (gather|hash)[^,]*, while node [0-3] is in its collective call [0-9]+, a (gather|hash).*, waiting for node [0-3]: every node must call the operators"
  "${MPIEXEC_EXECUTABLE}|-n|3|$<TARGET_FILE:lasso>|--features|5000|--epochs|3|--timeout|60|:|-n|1|$<TARGET_FILE:lasso>|--features|5000|--epochs|2|--timeout|60")
