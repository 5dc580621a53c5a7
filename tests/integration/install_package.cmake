# The installed package works from another project: installs the build tree into WORK/prefix,
# configures and builds tests/install (find_package(strads), strads::strads,
# strads_add_dual_test, and an ordering policy built against the installed seam headers)
# against it and runs its ctest tests.
#   cmake -DBUILD=<strads build> -DSOURCE=<tests/install> -DREADME=<README.md> -DWORK=<dir> -P ...
# The consumer's CMakeLists.txt must hold the README's consumer lines (its cmake block with
# find_package(strads REQUIRED)) verbatim: what the README says is what this test builds.
file(READ ${README} readme)
string(REGEX MATCHALL "```cmake\n[^`]*```" blocks "${readme}")
set(consumer_lines "")
foreach(block IN LISTS blocks)
  if(block MATCHES "find_package\\(strads REQUIRED\\)")
    string(REGEX REPLACE "^```cmake\n(.*)```$" "\\1" consumer_lines "${block}")
  endif()
endforeach()
if(consumer_lines STREQUAL "")
  message(FATAL_ERROR "${README}: no ```cmake block with find_package(strads REQUIRED)")
endif()
file(READ ${SOURCE}/CMakeLists.txt consumer)
string(FIND "${consumer}" "${consumer_lines}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${SOURCE}/CMakeLists.txt does not hold the consumer lines of ${README} "
                      "verbatim:\n${consumer_lines}")
endif()
file(REMOVE_RECURSE ${WORK})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 240)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix)
run(${CMAKE_COMMAND} -S ${SOURCE} -B ${WORK}/build -DCMAKE_PREFIX_PATH=${WORK}/prefix
    -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK}/build -j2)
run(${CMAKE_CTEST_COMMAND} --test-dir ${WORK}/build --output-on-failure)
if(NOT out MATCHES "trainer_dual_n2_t1 [.]+ +Passed" OR NOT out MATCHES "trainer_dual_n2_t2 [.]+ +Passed"
   OR NOT out MATCHES "trainer_counting_policy [.]+ +Passed")
  message(FATAL_ERROR "the consumer's tests did not run:\n${out}")
endif()
message(STATUS "${out}")
# The gdb plugin installed with the package: the consumer's program loads it from the prefix by
# itself (its .debug_gdb_scripts entry), in plain gdb.
find_program(GDB gdb)
if(GDB)
  run(${GDB} -batch -iex "add-auto-load-safe-path ${WORK}/build"
      -ex "python import strads_gdb" -ex "python print('plugin:', strads_gdb.__file__)"
      -ex "help strads"
      ${WORK}/build/trainer)
  if(NOT out MATCHES "plugin: ${WORK}/prefix/share/strads/gdb-plugin/strads_gdb/__init__.py"
     OR NOT out MATCHES "strads status")
    message(FATAL_ERROR "gdb did not load the installed plugin for the consumer's program:\n${out}")
  endif()
  message(STATUS "${out}")
endif()
