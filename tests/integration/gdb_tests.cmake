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
  set_tests_properties(gdb_printers PROPERTIES TIMEOUT 300)
endif()
