#!/usr/bin/env bash
# Runs "$@" bound to one core: the first of this process's affinity mask (a CI machine's
# cpuset need not hold core 0). Every thread and rank then shares it, so the runtime's waits
# must not spin where no other core can make progress (thread_pool.cc, baton.cc,
# ordered_locks.cc decide by the cores of the mask).
#   on_one_core.sh PROGRAM ARGS...
set -eu
cores=$(taskset -cp $$ | sed 's/.*: *//')
first=${cores%%[,-]*}
exec taskset -c "$first" "$@"
