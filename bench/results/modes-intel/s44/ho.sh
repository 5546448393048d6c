#!/bin/bash
# Held-out models with no measurement, interleaved with ORT: session 43's picks (a) vs session 44's
# (b = runs/hz/$B-*: s44a, the tap-split experts + ranker retrained; s44b, also the depthwise
# experts with the blocks alone parallel + ranker retrained with them). 2 threads then 1.
cd /work/main
B=${B:-s44b}
for m in resnet50 mobilenet_v2 gpt2 bert-base; do
  for T in 2 1; do
    d=runs/s44/mc-$B-t$T-$m
    ROUNDS=2 THREADS=$T bench/lose/modes.sh $d bench/results/e2e/onnx/$m.onnx a=bench/results/zero-shot/intel/s43/picks/s43c-t$T.$m.jsonl b=runs/hz/$B-t$T.$m.jsonl
    rm -rf $d/art
    echo "$(date +%H:%M:%S) t$T $m done"; grep "tlm / ORT" $d/modes.log
  done
done
echo HO_DONE
