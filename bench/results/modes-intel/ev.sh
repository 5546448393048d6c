#!/bin/bash
# interleaved with ORT: old ranker's picks (a) vs the ranker with Intel records (b)
cd /work/main
T=${T:-2}
for m in ${MODELS:-gpt2 resnet50 bert-base mobilenet_v2}; do
  d=bench/results/modes-intel/t$T-$m
  ROUNDS=${ROUNDS:-2} THREADS=$T bench/lose/modes.sh $d bench/results/e2e/onnx/$m.onnx a=runs/hz/intel-t$T.$m.jsonl b=runs/hz/intel-t${T}r.$m.jsonl
  rm -rf $d/art
  echo "$(date +%H:%M:%S) $m done"; grep "tlm / ORT" $d/modes.log
done
echo EV_DONE
