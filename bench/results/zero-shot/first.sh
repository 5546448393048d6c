#!/usr/bin/env bash
# The model's choice among the expert programs against the fixed first expert program of each
# task (no model, no measurement) and the measured best, one `tlm run` per model (2 threads).
# "first" is each task's first record in the expert records (measured in expert order).
set -u
out=${OUT:-runs/zero-shot}
mkdir -p "$out"
for m in resnet50 bert-base:seq=128 gpt2:seq=128 mobilenet_v2; do
  n=${m%%:*}
  zcat bench/results/expert/$n.expert.jsonl.gz | python3 -c '
import sys, json
seen = set()
for l in sys.stdin:
    k = json.loads(l)["sentence"].split(" isa=")[0]
    if k not in seen:
        seen.add(k)
        sys.stdout.write(l)' > "$out/first_$n.jsonl"
  echo "== $(date +%H:%M:%S) $m"
  ./build/tlm run "$m" --threads 2 --repeat 4 --schedules "tlm,first=$out/first_$n.jsonl,measured=bench/results/expert/$n.expert.jsonl.gz" --csv "$out/first_${n}_2t.csv" > "$out/first_${n}_2t.log" 2>&1
  grep -E "^end-to-end|FAIL" "$out/first_${n}_2t.log"
done
