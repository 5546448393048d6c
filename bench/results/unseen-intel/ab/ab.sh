#!/bin/bash
cd /work/main
for m in squeezenet1_1 efficientnet_b0 inception_v3 convnext_tiny; do
  taskset -c 0 bench/.venv/bin/python bench/lose/interleave.py --threads 1 --blocks 15 \
    --variant "a=tlm@TLM_BIN=/tmp/tlm71b" --variant "b=tlm@TLM_BIN=/tmp/tlm71c" \
    --variant "c=tlm@TLM_BIN=/tmp/tlm71d" --variant "d=tlm@TLM_BIN=/tmp/tlm71d;TLM_EXP_NO_CONCAT_COPY=1" \
    --art-dir /tmp/abu-art/$m --out /tmp/abu/$m bench/results/unseen-intel/onnx/$m.onnx > /tmp/abu/$m.log 2>&1
done
