#!/usr/bin/env bash
# Untuned (default-schedule) end-to-end latency of the four reference models at batch 1.
# Every run is verified against the reference interpreter first; the latency is the median of
# --repeat runs after warm-up (tlm run). Output: bench/results/baseline_e2e.md (+ raw logs).
# Usage: bench/baseline_e2e.sh [REPEAT]   (after scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=${1:-10}
OUT=bench/results
mkdir -p "$OUT"
MODELS=(resnet50 mobilenet_v2 bert-base:seq=128 gpt2:seq=128)
{
  echo "| model | tasks | instances | compile s | verify | end-to-end ms (median of $REPEAT) |"
  echo "|---|---|---|---|---|---|"
} > "$OUT/baseline_e2e.md"
for m in "${MODELS[@]}"; do
  log="$OUT/baseline_$(echo "$m" | tr ':=,' '___').log"
  ./build/tlm run "$m" --threads 2 --repeat "$REPEAT" --warmup 3 > "$log" 2>&1
  tasks=$(grep -oE '[0-9]+ tasks, [0-9]+ instances' "$log" | head -1)
  comp=$(grep -oE 'compiled [0-9]+ tasks in [0-9.]+ s' "$log" | grep -oE '[0-9.]+ s' | tr -d ' s')
  verify=$(grep -oE 'verify: (PASS|FAIL)' "$log" | cut -d' ' -f2)
  e2e=$(grep -oE 'end-to-end: [0-9.]+ ms' "$log" | grep -oE '[0-9.]+')
  echo "| $m | ${tasks%% tasks*} | $(echo "$tasks" | grep -oE '[0-9]+ instances' | cut -d' ' -f1) | $comp | $verify | $e2e |" >> "$OUT/baseline_e2e.md"
done
cat "$OUT/baseline_e2e.md"
