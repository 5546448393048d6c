#!/usr/bin/env bash
# Session 53's A/B of in-model selection: whole schedule sets (session 52's binary, OLD) against
# random assignments (this session's, NEW), on session 49's held-out TLM-10xg records of this
# machine (Intel model 167, two threads). Per model: the tuner's step 4 (re-measurement) once,
# then the same records selected by each binary (step 4b only, nothing searched), then PROCS
# `tlm run` processes alternating the set order, each timing TLM-1xg, old and new taking turns.
#   OLD=/tmp/tlm_old (session 52's binary)  bench/results/heldout-intel/ab53/ab.sh resnet50 [mobilenet_v2 ...]
set -euo pipefail
cd "$(dirname "$0")/../../../.."
OLD=${OLD:?the old binary}
NEW=${NEW:-build/tlm}
PROCS=${PROCS:-3}
out=bench/results/heldout-intel/ab53
work=${WORK:-/tmp/ab53}
mkdir -p "$work"
for m in "$@"; do
  onnx=bench/results/e2e/onnx/$m.onnx
  base=$work/$m.base.jsonl
  tune=(tune "$onnx" --strategy tlm --trials-per-task 10 --threads 2 --seed 0 --quiet
    --layout auto --no-e2e)
  if [[ ! -s $base.step4 ]]; then
    gunzip -c bench/results/heldout-intel/records/$m.t2.tlm10.jsonl.gz > "$base"
    echo "== $(date +%T) $m: step 4 (re-measurement)"
    "$NEW" "${tune[@]}" --records "$base" --in-model 0 > "$work/$m.step4.log" 2>&1
    touch "$base.step4"
  fi
  cp "$base" "$work/$m.old.jsonl"
  cp "$base" "$work/$m.new.jsonl"
  echo "== $(date +%T) $m: step 4b, old binary (whole sets)"
  "$OLD" "${tune[@]}" --records "$work/$m.old.jsonl" > "$work/$m.old.log" 2>&1
  grep -E '^in-model' "$work/$m.old.log" || true
  echo "== $(date +%T) $m: step 4b, new binary (random assignments)"
  "$NEW" "${tune[@]}" --records "$work/$m.new.jsonl" > "$work/$m.new.log" 2>&1
  grep -E '^in-model' "$work/$m.new.log" || true
  for ((i = 0; i < PROCS; i++)); do
    if ((i % 2 == 0)); then sets="tlm,old=$work/$m.old.jsonl,new=$work/$m.new.jsonl"
    else sets="new=$work/$m.new.jsonl,old=$work/$m.old.jsonl,tlm"; fi
    echo "== $(date +%T) $m: run $i ($sets)"
    "$NEW" --threads 2 run "$onnx" --layout auto --repeat 48 --turns 8 --schedules "$sets" \
      --csv "$work/$m.run$i.csv" > "$work/$m.run$i.log" 2>&1
    grep -E "turn|end to end|verify" "$work/$m.run$i.log" | tail -12
  done
done
