#!/bin/bash
# ab.sh MODEL CPUS [THREADS]: the committed Intel TLM-32xg set (old) against this session's (new)
# in one `tlm run`, twice; then both beside ORT in one process (interleave.py), twice. THREADS
# (default 1) picks the sets' thread count (.t1. / .t2.) and every run's --threads; CPUS is the
# taskset list (0 at one thread, 0-1 at two). Run from anywhere; paths as in session 67 (/tmp/s67).
set -e
m=$1; c=$2; t=${3:-1}; cd /work/main
H=bench/results/heldout-intel/records; O=bench/results/e2e/onnx; D=/tmp/s67
tag=$([ "$t" = 1 ] && echo "" || echo "${t}t")
for i in 1 2; do
  taskset -c $c $D/tlm --threads $t run $O/$m.onnx --schedules old=$H/$m.t$t.tlm32.jsonl.gz new=$D/$m.t$t.tlm32.jsonl --turns 6 --repeat 30 --csv $D/$m.ab$tag$i.csv > $D/$m.ab$tag$i.log 2>&1
done
for i in 1 2; do
  taskset -c $c bench/.venv/bin/python bench/lose/interleave.py --threads $t --blocks 20 --block 6 --variant old=$H/$m.t$t.tlm32.jsonl.gz --variant new=$D/$m.t$t.tlm32.jsonl --out $D/il$tag-$m $( [ $i = 2 ] && echo --reuse ) $O/$m.onnx > $D/$m.il$tag$i.log 2>&1
  cp $D/il$tag-$m/*.csv $D/$m.il$tag$i.csv
done
echo done > $D/$m.ab$tag.done
