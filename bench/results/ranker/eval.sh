#!/usr/bin/env bash
# The shipped zero-shot ranker without a machine: how close its favourite among each held-out
# task's measured programs comes to that task's best (best / chosen latency, mean over tasks),
# beside the first program measured and the average one. Records: the held-out driver's
# 2-thread runs on Zen 4 (expert-evolutionary, evolutionary and tlm at 10 per task; held-out
# tasks, never in the ranker's training data). Run from the repository root.
set -eu
tlm=${1:-./build/tlm}
r=bench/results/heldout/records
for m in resnet50 mobilenet_v2 bert-base gpt2; do
  echo "== $m"
  "$tlm" ranker eval --ranker models/ranker.json --records "$r/$m.t2.expert-evolutionary10.jsonl.gz" \
    "$r/$m.t2.evolutionary10.jsonl.gz" "$r/$m.t2.tlm10.jsonl.gz" | tail -1
done
