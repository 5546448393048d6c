#!/bin/bash
# Every expert of GPT-2's dense tasks (incl. the new B-streamed form) at 2 threads, re-measured.
cd /work/main
taskset -c 0-1 ./build/tlm --threads 2 tune bench/results/e2e/onnx/gpt2.onnx --tasks 12 2 7 9 11 --strategy expert-evolutionary --trials-per-task 20 --remeasure 6 --records runs/s42/gpt2-dense-experts.2t.jsonl --no-e2e --quiet
