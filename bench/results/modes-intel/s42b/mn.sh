#!/bin/bash
# MobileNet-V2 at 2 threads again (session 42's round 2 had b at 1.001 against a's 0.916).
cd /work/main
d=runs/s42/m4-t2-mobilenet_v2
ROUNDS=2 THREADS=2 bench/lose/modes.sh $d bench/results/e2e/onnx/mobilenet_v2.onnx a=bench/results/zero-shot/intel/intel-t2r.mobilenet_v2.jsonl b=runs/hz/s42b-t2.mobilenet_v2.jsonl
rm -rf $d/art
grep "tlm / ORT" $d/modes.log
echo MN_DONE
