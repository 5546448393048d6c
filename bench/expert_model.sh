#!/usr/bin/env bash
# Measures every expert program (tlm generate --expert) of every task of a model into a records
# file, for `tlm run MODEL --schedules expert=OUT.jsonl`: bench/expert_model.sh MODEL OUT.jsonl
# Run from the repository root after ./scripts/setup.sh. Tasks without expert programs are skipped.
set -u
m=$1; out=$2
n=$(./build/tlm extract "$m" 2>/dev/null | sed -n 's/.*-> \([0-9]*\) tasks.*/\1/p')
for ((t=0; t<n; t++)); do
  if ./build/tlm generate "$m" --task $t --expert -o /tmp/ex_$$.txt 2>/dev/null; then
    ./build/tlm measure /tmp/ex_$$.txt --records "$out" --workload "$m" --strategy expert 2>&1 | tail -1
  fi
done
