#!/bin/bash
# conf.sh NAME MODEL RECORDS [NSETS]: one `tlm run` at one thread with NSETS identical schedule
# sets (the same records file) -> NAME.csv, NAME.log, plus the huge pages the process held.
# Environment passes through (HL_LLVM_ARGS, TLM_HUGE_PAGES).
set -u
name=$1 model=$2 rec=$3 n=${4:-3}
cd /work/main
sets=""; for s in a b c d e f; do [ $n -le 0 ] && break; sets="$sets${sets:+,}$s=$rec"; n=$((n-1)); done
taskset -c 0 build/tlm --threads 1 run bench/results/e2e/onnx/$model.onnx --schedules $sets \
  --no-verify --repeat ${REPEAT:-30} --turns ${TURNS:-2} --csv runs/s40/$name.csv > runs/s40/$name.log 2>&1 &
pid=$!
hp=0
while kill -0 $pid 2>/dev/null; do
  x=$(awk '/AnonHugePages/ {print $2}' /proc/$pid/smaps_rollup 2>/dev/null); [ -n "$x" ] && hp=$x
  sleep 2
done
echo "AnonHugePages(last seen) ${hp} kB" >> runs/s40/$name.log
grep "^turns" runs/s40/$name.log > /dev/null; python3 runs/s40/spread.py runs/s40/$name.csv >> runs/s40/$name.log
