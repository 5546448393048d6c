#!/usr/bin/env bash
# Subgraph benchmark, one strategy: tune every task of bench/subgraph/tasks.txt with STRATEGY and
# append every measurement to bench/results/subgraph/STRATEGY.jsonl (one records file per
# strategy, so that no strategy sees another's measurements). Resumable: rerunning continues from
# the records. bench/subgraph/report.py turns the records into the curves and tables.
#
#   bench/subgraph/run.sh STRATEGY [TRIALS=200] [CPU]
#
# CPU pins the run to one core (taskset) with one Halide thread, so that two strategies can run
# side by side under the same conditions; without it the run uses every core.
set -euo pipefail
cd "$(dirname "$0")/../.."
strategy=${1:?usage: bench/subgraph/run.sh STRATEGY [TRIALS] [CPU]}
trials=${2:-200}
cpu=${3:-}
out=bench/results/subgraph
mkdir -p "$out"
pin=()
threads=()
if [[ -n "$cpu" ]]; then
  pin=(taskset -c "$cpu")
  threads=(--threads 1)
fi
grep -v '^#' bench/subgraph/tasks.txt | while read -r label spec task; do
  [[ -z "$label" ]] && continue
  echo "== $(date +%H:%M:%S) $strategy $label ($spec task $task)"
  "${pin[@]}" ./build/tlm tune "$spec" --tasks "$task" --strategy "$strategy" \
    --trials-per-task "$trials" --records "$out/$strategy.jsonl" --no-e2e --quiet \
    "${threads[@]}" --seed 0 | grep -E '^ *[0-9]+ |measurements:'
done
