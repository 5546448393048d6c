#!/bin/bash
# hz1.sh NAME [RANKER]: as hz.sh at one thread (compile and measure with --threads 1 on CPU 0),
# ResNet-50 and MobileNet-V2 unless MODELS="..." names others: runs/hz/NAME.<model>.jsonl for
# `THREADS=1 bench/lose/modes.sh`.
cd "$(dirname "$0")/../../../.."
n=$1; r=${2:-models/ranker.json}
for m in ${MODELS:-resnet50 mobilenet_v2}; do
  onnx=bench/results/e2e/onnx/$m.onnx
  d=runs/hz/$n.$m; rm -rf $d; mkdir -p $d
  taskset -c 0 build/tlm --threads 1 compile $onnx --tlm --ranker $r -o $d --no-build > $d/compile.log 2>&1 || { echo "compile failed $m"; continue; }
  sed -E 's/^task [0-9]+ [a-z0-9_]+: //' $d/schedules.txt > $d/s.txt
  rm -f runs/hz/$n.$m.jsonl
  taskset -c 0 build/tlm --threads 1 measure $d/s.txt --records runs/hz/$n.$m.jsonl --workload $onnx --strategy tlm-1xg --repeats 5 > $d/measure.log 2>&1 || echo "measure failed $m"
  echo "$(date +%H:%M:%S) $m: $(wc -l < $d/s.txt) programs"
done
