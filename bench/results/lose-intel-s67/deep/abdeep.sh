#!/bin/bash
# abdeep.sh: ResNet-50 at one thread, TLM-32xg (this session's) vs TLM-32xg + 64 tlm-evolutionary, in one tlm run twice, then beside ORT in one process twice
set -e
cd /work/main
O=bench/results/e2e/onnx; D=/tmp/s67; m=resnet50; c=0
for i in 1 2; do
  taskset -c $c $D/tlm --threads 1 run $O/$m.onnx --schedules evo=$D/$m.t1.tlm32+evo64.jsonl deep=$D/$m.t1.deep.jsonl --turns 6 --repeat 30 --csv $D/$m.abdeep$i.csv > $D/$m.abdeep$i.log 2>&1
done
for i in 1 2; do
  taskset -c $c bench/.venv/bin/python bench/lose/interleave.py --threads 1 --blocks 20 --block 6 --variant evo=$D/$m.t1.tlm32+evo64.jsonl --variant deep=$D/$m.t1.deep.jsonl --out $D/ildeep-$m $( [ $i = 2 ] && echo --reuse ) $O/$m.onnx > $D/$m.ildeep$i.log 2>&1
  cp $D/ildeep-$m/*.csv $D/$m.ildeep$i.csv
done
echo done > $D/abdeep.done
