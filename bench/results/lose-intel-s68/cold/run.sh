#!/bin/bash
# hot and model-cache timing of each task's candidates, core 0
for t in "$@"; do
  d=/tmp/s68/cold/t$t
  taskset -c 0 /work/main/build/tlm --threads 1 measure $d/cands.txt --records $d/hot.jsonl --repeats 9 --quiet
  taskset -c 0 /work/main/build/tlm --threads 1 measure $d/cands.txt --records $d/cold.jsonl --repeats 9 --quiet --model-cache
done
