#!/bin/bash
# Provenance (session 71): ResNet-50's TLM-32xg tuned again by the current binary (sets/, the
# held-out driver's settings: tlm strategy, 32 per task, seed 0, steps 4 and 4b, no e2e) beside
# the committed held-out TLM-32xg and session 70's re-tuned TLM-10xg, all with ONNX Runtime in one
# process (bench/lose/interleave.py, 30 blocks), RUNS runs per thread count. Run from the root.
set -eu
cd "$(dirname "$0")/../../.."
tlm=${TLM_BIN:-./build/tlm}
R=bench/results/lose-intel-s71
onnx=bench/results/e2e/onnx/resnet50.onnx
mkdir -p $R/ab /tmp/s71
for t in ${THREADS:-1 2}; do
  gunzip -c bench/results/heldout-intel/records/resnet50.t$t.tlm32.jsonl.gz > /tmp/s71/c32.t$t.jsonl
  gunzip -c bench/results/lose-intel-s70/sets/resnet50.t$t.tlm10.jsonl.gz > /tmp/s71/n10.t$t.jsonl
  gunzip -c $R/sets/resnet50.t$t.tlm32.jsonl.gz > /tmp/s71/n32.t$t.jsonl
  cpus=0; [ $t = 2 ] && cpus=0-1
  for run in $(seq 1 ${RUNS:-2}); do
    taskset -c $cpus bench/.venv/bin/python bench/lose/interleave.py --threads $t --blocks 30 \
      --tlm $tlm --variant c32=/tmp/s71/c32.t$t.jsonl --variant n32=/tmp/s71/n32.t$t.jsonl \
      --variant n10=/tmp/s71/n10.t$t.jsonl --art-dir /tmp/s71/art --reuse \
      --out $R/ab/t$t.run$run $onnx > $R/ab/t$t.run$run.log 2>&1
  done
done
