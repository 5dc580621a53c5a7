# Runs one command (arguments separated by '|') that prints `epoch N loss X ...` lines and a
# `checksum:` line; fails if it fails, times out, prints fewer than two epochs, or if the last
# epoch's loss is not below the first one's.
#   cmake -DCMD="prog|arg|arg" -P mlr_loss_falls.cmake
include(${CMAKE_CURRENT_LIST_DIR}/run_helpers.cmake)
run_one("${CMD}" out)
if(NOT out MATCHES "checksum: [0-9a-f]+")
  message(FATAL_ERROR "no checksum line:\n${out}")
endif()
string(REGEX MATCHALL "epoch [0-9]+ loss [0-9.]+" lines "${out}")
list(LENGTH lines n)
if(n LESS 2)
  message(FATAL_ERROR "expected at least two epoch lines:\n${out}")
endif()
list(GET lines 0 first)
list(GET lines -1 last)
string(REGEX REPLACE ".* loss " "" first "${first}")
string(REGEX REPLACE ".* loss " "" last "${last}")
# Compare as fixed-point integers (printf %.6f), which CMake's integer comparisons handle.
string(REPLACE "." "" first_i "${first}")
string(REPLACE "." "" last_i "${last}")
math(EXPR first_i "${first_i}")
math(EXPR last_i "${last_i}")
if(NOT last_i LESS first_i)
  message(FATAL_ERROR "loss did not fall: first ${first}, last ${last}\n${out}")
endif()
message(STATUS "loss ${first} -> ${last}")
