#!/usr/bin/env bash
# Models outside the training zoo (bench/unseen/models.py), compiled with no measurement: for each,
# `tlm run MODEL --schedules tlm` (both sets verified against the reference interpreter; the
# zero-shot programs against tlm's default schedules, taking turns), then the zero-shot artifact
# beside ONNX Runtime in one process (bench/lose/interleave.py, variant tlm = `tlm compile --tlm`).
#
#   bench/unseen/run.sh THREADS [MODEL...]
#
# THREADS=1 pins everything to core CPU (default 0), else to cores 0..THREADS-1. Results in
# RESULTS (default bench/results/unseen): <model>.t<T>.run.log (the tlm run), <model>.t<T>/ (the
# interleave's CSV and log), summary.t<T>.txt (one line per model). ONNX files in ONNX_DIR
# (default bench/results/unseen/onnx, exported on first use; not committed). BLOCKS=15 blocks
# per side; ART_DIR (default /tmp/tlm-unseen-art) holds the compiled artifacts. TLM_BIN (default
# build/tlm). Needs bench/setup.sh (bench/.venv with ONNX Runtime).
set -eu
cd "$(dirname "$0")/../.."
threads=${1:?usage: bench/unseen/run.sh THREADS [MODEL...]}
shift
results=${RESULTS:-bench/results/unseen}
onnx_dir=${ONNX_DIR:-$results/onnx}
tlm=${TLM_BIN:-build/tlm}
blocks=${BLOCKS:-15}
art=${ART_DIR:-/tmp/tlm-unseen-art}
cpus=${CPU:-0}
[ "$threads" -gt 1 ] && cpus=0-$((threads - 1))
models=("$@")
[ ${#models[@]} -eq 0 ] && mapfile -t models < <(/usr/bin/python3 -c \
  "import sys; sys.path.insert(0, 'bench/unseen'); import models; print('\n'.join(models.MODELS))")
[ -x bench/.venv/bin/python ] || { echo "bench/.venv missing: run bench/setup.sh" >&2; exit 1; }
mkdir -p "$results" "$onnx_dir"
summary=$results/summary.t$threads.txt
for m in "${models[@]}"; do
  f=$onnx_dir/$m.onnx
  [ -f "$f" ] || /usr/bin/python3 bench/unseen/models.py --out-dir "$onnx_dir" "$m" > /dev/null
  log=$results/$m.t$threads.run.log
  echo "== $m ($threads thread(s), $(date -u +%H:%M:%S) UTC)"
  if ! taskset -c "$cpus" "$tlm" --threads "$threads" run "$f" --schedules tlm > "$log" 2>&1; then
    echo "$m: tlm run failed ($(grep -m1 -i 'error' "$log"))" | tee -a "$summary"
    continue
  fi
  e2e=$(grep '^end-to-end' "$log")
  taskset -c "$cpus" bench/.venv/bin/python bench/lose/interleave.py --threads "$threads" \
    --blocks "$blocks" --tlm "$tlm" --variant tlm=tlm --out "$results/$m.t$threads" \
    --art-dir "$art/$m.t$threads" "$f" \
    > "$results/$m.t$threads.interleave.log" 2>&1 || true
  ratio=$(grep -m1 'tlm / ORT' "$results/$m.t$threads.interleave.log" || echo "interleave failed")
  echo "$m: $e2e | vs ORT: $ratio" | tee -a "$summary"
done
