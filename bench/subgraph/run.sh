#!/usr/bin/env bash
# Subgraph benchmark, one strategy: tune every task of bench/subgraph/tasks.txt with STRATEGY and
# append every measurement to bench/results/subgraph/STRATEGY.jsonl (one records file per
# strategy, so that no strategy sees another's measurements). Resumable: rerunning continues from
# the records. bench/subgraph/report.py turns the records into the curves and tables.
# TASKS=FILE (env) tunes the tasks of another list in the same format (e.g. tasks_train.txt, the
# training-side twin), OUT=DIR (env) writes the records there instead; give report.py the same.
#
#   bench/subgraph/run.sh STRATEGY [TRIALS=200] [CPU]
#
# CPU pins the run to one core (taskset) with one Halide thread, so that two strategies can run
# side by side under the same conditions; without it the run uses every core.
# TLM_MODEL=CKPT (env) gives the tlm and tlm-evolutionary strategies that checkpoint (default: the
# shipped models/tlm.ckpt); NAME=... (env) names the records file instead of STRATEGY (e.g. one
# per checkpoint: NAME=tlm-round8); LABELS=REGEX (env) runs only the tasks whose label matches;
# TLM_BIN=PATH (env) the tlm binary (default build/tlm: point it at a copy to keep building).
# The task ids of the lists count the tasks of the plain (--layout nchw) models.
set -euo pipefail
# TASKS and OUT are taken relative to the directory this is started from.
tasks=$(realpath -m "${TASKS:-$(dirname "$0")/tasks.txt}")
out=$(realpath -m "${OUT:-$(dirname "$0")/../results/subgraph}")
cd "$(dirname "$0")/../.."
[[ -f $tasks ]] || { echo "no task list $tasks" >&2; exit 1; }
strategy=${1:?usage: bench/subgraph/run.sh STRATEGY [TRIALS] [CPU]}
trials=${2:-200}
cpu=${3:-}
mkdir -p "$out"
name=${NAME:-$strategy}
tlm=$(realpath -m "${TLM_BIN:-build/tlm}")
[[ -x $tlm ]] || { echo "no tlm binary at $tlm (build it, or set TLM_BIN)" >&2; exit 1; }
pin=()
threads=()
model=()
[[ -n "${TLM_MODEL:-}" ]] && model=(--model "$TLM_MODEL")
if [[ -n "$cpu" ]]; then
  pin=(taskset -c "$cpu")
  threads=(--threads 1)
fi
grep -v '^#' "$tasks" | while read -r label spec task; do
  [[ -z "$label" ]] && continue
  [[ -n "${LABELS:-}" && ! $label =~ ${LABELS} ]] && continue
  echo "== $(date +%H:%M:%S) $name $label ($spec task $task)"
  "${pin[@]}" "$tlm" tune "$spec" --tasks "$task" --strategy "$strategy" \
    --trials-per-task "$trials" --records "$out/$name.jsonl" --no-e2e --in-model 0 --quiet --layout nchw \
    "${threads[@]}" "${model[@]}" --seed 0 | grep -E '^ *[0-9]+ |measurements:'
done
