# strads_add_dual_test: registers a strads program's discrepancy-free dual tests with ctest.
#
#   strads_add_dual_test(NAME name COMMAND program [args...]
#                        [NODES P...] [THREADS T...] [MPI] [TIMEOUT seconds]
#                        [COMPARE prefix...] [ENVIRONMENT VAR=value...])
#
# For every P in NODES (default 2) and T in THREADS (default 1) it adds the ctest test
# `name_dual_n<P>_t<T>` (`..._mpi` with MPI) running
#
#   strads dualtest --nodes P --threads T [--mpi] -- program args...
#
# which runs the forward and backward tests (the program in test mode, serially on one node of
# one thread and in parallel on P nodes of T threads) and fails when they disagree. `program`
# may be a target of the project. MPI runs the parallel side under mpiexec -n P (MPIEXEC_EXECUTABLE
# from FindMPI, else `mpiexec` on the PATH) instead of P nodes in one process. TIMEOUT (default
# 300) bounds the whole test; each of its four runs gets a quarter. COMPARE replaces the stdout
# line prefixes compared (default "epoch " and "checksum:"). ENVIRONMENT sets variables for the
# runs. The runs' commands, outputs and .dual files are kept in <build dir>/dualtest/<test name>.
#
# The `strads` tool is STRADS_EXECUTABLE: the installed one after find_package(strads), the
# project's own inside the strads build.
include_guard(GLOBAL)

function(strads_add_dual_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "MPI" "NAME;TIMEOUT"
                        "COMMAND;NODES;THREADS;COMPARE;ENVIRONMENT")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "strads_add_dual_test: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_NAME OR NOT arg_COMMAND)
    message(FATAL_ERROR "strads_add_dual_test: NAME and COMMAND are required")
  endif()
  if(NOT STRADS_EXECUTABLE)
    message(FATAL_ERROR "strads_add_dual_test: STRADS_EXECUTABLE (the strads tool) is not set: "
                        "call find_package(strads) first")
  endif()
  if(NOT arg_NODES)
    set(arg_NODES 2)
  endif()
  if(NOT arg_THREADS)
    set(arg_THREADS 1)
  endif()
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 300)
  endif()
  math(EXPR run_timeout "${arg_TIMEOUT} / 4")
  if(run_timeout LESS 5)
    set(run_timeout 5)
  endif()

  list(POP_FRONT arg_COMMAND program)
  if(TARGET ${program})
    set(program "$<TARGET_FILE:${program}>")
  endif()
  set(options --timeout ${run_timeout})
  set(suffix "")
  if(arg_MPI)
    if(MPIEXEC_EXECUTABLE)
      set(launcher ${MPIEXEC_EXECUTABLE})
    else()
      set(launcher mpiexec)
    endif()
    list(APPEND options --mpi --mpiexec ${launcher})
    set(suffix _mpi)
  endif()
  foreach(prefix IN LISTS arg_COMPARE)
    list(APPEND options "--compare=${prefix}")
  endforeach()

  foreach(nodes IN LISTS arg_NODES)
    foreach(threads IN LISTS arg_THREADS)
      set(test ${arg_NAME}_dual_n${nodes}_t${threads}${suffix})
      add_test(NAME ${test}
               COMMAND ${STRADS_EXECUTABLE} dualtest --nodes ${nodes} --threads ${threads}
                       ${options} --work ${CMAKE_CURRENT_BINARY_DIR}/dualtest/${test}
                       -- ${program} ${arg_COMMAND})
      set_tests_properties(${test} PROPERTIES TIMEOUT ${arg_TIMEOUT} LABELS dualtest)
      if(arg_ENVIRONMENT)
        set_tests_properties(${test} PROPERTIES ENVIRONMENT "${arg_ENVIRONMENT}")
      endif()
    endforeach()
  endforeach()
endfunction()
