#!/bin/bash
# The candidate's greedy program of every task of the Intel training workloads, T threads.
cd /work/main
ck=bench/results/zero-shot/intel/s47/tlm-ft47.ckpt
T=${T:-2}
for w in $(zcat bench/results/zero-shot/expert-train-intel*.jsonl.gz | python3 -c "
import sys,json
s=set()
for l in sys.stdin: s.add(json.loads(l)['workload'])
print(' '.join(sorted(s)))"); do
  f=runs/s48/greedy/t$T.$(echo $w | tr ':=,@' '____').txt
  [ -s $f ] && continue
  build/tlm --threads $T generate "$w" --layout nchw --task all --beam 1 -n 1 --model $ck -o $f.tmp 2>/dev/null && mv $f.tmp $f
  echo "$(date +%H:%M:%S) $w $(wc -l < $f)"
done
