# The trace viewer's commands (issue 14): trace export (Chrome Trace Events), trace view (headless
# Chromium) and the format check.
set(VIEWER_WORK ${CMAKE_CURRENT_BINARY_DIR}/viewer)
add_test(NAME trace_export
  COMMAND bash ${STRADS_TEST_SCRIPTS}/trace_export.sh $<TARGET_FILE:strads> ${VIEWER_WORK}/export
          $<TARGET_FILE:sgdmf> ${STRADS_TEST_SCRIPTS}/validate_trace_events.py)
set_tests_properties(trace_export PROPERTIES TIMEOUT 300 PASS_REGULAR_EXPRESSION "ok: ")
# A trace recorded by the format-5 build (tests/data/format5_trace, sgdmf of main at f58fc21).
add_test(NAME trace_format5_refused
  COMMAND ${CMAKE_COMMAND}
          "-DCMD=$<TARGET_FILE:strads>|trace|info|${PROJECT_SOURCE_DIR}/tests/data/format5_trace"
          "-DREGEX=manifest.*got 5, this reader supports 9"
          -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
# A trace recorded by the format-6 build (tests/data/format6_trace, sgdmf --async-engine locks
# --threads 2, 2000 ratings): its thread digests fold otherwise, so it is refused.
add_test(NAME trace_format6_refused
  COMMAND ${CMAKE_COMMAND}
          "-DCMD=$<TARGET_FILE:strads>|trace|info|${PROJECT_SOURCE_DIR}/tests/data/format6_trace"
          "-DREGEX=manifest.*got 6, this reader supports 9"
          -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
# strads trace view in headless Chromium: the page's drawn counts equal the trace's, on a real
# trace (all inline) and on a synthetic one past kViewEagerRows (tiles, compressed blocks).
add_test(NAME trace_view
  COMMAND bash ${STRADS_TEST_SCRIPTS}/trace_view.sh $<TARGET_FILE:strads> ${VIEWER_WORK}/view
          $<TARGET_FILE:sgdmf> $<TARGET_FILE:synthetic_trace>)
set_tests_properties(trace_view PROPERTIES TIMEOUT 300 PASS_REGULAR_EXPRESSION "ok: ")
