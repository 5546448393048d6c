#!/bin/bash
# The same 64-trial search: ResNet-50's other 3x3 layers at two threads, and the four losing layers
# at one thread (what forms the search finds beyond the experts).
cd /work/main
taskset -c 0-1 ./build/tlm --threads 2 tune bench/results/e2e/onnx/resnet50.onnx --tasks 3 8 14 21 26 --strategy expert-evolutionary --trials-per-task 64 --remeasure 4 --records bench/results/lose-intel-s42/r50-evo64b.2t.jsonl --no-e2e --quiet
taskset -c 0 ./build/tlm --threads 1 tune bench/results/e2e/onnx/resnet50.onnx --tasks 17 18 19 12 --strategy expert-evolutionary --trials-per-task 64 --remeasure 4 --records bench/results/lose-intel-s42/r50-evo64.1t.jsonl --no-e2e --quiet
echo EVO2_DONE
