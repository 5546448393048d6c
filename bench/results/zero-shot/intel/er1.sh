#!/bin/bash
# one-thread expert records on Intel: two lanes, CPU 0 and CPU 1
cd /work/main
A="resnet50:image=128@nchw16c resnet18:image=160@nchw16c mobilenet_v2:image=160@nchw16c mobilenet_v2:width=75,image=224@nchw16c googlenet:image=224@nchw16c gpt2:seq=64 bert-base:seq=64 llama_layer:seq=128 bert-base:seq=32 gpt2:seq=128,hidden=832,heads=13,ff=3328"
B="resnet50:image=192@nchw16c resnet18:image=224@nchw16c mobilenet_v2:image=192@nchw16c mobilenet_v3_large:image=224@nchw16c gpt2:seq=256 bert-base:seq=256 bert-large:seq=128 gpt2:seq=32 gpt2:seq=128,hidden=704,heads=11,ff=2816"
WORKLOADS="$A" GREEDY=1 THREADS=1 CPUS=0 scripts/expert_records.sh runs/expert-train-intel.t1a.jsonl > runs/er1a.log 2>&1 &
WORKLOADS="$B" GREEDY=1 THREADS=1 CPUS=1 scripts/expert_records.sh runs/expert-train-intel.t1b.jsonl > runs/er1b.log 2>&1 &
wait
echo ER1_DONE
