#!/usr/bin/env bash
# Session 53: ResNet-50's tuned sets of this machine against ONNX Runtime in ONE process (AOT
# artifacts and an ORT session taking turns, bench/lose/interleave.py), at one and two threads.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
r=bench/results/heldout-intel/records
out=bench/results/heldout-intel/ab53/interleave
onnx=bench/results/e2e/onnx/resnet50.onnx
for t in 1 2; do
  gunzip -kf $r/resnet50.t$t.tlm10.jsonl.gz 2>/dev/null || true
  [[ $t == 1 ]] && cpus=0 || cpus=0-1
  variants=(--variant tlm10=$r/resnet50.t$t.tlm10.jsonl)
  [[ $t == 1 ]] && variants+=(--variant tlm32=$r/resnet50.t1.tlm32.jsonl)
  taskset -c $cpus bench/.venv/bin/python bench/lose/interleave.py --threads $t "${variants[@]}" \
    --tlm "${TLM_BIN:-build/tlm}" --out $out/t$t $onnx
done
