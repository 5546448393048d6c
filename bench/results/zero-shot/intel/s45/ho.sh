#!/bin/bash
# Session 45: held-out models with no measurement, interleaved with ORT (bench/lose/modes.sh):
# a = the shipped state's picks (session 44's s44c: the session-43 ranker), b = runs/hz/$B-t$T.*
# (s45r1: the ranker retrained with sessions 44-45's expert records, the tap-split twins among
# them). T threads (default 2), MODELS (default resnet50 mobilenet_v2).
cd /work/main
B=${B:-s45r1}; T=${T:-2}
for m in ${MODELS:-resnet50 mobilenet_v2}; do
  d=runs/s45/mc-$B-t$T-$m
  a=runs/hz/s44c-t$T.$m.jsonl
  [ -f $a ] || a=bench/results/zero-shot/intel/s44/picks/s44c-t$T.$m.jsonl
  ROUNDS=2 THREADS=$T bench/lose/modes.sh $d bench/results/e2e/onnx/$m.onnx a=$a b=runs/hz/$B-t$T.$m.jsonl
  rm -rf $d/art
  echo "$(date +%H:%M:%S) t$T $m done"; grep "tlm / ORT" $d/modes.log
done
echo HO_DONE
