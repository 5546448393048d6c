#!/bin/bash
# Held-out models with no measurement, interleaved with ORT: session 42's picks (a) vs session 43's
# (b: the lane-chunk / taps-outside experts and the ranker retrained with session 43's records --
# blocked convs and the Rows tasks' zero-shot candidates -- sittings scaled). 2 threads then 1.
cd /work/main
for m in resnet50 mobilenet_v2 gpt2 bert-base; do
  for T in 2 1; do
    d=runs/s43/mc-t$T-$m
    ROUNDS=2 THREADS=$T bench/lose/modes.sh $d bench/results/e2e/onnx/$m.onnx a=bench/results/zero-shot/intel/s42b-t$T.$m.jsonl b=runs/hz/s43c-t$T.$m.jsonl
    rm -rf $d/art
    echo "$(date +%H:%M:%S) t$T $m done"; grep "tlm / ORT" $d/modes.log
  done
done
echo HO_DONE
