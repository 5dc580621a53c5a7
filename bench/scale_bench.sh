#!/usr/bin/env bash
# SGD-MF at scale: memory and first-call cost of strads against the serial program, as ratios
# measured in this script.
#   bench/scale_bench.sh [BUILD_DIR]
# Environment:
#   SIZES="1900000 19000000"  ratings per data set (empty: none); users and items grow with the
#                             ratings from the default shape (20 k users x 5 k items at 1.9 M)
#   SHAPES="100000000:480000:18000"  extra RATINGS:USERS:ITEMS data sets (Netflix's shape);
#                             default none: 100 M ratings need 1.3 GB for the serial program and,
#                             at 40 bytes per rating while planning (docs/async_for.md), about
#                             5.3 GB for strads
#   NODES="8 16 64"           logical nodes (--nodes) for the simulated-cluster figures
#   CLUSTER_RATINGS=1900000   ratings of the simulated-cluster runs
#   EPOCHS=4                  epochs of the timed runs (the first includes reconnaissance, the
#                             second the plan's second execution, checked whole: sgdmf's
#                             per-epoch figure is of epochs 3 on)
#   REPS=3                    timed runs per program and size: the times are their medians
# Peak RSS is /usr/bin/time's maximum resident set size; the simulated cluster also reports peak
# PSS (see the note under its table). Times are each program's own --time
# figures (data generation excluded), so run it on an otherwise idle machine. Per-epoch speed
# at the default size is bench/sgdmf_bench.sh's subject (more epochs, the framework cost against
# the serial loop in strads' order); this script's per-epoch columns are for the larger sizes.
set -euo pipefail
build=${1:-build}
ex=$build/examples
epochs=${EPOCHS:-4}
reps=${REPS:-3}
sizes=${SIZES-1900000 19000000}
shapes=${SHAPES:-}
nodes_list=${NODES:-8 16 64}
cluster_ratings=${CLUSTER_RATINGS:-1900000}

peak_kb() {  # peak RSS in kB of "$@" (output discarded)
  local f
  f=$(mktemp)
  /usr/bin/time -f '%M' -o "$f" "$@" > /dev/null 2>&1
  cat "$f"
  rm -f "$f"
}
peak_pss_kb() {  # "PSS ONCE": peaks in kB of "$@" (output discarded), sampled every 20 ms:
  # the proportional set size, and the RSS with each page of a shared memory file counted once
  # (RssAnon + RssFile + Pss_Shmem: what RSS would be with one mapping of each file per process)
  "$@" > /dev/null 2>&1 &
  local pid=$! peak=0 peak_once=0 kb once
  while kill -0 "$pid" 2> /dev/null; do
    read -r kb once < <(cat "/proc/$pid/status" "/proc/$pid/smaps_rollup" 2> /dev/null |
      awk '/^Pss:/ {p = $2} /^RssAnon:|^RssFile:|^Pss_Shmem:/ {o += $2} END {print p, o}') || true
    [[ -n $kb && $kb -gt $peak ]] && peak=$kb
    [[ -n $once && $once -gt $peak_once ]] && peak_once=$once
    sleep 0.02
  done
  wait "$pid" || true
  echo "$peak $peak_once"
}
runs() {  # the output of REPS runs of "$@": one run of EPOCHS - 1 timed epochs varies by up to
  # 40 % on this VM
  for _ in $(seq "$reps"); do "$@" 2>/dev/null; done
}
runs_reported() {  # as runs, with --schedule-report's lines (stderr) kept
  for _ in $(seq "$reps"); do "$@" --schedule-report 2>&1; done
}
plan_ms() {  # the median over the "plan:" lines on stdin of reconnaissance + planning, in ms
  # (sgdmf --quiet plans one loop a run)
  awk '/^plan: / {t = 0; for (i = 1; i < NF; ++i)
         if ($i == "reconnaissance" || $i == "planning") t += $(i + 1)
       print t}' | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}
median() {  # the median of the numbers after PATTERN's line's ": " in the lines on stdin
  awk -v p="$1" 'index($0, p) == 1 {split(substr($0, index($0, ": ") + 2), v, " "); print v[1]}' |
    sort -g |
    awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}
field() {  # the median over REPS runs of "$@" of the number after PATTERN in its output
  local pattern=$1
  shift
  runs "$@" | median "$pattern"
}

data_sets=()
for s in $sizes; do
  data_sets+=("$s:$((20000 * s / 1900000)):$((5000 * s / 1900000))")
done
for s in $shapes; do data_sets+=("$s"); done

printf '%-30s %10s %10s %7s %12s %11s %9s %9s %9s %9s %9s %9s\n' "data (ratings/users/items)" \
  "strads MB" "serial MB" "ratio" "first/epoch" "plan/epoch" "serial ms" "1 thr ms" "2 thr ms" \
  "mpi2 ms" "1thr/ser" "2thr x"
for set in "${data_sets[@]}"; do
  IFS=: read -r ratings users items <<< "$set"
  data=(--ratings "$ratings" --users "$users" --items "$items" --quiet)
  strads_kb=$(peak_kb "$ex/sgdmf" --threads 2 --epochs 2 "${data[@]}")
  serial_kb=$(peak_kb "$ex/sgdmf_serial" --epochs 2 "${data[@]}")
  out=$(runs_reported "$ex/sgdmf" --threads 2 --epochs "$epochs" --time "${data[@]}")
  first=$(median "time of epoch 1" <<< "$out")
  epoch2=$(median "time per epoch" <<< "$out")
  plan=$(plan_ms <<< "$out")
  serial=$(field "time per epoch" "$ex/sgdmf_serial" --epochs "$epochs" --time "${data[@]}")
  one=$(field "time per epoch" "$ex/sgdmf" --threads 1 --epochs "$epochs" --time "${data[@]}")
  mpi2=$(field "time per epoch" mpiexec -n 2 "$ex/sgdmf" --threads 1 --epochs "$epochs" --time \
    "${data[@]}")
  awk -v d="$ratings/$users/$items" -v a="$strads_kb" -v b="$serial_kb" -v f="$first" \
    -v e="$epoch2" -v p="$plan" -v s="$serial" -v o="$one" -v m="$mpi2" 'BEGIN {
      printf "%-30s %10.0f %10.0f %6.2fx %11.1fx %10.1fx %9.1f %9.1f %9.1f %9.1f %8.2fx %8.2fx\n",
        d, a / 1024, b / 1024, a / b, (f - e) / e, p / e, s, o, e, m, o / s, s / e }'
done
echo "(first/epoch: the first call's cost, the first epoch's time less one epoch, over one epoch:"
echo " reconnaissance, planning and the first run's access check (--access-check sample checks the"
echo " first run of a plan whole); plan/epoch: reconnaissance and planning alone, as node 0 timed"
echo " them (--schedule-report's \"plan:\" line), over one epoch; 1thr/ser: strads 1 thread ms /"
echo " serial ms, the serial program in its own order, so it includes the cost of strads' cell"
echo " order (not the framework cost, which bench/sgdmf_bench.sh measures against the serial loop"
echo " in strads' order); 2thr x: serial ms / 2 threads ms; every time the median of REPS runs)"

echo
users=$((20000 * cluster_ratings / 1900000))
items=$((5000 * cluster_ratings / 1900000))
data=(--ratings "$cluster_ratings" --users "$users" --items "$items" --quiet --epochs 2 --blocks 128)
base_kb=$(peak_kb "$ex/sgdmf" --nodes 1 --threads 1 "${data[@]}")
read -r base_pss base_once < <(peak_pss_kb "$ex/sgdmf" --nodes 1 --threads 1 "${data[@]}")
printf '%-8s %9s %9s %9s %9s %11s %9s %13s %9s %22s\n' "--nodes" "RSS MB" "RSS x" "PSS MB" \
  "PSS x" "RSS once MB" "once x" "private PSS x" "PSS/priv" "largest node's MB"
for p in 1 $nodes_list; do
  kb=$(peak_kb "$ex/sgdmf" --nodes "$p" --threads 1 "${data[@]}")
  read -r pss once < <(peak_pss_kb "$ex/sgdmf" --nodes "$p" --threads 1 "${data[@]}")
  read -r private _ < <(peak_pss_kb "$ex/sgdmf" --nodes "$p" --threads 1 --private-pages \
    "${data[@]}")
  largest=$("$ex/sgdmf" --nodes "$p" --threads 1 "${data[@]}" --memory-report 2>&1 >/dev/null |
    awk '/^memory: node [0-9]+ total:/ {if ($5 > m) m = $5} END {print m + 0}')
  awk -v p="$p" -v k="$kb" -v b="$base_kb" -v s="$pss" -v bs="$base_pss" -v v="$private" \
    -v o="$once" -v bo="$base_once" -v l="$largest" 'BEGIN {
      printf "%-8s %9.0f %8.2fx %9.0f %8.2fx %11.0f %8.2fx %12.2fx %8.2fx %22.1f\n",
        p, k / 1024, k / b, s / 1024, s / bs, o / 1024, o / bo, v / bs, s / v, l / 1048576 }'
done
echo "(RSS: /usr/bin/time's maximum resident set size, which counts a page once per mapping, so"
echo " a page the logical nodes share counts once per node; PSS: the peak of /proc/PID/"
echo " smaps_rollup's proportional set size, sampled every 20 ms, which counts it once: the"
echo " physical memory; RSS once: RssAnon + RssFile + Pss_Shmem, sampled likewise, the RSS if each"
echo " shared file were mapped once in the process (docs/async_for.md, \"Why not one mapping\");"
echo " private: --private-pages, every node its own copy of the pages it reads,"
echo " as an MPI rank; largest node's MB: --memory-report's largest node total, pages it holds"
echo " for itself, without the pages of others' values it reads from the shared files)"
