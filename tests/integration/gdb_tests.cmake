# The gdb plugin (gdb-plugin/): pretty-printers and xmethods on a test program and on sgdmf,
# auto-loaded from the program itself; with auto-load off the same commands print raw members.
find_program(STRADS_GDB gdb)
add_executable(gdb_printers_program ${STRADS_TEST_SCRIPTS}/gdb_printers_program.cc)
target_link_libraries(gdb_printers_program PRIVATE strads::strads)
# -O0: Inspect's arguments stay where gdb can read them.
set_source_files_properties(${STRADS_TEST_SCRIPTS}/gdb_printers_program.cc PROPERTIES
                            COMPILE_OPTIONS -O0)
if(STRADS_GDB)
  add_test(NAME gdb_printers
    COMMAND bash ${STRADS_TEST_SCRIPTS}/gdb_printers.sh $<TARGET_FILE:gdb_printers_program>
            $<TARGET_FILE:sgdmf> ${CMAKE_CURRENT_BINARY_DIR}/gdb_printers)
  # no-sanitizer: the test reads a core dump, which ASan and TSan turn off (scripts/sanitize.sh).
  set_tests_properties(gdb_printers PROPERTIES TIMEOUT 300 LABELS no-sanitizer)
endif()

# Runs SCRIPT (STRADS MPIEXEC WORKDIR THREADS PROG ARGS) on a lock-engine sgdmf trace (2 nodes x
# 2 threads) and an mlr SSP trace of EPOCHS epochs, as tests PREFIX_sgdmf_locks, PREFIX_mlr_ssp.
function(add_gdb_trace_tests prefix script epochs)
  add_test(NAME ${prefix}_sgdmf_locks
    COMMAND bash ${STRADS_TEST_SCRIPTS}/${script} $<TARGET_FILE:strads> ${MPIEXEC_EXECUTABLE}
            ${CMAKE_CURRENT_BINARY_DIR}/${prefix}_sgdmf 2 $<TARGET_FILE:sgdmf>
            --ratings 20000 --users 1000 --items 300 --epochs ${epochs} --async-engine locks)
  add_test(NAME ${prefix}_mlr_ssp
    COMMAND bash ${STRADS_TEST_SCRIPTS}/${script} $<TARGET_FILE:strads> ${MPIEXEC_EXECUTABLE}
            ${CMAKE_CURRENT_BINARY_DIR}/${prefix}_mlr 1 $<TARGET_FILE:mlr>
            --samples 20000 --epochs ${epochs} --sync ssp --staleness 2)
  set_tests_properties(${prefix}_sgdmf_locks ${prefix}_mlr_ssp PROPERTIES TIMEOUT 400)
endfunction()

# `strads gdb` stops before an event of each trace; the replay then ends with the recorded
# checksum.
if(STRADS_GDB)
  add_gdb_trace_tests(gdb_replay_event gdb_replay.sh 3)
endif()

# A replay of a changed input stops in gdb at the divergence, in the program's frame.
if(STRADS_GDB)
  add_test(NAME gdb_stops_at_divergence
    COMMAND bash ${STRADS_TEST_SCRIPTS}/gdb_divergence.sh $<TARGET_FILE:strads>
            ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:sgdmf> ${CMAKE_CURRENT_BINARY_DIR}/gdb_divergence)
  set_tests_properties(gdb_stops_at_divergence PROPERTIES TIMEOUT 300)
endif()

# `strads replay --tag-output`: the tagged lines are the same in a cluster and a single-process
# replay, and `strads gdb --event N` stops after the line tagged N and before the next one.
if(STRADS_GDB)
  add_gdb_trace_tests(replay_tag_output tag_output.sh 4)
endif()
