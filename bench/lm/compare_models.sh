#!/usr/bin/env bash
# Which checkpoint writes faster programs for tasks it never saw? For every task of
# bench/subgraph/tasks.txt (all held out: drawn from the evaluation workloads), each checkpoint
# writes K programs (`tlm tune --strategy tlm`: its most likely program, then samples) and they
# are measured; the checkpoints take turns task by task, so that all see the same machine.
# bench/lm/compare_models.py summarizes the records (geomean over tasks, relative to the first
# checkpoint: best of K and median of K).
#
#   bench/lm/compare_models.sh OUT_DIR K CKPT...        (env: CPU=1 pins one core, one thread;
#                                                         THREADS=2 writes and runs programs for
#                                                         two cores instead (cores=2 prompts);
#                                                         LABELS=REGEX narrows the tasks)
# Records: OUT_DIR/<checkpoint file name>.jsonl (resumable: rerun to continue).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: bench/lm/compare_models.sh OUT_DIR K CKPT...}
k=${2:?usage: bench/lm/compare_models.sh OUT_DIR K CKPT...}
shift 2
(($#)) || { echo "no checkpoint given" >&2; exit 1; }
for c in "$@"; do [[ -f $c ]] || { echo "no checkpoint $c" >&2; exit 1; }; done
mkdir -p "$out"
pin=()
[[ -n "${CPU:-}" ]] && pin=(taskset -c "$CPU")
grep -v '^#' bench/subgraph/tasks.txt | while read -r label spec task; do
  [[ -z "$label" ]] && continue
  [[ -n "${LABELS:-}" && ! $label =~ ${LABELS} ]] && continue
  for c in "$@"; do
    name=$(basename "$c" .ckpt)
    echo "== $(date +%H:%M:%S) $label ($spec task $task) $name"
    "${pin[@]}" ./build/tlm tune "$spec" --tasks "$task" --strategy tlm --model "$c" \
      --trials-per-task "$k" --records "$out/$name.jsonl" --no-e2e --in-model 0 --quiet --remeasure 0 \
      --threads "${THREADS:-1}" --seed 0 --layout nchw | grep -E 'measurements:' || true
  done
done
/usr/bin/python3 bench/lm/compare_models.py "$out" "$@"
