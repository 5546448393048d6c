#!/bin/bash
# hz.sh NAME [RANKER] : TLM-1xg programs (no measurement) of the four held-out ONNX models with the
# shipped model and RANKER (default models/ranker.json), each program then measured once (2
# threads) into runs/hz/NAME.<model>.jsonl, the records bench/lose/modes.sh compiles.
# THREADS=1 compiles and measures for one thread on CPU 0 (hz1.sh); MODELS="..." narrows the models;
# CKPT=FILE writes them with another language model than the shipped models/tlm.ckpt.
cd "$(dirname "$0")/../../../.."
n=$1; r=${2:-models/ranker.json}
t=${THREADS:-2}
cpus=$( ((t == 1)) && echo 0 || echo "0-$((t - 1))")
mkdir -p runs/hz
for m in ${MODELS:-resnet50 mobilenet_v2 bert-base gpt2}; do
  onnx=bench/results/e2e/onnx/$m.onnx
  d=runs/hz/$n.$m
  rm -rf $d; mkdir -p $d
  /usr/bin/time -f "%e s" -o $d/compile.time taskset -c $cpus build/tlm --threads $t compile $onnx --tlm --model ${CKPT:-models/tlm.ckpt} --ranker $r -o $d --no-build > $d/compile.log 2>&1 || { echo "compile failed $m"; continue; }
  sed -E 's/^task [0-9]+ [a-z0-9_]+: //' $d/schedules.txt > $d/s.txt
  rm -f runs/hz/$n.$m.jsonl
  taskset -c $cpus build/tlm --threads $t measure $d/s.txt --records runs/hz/$n.$m.jsonl --workload $onnx --strategy tlm-1xg --repeats 5 > $d/measure.log 2>&1 || echo "measure failed $m"
  echo "$(date +%H:%M:%S) $m: $(wc -l < $d/s.txt) programs, compile $(cat $d/compile.time)"
done
