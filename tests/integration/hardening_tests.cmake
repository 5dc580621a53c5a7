# Hardening (issue 18): untrusted paths, flags and thread counts end in a clear error, exit 2,
# never a hang or a crash.
add_test(NAME fifo_inputs_refused
  COMMAND bash ${STRADS_TEST_SCRIPTS}/fifo_inputs.sh $<TARGET_FILE:strads> $<TARGET_FILE:sgdmf>
          $<TARGET_FILE:mlr> ${CMAKE_CURRENT_BINARY_DIR}/fifo_inputs)
set_tests_properties(fifo_inputs_refused PROPERTIES TIMEOUT 300)
