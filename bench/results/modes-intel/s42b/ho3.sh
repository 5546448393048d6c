#!/bin/bash
# Held-out models with no measurement, interleaved with ORT: session 41's picks (a) vs session 42's
# (b: the new experts and the ranker retrained on session 42's records). 2 threads then 1.
cd /work/main
for T in 2 1; do
  for m in resnet50 gpt2 bert-base mobilenet_v2; do
    d=runs/s42/m3-t$T-$m
    ROUNDS=2 THREADS=$T bench/lose/modes.sh $d bench/results/e2e/onnx/$m.onnx a=bench/results/zero-shot/intel/intel-t${T}r.$m.jsonl b=runs/hz/s42b-t$T.$m.jsonl
    rm -rf $d/art
    echo "$(date +%H:%M:%S) t$T $m done"; grep "tlm / ORT" $d/modes.log
  done
done
echo HO3_DONE
