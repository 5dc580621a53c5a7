#!/usr/bin/env bash
# Soak test of restart after a rank dies, outside ctest: ROUNDS times, sgdmf and mlr BSP on
# `mpiexec -n 2` under `strads run --restarts 1`, one rank killed from outside with SIGKILL after a
# random delay; every run must end with the checksum of an uninterrupted run, and a rank named as
# the one that died first must be the killed process (a rank killed before it registered, in its
# first milliseconds, is not named).
#   scripts/checkpoint_soak.sh [BUILD_DIR]        (ROUNDS=20, SEED=$RANDOM)
set -euo pipefail
build=${1:-build}
rounds=${ROUNDS:-20}
RANDOM=${SEED:=$RANDOM}
echo "seed $SEED"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

for prog in sgdmf mlr; do
  if [[ $prog == sgdmf ]]; then
    args=(--ratings 200000 --users 6000 --items 1500 --epochs 10 --threads 1)
    every=4
  else
    args=(--samples 50000 --features 1000 --epochs 10 --threads 1)
    every=2
  fi
  cmd=(mpiexec -n 2 "$build/examples/$prog" "${args[@]}")
  t0=$(date +%s%N)
  want=$("${cmd[@]}" | grep '^checksum:')
  run_ms=$((($(date +%s%N) - t0) / 1000000))
  for round in $(seq "$rounds"); do
    rm -rf "$work/ckpt"
    "$build/tool/strads" run --restarts 1 --checkpoint "$work/ckpt" --checkpoint-every "$every" \
      -- "${cmd[@]}" >"$work/out" 2>"$work/err" &
    runner=$!
    delay=$((RANDOM % run_ms))
    sleep "$(awk -v d="$delay" 'BEGIN { print d / 1000 }')"
    # The ranks: children of the proxies that mpiexec (the runner's child) started.
    ranks=()
    for launcher in $(pgrep -P "$runner" || true); do
      for proxy in $(pgrep -P "$launcher" || true); do
        mapfile -t -O "${#ranks[@]}" ranks < <(pgrep -P "$proxy" || true)
      done
    done
    victim=""
    if ((${#ranks[@]} > 0)); then
      victim=${ranks[$((RANDOM % ${#ranks[@]}))]}
      kill -9 "$victim" 2>/dev/null || victim=""
    fi
    status=0
    wait "$runner" || status=$?
    got=$(grep '^checksum:' "$work/out" | tail -1 || true)
    restarted=$(grep -c 'restart 1 of 1' "$work/err" || true)
    named=$(grep -o 'rank [0-9]* (pid [0-9]*) died first' "$work/err" || true)
    if [[ $status -ne 0 || "$got" != "$want" ]] ||
      { [[ -n "$named" && "$named" != *"(pid $victim) died first" ]]; }; then
      failed=$((failed + 1))
      echo "$prog round $round: FAILED (status $status, '$got' vs '$want'), killed pid" \
        "${victim:-none} after ${delay} ms, reported '$named'"
      cat "$work/err"
    else
      echo "$prog round $round: ok, killed pid ${victim:-none} after ${delay} ms, restarts" \
        "$restarted${named:+, reported: $named}"
    fi
  done
done
echo "failures: $failed"
[[ $failed -eq 0 ]]
