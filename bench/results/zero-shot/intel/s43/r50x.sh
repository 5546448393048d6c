#!/bin/bash
# ResNet-50's losing tasks (held-out; evaluation only): every expert, then both sessions' picks, 2 threads.
cd /work/main
M=bench/results/e2e/onnx/resnet50.onnx
rm -f runs/s43/r50x.2t.jsonl
for t in 17 18 19 12 3; do
  taskset -c 0-1 ./build/tlm --threads 2 generate $M --task $t --expert -o /tmp/r50x.txt 2>/dev/null
  taskset -c 0-1 ./build/tlm --threads 2 measure /tmp/r50x.txt --records runs/s43/r50x.2t.jsonl --workload $M --strategy expert --quiet | tail -1
done
echo R50X_DONE
