#!/bin/bash
# ab3.sh NAME MODEL THREADS SETS...: one tlm run per rotation of the set list, 8 turns of 5 runs
cd /work/main
name=$1 model=$2 th=$3; shift 3
sets=("$@"); n=${#sets[@]}
cpus=0; [ $th = 2 ] && cpus=0-1
for ((r = 0; r < n; r++)); do
  order=""; for ((i = 0; i < n; i++)); do order="$order${order:+,}${sets[$(((i + r) % n))]}"; done
  taskset -c $cpus build/tlm --threads $th run bench/results/e2e/onnx/$model.onnx --schedules $order \
    --no-verify --repeat 40 --turns 8 --csv runs/s40/$name.r$r.csv > runs/s40/$name.r$r.log 2>&1
  grep -E "^turns|^end-to-end" runs/s40/$name.r$r.log
done
