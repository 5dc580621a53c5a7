# word2vec integration tests: BSP checksums across transports, node and thread counts; the loss
# falls and ends within 2% of the serial program's; bad input; SSP under chaos recorded and
# replayed.
set(W2V_SMALL --tokens 40000 --words 2000 --clusters 20 --min-count 2 --epochs 3 --minibatch 100)
string(REPLACE ";" "|" W2V_ARGS "${W2V_SMALL}")
set(MPI_RUN "${MPIEXEC_EXECUTABLE}|${MPIEXEC_NUMPROC_FLAG}")

add_test(NAME word2vec_nodes2_equals_mpiexec2
  COMMAND ${CMAKE_COMMAND} "-DA=$<TARGET_FILE:word2vec>|${W2V_ARGS}|--nodes|2|--threads|1"
          "-DB=${MPI_RUN}|2|$<TARGET_FILE:word2vec>|${W2V_ARGS}|--threads|1"
          -P ${STRADS_TEST_SCRIPTS}/compare_runs.cmake)
set(W2V_CONVERGE --tokens|200000|--words|5000|--clusters|20|--epochs|3)
add_test(NAME word2vec_loss_close_to_serial
  COMMAND ${CMAKE_COMMAND} "-DA=$<TARGET_FILE:word2vec>|${W2V_CONVERGE}|--nodes|2|--threads|2|--minibatch|50"
          "-DB=$<TARGET_FILE:word2vec_serial>|${W2V_CONVERGE}" -DKEY=loss -DTOLERANCE=2
          -P ${STRADS_TEST_SCRIPTS}/rmse_close.cmake)
# Malformed text corpora: file:line: what, exit code 2, on every program.
string(ASCII 1 control)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/w2v_bad_control.txt "a b c\nb c a\na ${control}b c\n")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/w2v_bad_vocabulary.txt "a b c\nd e f\n")
set(W2V_BAD_CASES
  "w2v_bad_control.txt:3: control character 1 in column 3"
  "w2v_bad_vocabulary.txt:2: fewer than 2 words occur at least 5 times")
foreach(case IN LISTS W2V_BAD_CASES)
  string(REGEX MATCH "^[a-z0-9_]+" name "${case}")
  string(REGEX MATCH "^[a-z0-9_.]+" file "${case}")
  add_test(NAME ${name}_serial
    COMMAND ${CMAKE_COMMAND}
            "-DCMD=$<TARGET_FILE:word2vec_serial>|--data|${CMAKE_CURRENT_BINARY_DIR}/${file}"
            "-DREGEX=${case}" -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
  add_test(NAME ${name}_mpiexec2
    COMMAND ${CMAKE_COMMAND}
            "-DCMD=${MPI_RUN}|2|$<TARGET_FILE:word2vec>|--data|${CMAKE_CURRENT_BINARY_DIR}/${file}"
            "-DREGEX=${case}" -P ${STRADS_TEST_SCRIPTS}/expect_error.cmake)
  set_tests_properties(${name}_serial ${name}_mpiexec2 PROPERTIES TIMEOUT 120)
endforeach()
set_tests_properties(word2vec_nodes2_equals_mpiexec2 word2vec_loss_close_to_serial
  PROPERTIES TIMEOUT 180)

# SSP (nondeterministic: updates are added in arrival order): chaos runs differ without
# replay, and recorded ones replay identically on the cluster and in one process.
set(W2V_SSP ${W2V_SMALL} --sync ssp --staleness 1 --threads 2)
add_test(NAME replay_word2vec_ssp_chaos_3x
  COMMAND bash ${STRADS_TEST_SCRIPTS}/replay_chaos.sh $<TARGET_FILE:strads> ${MPIEXEC_EXECUTABLE}
          2 3 ${CMAKE_CURRENT_BINARY_DIR}/replay/word2vec_ssp $<TARGET_FILE:word2vec> ${W2V_SSP})
add_test(NAME chaos_without_replay_differs_word2vec_ssp
  COMMAND bash ${STRADS_TEST_SCRIPTS}/chaos_differs.sh ${MPIEXEC_EXECUTABLE} 2 6
          $<TARGET_FILE:word2vec> ${W2V_SSP})
set_tests_properties(replay_word2vec_ssp_chaos_3x chaos_without_replay_differs_word2vec_ssp
  PROPERTIES TIMEOUT 600)
