#!/bin/bash
# Session 46: held-out models with no measurement, interleaved with ORT (bench/lose/modes.sh):
# a = session 45's shipped picks (s45/picks/s45r1-t$T.*), b = runs/hz/$B-t$T.* (s46p: the
# ranker retrained with session 46's 1x1 expert records, MLAS's pointwise loop order among them).
# T threads (default 2), MODELS (default resnet50 mobilenet_v2).
cd /work/main
B=${B:-s46p}; T=${T:-2}
for m in ${MODELS:-resnet50 mobilenet_v2}; do
  d=runs/s46/mc-$B-t$T-$m
  a=bench/results/zero-shot/intel/s45/picks/s45r1-t$T.$m.jsonl
  ROUNDS=2 THREADS=$T bench/lose/modes.sh $d bench/results/e2e/onnx/$m.onnx a=$a b=runs/hz/$B-t$T.$m.jsonl
  rm -rf $d/art
  echo "$(date +%H:%M:%S) t$T $m done"; grep "tlm / ORT" $d/modes.log
done
echo HO_DONE
