#!/bin/bash
# Held-out zero-shot picks with the B-streamed dense experts (s42) vs session 41's picks (same
# ranker, same model), interleaved with ORT: 2 threads then 1.
cd /work/main
bench/results/zero-shot/zen3/hz.sh s42-t2
THREADS=1 bench/results/zero-shot/zen3/hz.sh s42-t1
for T in 2 1; do
  for m in gpt2 bert-base resnet50 mobilenet_v2; do
    d=runs/s42/modes-t$T-$m
    ROUNDS=2 THREADS=$T bench/lose/modes.sh $d bench/results/e2e/onnx/$m.onnx a=bench/results/zero-shot/intel/intel-t${T}r.$m.jsonl b=runs/hz/s42-t$T.$m.jsonl
    rm -rf $d/art
    echo "$(date +%H:%M:%S) t$T $m done"; grep "tlm / ORT" $d/modes.log
  done
done
echo HO_DONE
