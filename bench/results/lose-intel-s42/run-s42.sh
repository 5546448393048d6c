#!/bin/bash
# Intel 2t where-we-lose for ResNet-50 after session 42's experts: the zero-shot picks (the retrained
# ranker) plus every expert program of the held-out model measured on this machine (held-out: never a
# training record), then the paired rounds against ORT.
cd /work/main
L=bench/results/lose-intel-s42
mkdir -p $L/records
for m in resnet50; do
  onnx=bench/results/e2e/onnx/$m.onnx
  taskset -c 0-1 build/tlm --threads 2 generate $onnx --task all --expert -o runs/$m.expert.txt
  cp runs/hz/s42b-t2.$m.jsonl $L/records/$m.2t.jsonl
  taskset -c 0-1 build/tlm --threads 2 measure runs/$m.expert.txt --records $L/records/$m.2t.jsonl --workload $onnx --repeats 5 > runs/$m.expert.measure.log 2>&1
  tail -1 runs/$m.expert.measure.log
done
LOSE_OUT=$L LAYOUT=auto MODELS="resnet50" FINAL_TOP=1 ROUNDS=3 bench/lose/run.sh 2 0 maps peak final pairs peak table
echo LOSE_DONE
