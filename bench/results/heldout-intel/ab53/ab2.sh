#!/usr/bin/env bash
# Second round of session 53's A/B (ab.sh first): the records selected again by the binary at
# hand as set NAME (speed-adjusted random assignments), then PROCS `tlm run` processes timing
# TLM-1xg, ab.sh's old and new selections and this one, the set order rotated per process.
#   NAME=new2 bench/results/heldout-intel/ab53/ab2.sh resnet50 [...]
set -euo pipefail
cd "$(dirname "$0")/../../../.."
NEW=${NEW:-build/tlm}
NAME=${NAME:-new2}
PROCS=${PROCS:-3}
work=${WORK:-/tmp/ab53}
for m in "$@"; do
  onnx=bench/results/e2e/onnx/$m.onnx
  cp "$work/$m.base.jsonl" "$work/$m.$NAME.jsonl"
  echo "== $(date +%T) $m: step 4b, $NAME"
  "$NEW" tune "$onnx" --strategy tlm --trials-per-task 10 --threads 2 --seed 0 --quiet \
    --layout auto --no-e2e --records "$work/$m.$NAME.jsonl" > "$work/$m.$NAME.log" 2>&1
  grep -E '^in-model' "$work/$m.$NAME.log" || true
  sets=(tlm "old=$work/$m.old.jsonl" "new=$work/$m.new.jsonl" "$NAME=$work/$m.$NAME.jsonl")
  for ((i = 0; i < PROCS; i++)); do
    rot=("${sets[@]:i%4}" "${sets[@]:0:i%4}")
    ((i % 2 == 1)) && rot=($(printf '%s\n' "${rot[@]}" | tac))
    list=$(IFS=,; echo "${rot[*]}")
    echo "== $(date +%T) $m: $NAME run $i ($list)"
    "$NEW" --threads 2 run "$onnx" --layout auto --repeat 48 --turns 8 --schedules "$list" \
      --csv "$work/$m.$NAME.run$i.csv" > "$work/$m.$NAME.run$i.log" 2>&1
    grep -E "^end-to-end" "$work/$m.$NAME.run$i.log" | tail -1
  done
done
