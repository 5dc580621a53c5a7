# Restarts that cannot be honoured fail with exit code 2 and a message naming the checkpoint:
# another node count, a shorter run, other flags, a damaged node file, no checkpoint.
#   cmake -DPROG=sgdmf -DARGS="arg|..." -DDIR=work -P checkpoint_refusals.cmake
string(REPLACE "|" ";" args "${ARGS}")
file(REMOVE_RECURSE "${DIR}")

function(expect_refusal what regex)
  execute_process(COMMAND ${PROG} ${args} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 120)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "${what}: expected exit code 2, got '${rc}'\n${out}\n${err}")
  endif()
  if(out MATCHES "checksum: ")
    message(FATAL_ERROR "${what}: printed a checksum before refusing:\n${out}")
  endif()
  if(NOT err MATCHES "${regex}")
    message(FATAL_ERROR "${what}: stderr does not match '${regex}':\n${err}")
  endif()
  message(STATUS "${what}: ${err}")
endfunction()

execute_process(COMMAND ${PROG} ${args} --nodes 2 --epochs 4 --checkpoint ${DIR}
                        --checkpoint-every 4 RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 120)
if(NOT rc EQUAL 0 OR NOT EXISTS "${DIR}/ckpt-8/MANIFEST")
  message(FATAL_ERROR "the checkpointed run failed (${rc}) or left no ckpt-8:\n${err}")
endif()
expect_refusal("another node count" "ckpt-8: a checkpoint of 2 node\\(s\\); this run has 3"
               --nodes 3 --epochs 4 --restart ${DIR})
# --epochs 2 reaches its Checksum where the checkpointed run had the Sum of epoch 3.
expect_refusal("a shorter run" "node-[01].ckpt: reduction 4 before the checkpoint differs"
               --nodes 2 --epochs 2 --restart ${DIR})
expect_refusal("other flags" "node-[01].ckpt: taken with --seed 1 --blocks 0 [^\n]*, this run has --seed 1 --blocks 8"
               --nodes 2 --epochs 4 --blocks 8 --restart ${DIR})
expect_refusal("no checkpoint" "${DIR}/none: no such checkpoint directory"
               --nodes 2 --epochs 4 --restart ${DIR}/none)
expect_refusal("checkpoint flags" "--checkpoint DIR needs exactly one of"
               --nodes 2 --checkpoint ${DIR})
file(WRITE "${DIR}/ckpt-8/node-1.ckpt" "damaged")
expect_refusal("a damaged node file" "ckpt-8/node-1.ckpt: 7 bytes, the manifest says"
               --nodes 2 --epochs 4 --restart ${DIR})
