#!/usr/bin/env bash
# The measurement records the shipped models learn from, unpacked into DIR (one per line on
# stdout): the three loops' measurements (bench/results/loop*/loop-dir.tar.gz: AMD EPYC Zen 1 at
# one core, Zen 4 and Zen 5 at two) and the measured expert programs of every training task
# (bench/results/zero-shot/expert-train*.jsonl.gz: Zen 4, Zen 5; Zen 3 for the AVX2 blocked
# workloads; an Intel Xeon with AVX-512 for the blocked and transformer ones, one thread and
# two, sessions 41-45: -s44 the tap-split and per-core depthwise experts, -s45 the tap splits'
# one-more-loop-parallel twins; kept apart: session 46's 1x1 records, in
# bench/results/zero-shot/intel/s46/, and session 48's greedy programs of the candidate language
# model, in bench/results/zero-shot/intel/s48/greedy/). Only training workloads: `tlm finetune`
# and `tlm ranker train` also leave out every held-out task by key.
# Used by scripts/finetune_shipped.sh and scripts/train_ranker.sh. Run from the root:
#   scripts/shipped_records.sh DIR
set -eu
dir=${1:?usage: scripts/shipped_records.sh DIR}
mkdir -p "$dir"
for l in loop loop-zen4 loop-zen5; do
  tar xzf "bench/results/$l/loop-dir.tar.gz" -C "$dir" "$l/records.jsonl"
  echo "$dir/$l/records.jsonl"
done
ls bench/results/zero-shot/expert-train*.jsonl.gz
