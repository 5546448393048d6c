#!/bin/bash
# Measures gen.sh's greedy programs (T threads, pinned), appending to greedy-tT.jsonl.
cd /work/main
T=${T:-2}
cpus=$( ((T == 1)) && echo 0 || echo "0-$((T - 1))")
for w in $(zcat bench/results/zero-shot/expert-train-intel*.jsonl.gz | python3 -c "
import sys,json
s=set()
for l in sys.stdin: s.add(json.loads(l)['workload'])
print(' '.join(sorted(s)))"); do
  f=runs/s48/greedy/t$T.$(echo $w | tr ':=,@' '____').txt
  taskset -c $cpus build/tlm --threads $T measure $f --records runs/s48/greedy/greedy-t$T.jsonl \
    --workload "$w" --strategy tlm-greedy --quiet | tail -1
done
