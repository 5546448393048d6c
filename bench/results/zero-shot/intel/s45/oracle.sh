#!/bin/bash
# Session 45: end to end at T threads (default 2), taking turns in one process: each held-out
# model with the best program per task by hot timing (a: ../s44/hocand.2t.jsonl.gz) and by
# model-cache timing (b: the same candidates, hocand_model.sh's records). Which timing's choice
# runs the model faster? Run from the repository root: oracle.sh MODEL_RECORDS OUT_DIR
cd /work/main
b=$1; out=$2; t=${THREADS:-2}
cpus=$( ((t == 1)) && echo 0 || echo "0-$((t - 1))")
mkdir -p $out
for m in ${MODELS:-resnet50 mobilenet_v2 bert-base gpt2}; do
  taskset -c $cpus ./build/tlm --threads $t run bench/results/e2e/onnx/$m.onnx --no-verify \
    --repeat ${REPEAT:-30} --schedules a=bench/results/zero-shot/intel/s44/hocand.2t.jsonl.gz,b=$b \
    > $out/$m.t$t.txt 2>&1
  grep "^end-to-end" $out/$m.t$t.txt
done
