#!/bin/bash
cd /work/main
W="resnet50:image=128@nchw16c resnet50:image=192@nchw16c resnet18:image=160@nchw16c resnet18:image=224@nchw16c mobilenet_v2:image=160@nchw16c mobilenet_v2:image=192@nchw16c mobilenet_v2:width=75,image=224@nchw16c mobilenet_v3_large:image=224@nchw16c googlenet:image=224@nchw16c gpt2:seq=64 gpt2:seq=256 bert-base:seq=64 bert-base:seq=256 bert-large:seq=128 llama_layer:seq=128 gpt2:seq=32 bert-base:seq=32 gpt2:seq=128,hidden=704,heads=11,ff=2816 gpt2:seq=128,hidden=832,heads=13,ff=3328"
WORKLOADS="$W" GREEDY=1 THREADS=2 CPUS=0-1 scripts/expert_records.sh runs/expert-train-intel.jsonl
echo ER_DONE
