#!/bin/bash
# Provenance (session 70): ResNet-50's TLM-10xg tuned again by the binary with the strided copy
# twins and the parallel root copies, at one thread (core 0) and two (cores 0-1), as the held-out
# driver tunes it (tlm strategy, 10 per task, seed 0, the tuner's steps 4 and 4b, no e2e), into
# sets/; then each against the committed held-out set beside ORT in one process (two runs each).
# Run from the repository root; TLM_BIN (default ./build/tlm).
set -eu
cd "$(dirname "$0")/../../.."
tlm=${TLM_BIN:-./build/tlm}
R=bench/results/lose-intel-s70
mkdir -p $R/sets $R/ab
onnx=bench/results/e2e/onnx/resnet50.onnx
taskset -c 0 $tlm --threads 1 tune $onnx --strategy tlm --trials-per-task 10 --seed 0 --no-e2e \
  --records $R/sets/resnet50.t1.tlm10.jsonl --quiet > $R/sets/resnet50.t1.tlm10.log 2>&1
taskset -c 0-1 $tlm --threads 2 tune $onnx --strategy tlm --trials-per-task 10 --seed 0 --no-e2e \
  --records $R/sets/resnet50.t2.tlm10.jsonl --quiet > $R/sets/resnet50.t2.tlm10.log 2>&1
for t in 1 2; do
  gunzip -c bench/results/heldout-intel/records/resnet50.t$t.tlm10.jsonl.gz > /tmp/s70.old.t$t.jsonl
  cpus=0; [ $t = 2 ] && cpus=0-1
  for run in 1 2; do
    taskset -c $cpus bench/.venv/bin/python bench/lose/interleave.py --threads $t --blocks 30 \
      --tlm $tlm --variant old=/tmp/s70.old.t$t.jsonl --variant new=$R/sets/resnet50.t$t.tlm10.jsonl \
      --art-dir /tmp/s70.art --reuse --out $R/ab/t$t.run$run $onnx > $R/ab/t$t.run$run.log 2>&1
  done
done
