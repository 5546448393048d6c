#!/bin/bash
# zs.sh NAME RANKER MODEL...: TLM-1xg programs of each training model with that ranker, measured once into runs/rk/zs/NAME.<model>.jsonl
cd /work/main
n=$1; r=$2; shift 2
mkdir -p runs/rk/zs
for m in "$@"; do
  tag=$(echo "$m" | tr ':=,@' '____')
  d=runs/rk/zs/$n.$tag
  rm -rf $d; mkdir -p $d
  taskset -c 0-1 build/tlm --threads 2 compile "$m" --tlm --ranker "$r" -o $d --no-build > $d/compile.log 2>&1 || { echo "compile failed $m"; continue; }
  sed -E 's/^task [0-9]+ [a-z0-9_]+: //' $d/schedules.txt > $d/s.txt
  rm -f runs/rk/zs/$n.$tag.jsonl
  taskset -c 0-1 build/tlm --threads 2 measure $d/s.txt --records runs/rk/zs/$n.$tag.jsonl --workload "$m" --strategy tlm-1xg --repeats 5 > $d/measure.log 2>&1 || echo "measure failed $m"
done
