#!/usr/bin/env bash
# Does glibc's handling of Halide's per-call scratch buffers cost the dense layers inside the
# model? Halide's JIT pipelines allocate their internal buffers (e.g. the FFN down-projection's
# 384 KiB accumulator) with malloc at every call; glibc serves large ones with mmap or trims the
# heap top after free, so the next call faults fresh zeroed pages in. Same tlm run of BERT-base's
# one-thread zero-shot programs (--schedules tlm: this machine reports another L3 than session 57s, so its records do not deploy here), plain vs with glibc's mmap and trim thresholds at 1 GiB
# (every scratch block reused from the heap, never returned), alternating, on CPU ${CPU:-0}.
#   bench/results/lose-intel-s58/malloc/ab.sh [ROUNDS=3] [MODEL=bert-base]
set -euo pipefail
cd "$(dirname "$0")/../../../.."
rounds=${1:-3}
model=${2:-bert-base}
out=bench/results/lose-intel-s58/malloc
tlm=${TLM_BIN:-build/tlm}
cpu=${CPU:-0}
tun=glibc.malloc.mmap_threshold=1073741824:glibc.malloc.trim_threshold=1073741824
for r in $(seq 1 "$rounds"); do
  for v in plain tuned; do
    env=()
    [[ $v == tuned ]] && env=(GLIBC_TUNABLES=$tun)
    echo "== $(date +%H:%M:%S) $model $v round $r"
    env "${env[@]}" taskset -c "$cpu" "$tlm" --threads 1 run "bench/results/e2e/onnx/$model.onnx" \
      --layout auto --schedules tlm \
      --no-verify --repeat 10 --csv "$out/$model.$v.$r.csv" | tail -n 3
  done
done
