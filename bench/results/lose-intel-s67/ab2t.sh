#!/bin/bash
# ab.sh MODEL CPU: old (committed Intel TLM-32xg set) vs new (this session's) in one tlm run, twice; then beside ORT in one process
set -e
m=$1; c=$2; cd /work/main
H=bench/results/heldout-intel/records; O=bench/results/e2e/onnx; D=/tmp/s67
for i in 1 2; do
  taskset -c $c $D/tlm --threads 2 run $O/$m.onnx --schedules old=$H/$m.t2.tlm32.jsonl.gz new=$D/$m.t2.tlm32.jsonl --turns 6 --repeat 30 --csv $D/$m.ab2t$i.csv > $D/$m.ab2t$i.log 2>&1
done
for i in 1 2; do
  taskset -c $c bench/.venv/bin/python bench/lose/interleave.py --threads 2 --blocks 20 --block 6 --variant old=$H/$m.t2.tlm32.jsonl.gz --variant new=$D/$m.t2.tlm32.jsonl --out $D/il2t-$m $( [ $i = 2 ] && echo --reuse ) $O/$m.onnx > $D/$m.il2t$i.log 2>&1
  cp $D/il2t-$m/*.csv $D/$m.il2t$i.csv 2>/dev/null || true
done
echo done > $D/$m.ab2t.done
