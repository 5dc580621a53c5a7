#!/usr/bin/env bash
# SGD-MF time per epoch: serial loop, OpenMP with locks, strads (1 and 2 threads, 2 MPI ranks),
# as ratios to the serial loop measured in the same script. Each program times its own update
# loop (--time: data generation, reconnaissance/planning and RMSE evaluation excluded); the
# median of REPS runs is reported.
#   bench/sgdmf_bench.sh [BUILD_DIR] [extra sgdmf flags...]    (default data: 1.9 M ratings)
set -euo pipefail
build=${1:-build}
shift || true
reps=${REPS:-3}
args=(--epochs "${EPOCHS:-10}" --quiet --time "$@")
ex=$build/examples

median_ms() {  # runs "$@" REPS times, prints the median of the `time per epoch` values
  for _ in $(seq "$reps"); do
    "$@" | awk '/time per epoch/ {print $4}'
  done | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}

# The serial loop in the order strads' schedule runs the bodies: same memory access pattern,
# so strads 1 thread / this ratio is the framework's own cost.
order=$(mktemp)
trap 'rm -f "$order"' EXIT
"$ex/sgdmf" --threads 1 --epochs 1 --quiet --order-out "$order" "$@" > /dev/null

declare -A ms
ms[serial]=$(median_ms "$ex/sgdmf_serial" "${args[@]}")
ms[serial_order]=$(median_ms "$ex/sgdmf_serial" --order "$order" "${args[@]}")
ms[omp2]=$(median_ms "$ex/sgdmf_omp" --threads 2 "${args[@]}")
ms[strads1]=$(median_ms "$ex/sgdmf" --threads 1 "${args[@]}")
ms[strads2]=$(median_ms "$ex/sgdmf" --threads 2 "${args[@]}")
ms[mpi2]=$(median_ms mpiexec -n 2 "$ex/sgdmf" --threads 1 "${args[@]}")

printf '%-34s %12s %18s\n' program "ms/epoch" "speed-up vs serial"
for k in serial serial_order omp2 strads1 strads2 mpi2; do
  case $k in
    serial) name="serial loop" ;;
    serial_order) name="serial loop, strads' order" ;;
    omp2) name="OpenMP + locks, 2 threads" ;;
    strads1) name="strads, 1 thread" ;;
    strads2) name="strads, 2 threads" ;;
    mpi2) name="strads, mpiexec -n 2, 1 thread" ;;
  esac
  awk -v n="$name" -v t="${ms[$k]}" -v s="${ms[serial]}" \
    'BEGIN { printf "%-34s %12.1f %17.2fx\n", n, t, s / t }'
done
awk -v a="${ms[strads1]}" -v b="${ms[serial_order]}" \
  'BEGIN { printf "framework cost: strads 1 thread / serial loop in the same order = %.2fx\n", a / b }'
