#!/bin/bash
cd /work/main
taskset -c 0-1 ./build/tlm --threads 2 tune bench/results/e2e/onnx/resnet50.onnx --tasks 17 18 19 12 --strategy expert-evolutionary --trials-per-task 64 --remeasure 4 --records runs/s42/r50-evo64.2t.jsonl --no-e2e --quiet
echo EVO_DONE
