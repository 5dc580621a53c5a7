# mlr integration tests: BSP checksums equal across transports (in-process nodes vs mpiexec);
# SSP and Hybrid complete under mpiexec with falling loss; LIBSVM input errors.
set(MLR_SMALL --samples 20000 --features 500 --classes 8 --epochs 3)
string(REPLACE ";" "|" MLR_ARGS "${MLR_SMALL}")
set(MLR_MPI "${MPIEXEC_EXECUTABLE}|${MPIEXEC_NUMPROC_FLAG}")
set(MLR_COMPARE ${STRADS_TEST_SCRIPTS}/compare_runs.cmake)  # shared with sgdmf

add_test(NAME mlr_bsp_nodes4_equals_mpiexec4
  COMMAND ${CMAKE_COMMAND} "-DA=$<TARGET_FILE:mlr>|${MLR_ARGS}|--nodes|4|--threads|1"
          "-DB=${MLR_MPI}|4|$<TARGET_FILE:mlr>|${MLR_ARGS}|--threads|1" -P ${MLR_COMPARE})
add_test(NAME mlr_bsp_mpiexec2_equals_nodes2
  COMMAND ${CMAKE_COMMAND} "-DA=${MLR_MPI}|2|$<TARGET_FILE:mlr>|${MLR_ARGS}|--threads|1"
          "-DB=$<TARGET_FILE:mlr>|${MLR_ARGS}|--nodes|2|--threads|1" -P ${MLR_COMPARE})
add_test(NAME mlr_bsp_mpiexec2_equals_nodes2_threads2
  COMMAND ${CMAKE_COMMAND} "-DA=${MLR_MPI}|2|$<TARGET_FILE:mlr>|${MLR_ARGS}|--threads|2"
          "-DB=$<TARGET_FILE:mlr>|${MLR_ARGS}|--nodes|2|--threads|2" -P ${MLR_COMPARE})
# Reconnaissance changes which elements travel, not the result: bit-identical to the dense run.
add_test(NAME mlr_bsp_reconnaissance_equals_dense
  COMMAND ${CMAKE_COMMAND} "-DA=${MLR_MPI}|2|$<TARGET_FILE:mlr>|${MLR_ARGS}|--threads|2|--re"
          "-DB=$<TARGET_FILE:mlr>|${MLR_ARGS}|--nodes|2|--threads|2" -P ${MLR_COMPARE})
add_test(NAME mlr_ssp_reconnaissance_mpiexec2_loss_falls
  COMMAND ${CMAKE_COMMAND}
          "-DCMD=${MLR_MPI}|2|$<TARGET_FILE:mlr>|${MLR_ARGS}|--threads|2|--sync|ssp|--staleness|1|--re"
          -P ${STRADS_TEST_SCRIPTS}/mlr_loss_falls.cmake)
add_test(NAME mlr_ssp_mpiexec2_loss_falls
  COMMAND ${CMAKE_COMMAND}
          "-DCMD=${MLR_MPI}|2|$<TARGET_FILE:mlr>|${MLR_ARGS}|--threads|1|--sync|ssp|--staleness|2"
          -P ${STRADS_TEST_SCRIPTS}/mlr_loss_falls.cmake)
add_test(NAME mlr_hybrid_mpiexec2_loss_falls
  COMMAND ${CMAKE_COMMAND}
          "-DCMD=${MLR_MPI}|2|$<TARGET_FILE:mlr>|${MLR_ARGS}|--threads|2|--sync|hybrid"
          -P ${STRADS_TEST_SCRIPTS}/mlr_loss_falls.cmake)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/mlr_good.svm
     "# label idx:val ...\n0 1:0.5 3:1.5\n1 2:1 4:0.25\n0 1:1\n1 4:2 2:0.5\n")
add_test(NAME mlr_libsvm_file_loss_falls
  COMMAND ${CMAKE_COMMAND}
          "-DCMD=${MLR_MPI}|2|$<TARGET_FILE:mlr>|--data|${CMAKE_CURRENT_BINARY_DIR}/mlr_good.svm|--classes|2|--features|4|--minibatch|1|--epochs|3|--lr|0.1|--threads|1"
          -P ${STRADS_TEST_SCRIPTS}/mlr_loss_falls.cmake)
# Malformed LIBSVM files: NAME writes CONTENT to NAME.svm, runs `LAUNCH mlr --data NAME.svm
# ARGS...` (LAUNCH: "" or mpiexec's "-n|2") and expects exit code 2 with "NAME.svm:REGEX".
function(mlr_bad_file_test name content launch regex)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/mlr_${name}.svm "${content}")
  set(cmd "$<TARGET_FILE:mlr>|--data|${CMAKE_CURRENT_BINARY_DIR}/mlr_${name}.svm")
  foreach(arg IN LISTS ARGN)
    string(APPEND cmd "|${arg}")
  endforeach()
  if(launch)
    set(cmd "${MLR_MPI}|${launch}|${cmd}")
  endif()
  add_test(NAME mlr_libsvm_${name}
    COMMAND ${CMAKE_COMMAND} "-DCMD=${cmd}" "-DREGEX=mlr_${name}.svm:${regex}"
            -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
endfunction()
mlr_bad_file_test(feature_beyond_model "0 1:0.5\n1 2:1\n1 9:1\n" ""
  "3: feature id 9 is beyond the model's 4 features" --nodes 2 --features 4)
mlr_bad_file_test(repeated_feature "0 1:0.5\n1 4:1 2:1 4:3\n" ""
  "2: feature id 4 appears more than once on the line" --nodes 2 --features 4)
mlr_bad_file_test(malformed_value "0 1:0.5\n1 2:x\n" "2"
  "2: feature value 'x' is not a finite number")
set(MLR_WIDE "0")
foreach(i RANGE 1 33)
  string(APPEND MLR_WIDE " ${i}:1")
endforeach()
mlr_bad_file_test(too_many_features "0 1:1\n${MLR_WIDE}\n" "" "2: more than 32 features on one line")
set_tests_properties(mlr_bsp_nodes4_equals_mpiexec4 mlr_bsp_mpiexec2_equals_nodes2
  mlr_bsp_mpiexec2_equals_nodes2_threads2 mlr_bsp_reconnaissance_equals_dense
  mlr_ssp_reconnaissance_mpiexec2_loss_falls
  mlr_ssp_mpiexec2_loss_falls mlr_hybrid_mpiexec2_loss_falls mlr_libsvm_file_loss_falls
  mlr_libsvm_feature_beyond_model mlr_libsvm_malformed_value mlr_libsvm_too_many_features
  PROPERTIES TIMEOUT 120)
