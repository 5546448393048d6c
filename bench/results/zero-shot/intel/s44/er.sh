#!/bin/bash
# Provenance (session 44): run from the repository root; it wrote runs/s44/*, committed as
# records.jsonl.gz here (not an expert-train* archive: the shipped ranker is not trained on it, BENCHMARKS.md session 44). Every expert (and the model's greedy program) of every
# dense channel-blocked convolution with kernel taps (3x3, 7x7, ...) of the blocked training
# workloads, now with the tap-split lane-chunk experts, measured in one sitting on Intel:
# 2 threads, then 1 thread in two lanes.
cd /work/main
K='w0 [0-9]+ [0-9]+ ([2-9]|[0-9]{2,}) [0-9]+ 16 16 w1 .*ConvNchwc .* group 1 |w0 [0-9]+ [0-9]+ [0-9]+ ([2-9]|[0-9]{2,}) 16 16 w1 .*ConvNchwc .* group 1 '
W="resnet50:image=192@nchw16c resnet18:image=224@nchw16c resnet50:image=128@nchw16c resnet18:image=160@nchw16c googlenet:image=224@nchw16c mobilenet_v2:image=160@nchw16c mobilenet_v2:image=192@nchw16c mobilenet_v2:width=75,image=224@nchw16c mobilenet_v3_large:image=224@nchw16c"
GREEDY=1 ONLY="$K" WORKLOADS="$W" THREADS=2 CPUS=0-1 scripts/expert_records.sh runs/s44/er.2t.jsonl
A="resnet50:image=192@nchw16c resnet18:image=160@nchw16c googlenet:image=224@nchw16c mobilenet_v2:image=192@nchw16c"
B="resnet18:image=224@nchw16c resnet50:image=128@nchw16c mobilenet_v2:image=160@nchw16c mobilenet_v2:width=75,image=224@nchw16c mobilenet_v3_large:image=224@nchw16c"
GREEDY=1 ONLY="$K" WORKLOADS="$A" THREADS=1 CPUS=0 scripts/expert_records.sh runs/s44/er.1ta.jsonl > runs/s44/er1a.log 2>&1 &
GREEDY=1 ONLY="$K" WORKLOADS="$B" THREADS=1 CPUS=1 scripts/expert_records.sh runs/s44/er.1tb.jsonl > runs/s44/er1b.log 2>&1 &
wait
echo ER_DONE
