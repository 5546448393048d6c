#!/bin/bash
# Provenance (session 46): every expert (and the model's greedy program) of every dense
# channel-blocked 1x1 convolution of the blocked training workloads, now with MLAS's pointwise
# loop order (src/space/expert.cc), measured in one sitting on Intel: at 2 threads, then at one
# thread in two lanes (CPU 0 and CPU 1, the workloads split between them).
# Run from the repository root: er.sh 2 | er.sh 1; writes runs/s46/er.{2t,1t.a,1t.b}.jsonl.
set -e
K='w0 [0-9]+ [0-9]+ 1 1 16 16 w1 .*ConvNchwc .* group 1 '
W1="resnet50:image=192@nchw16c resnet18:image=224@nchw16c mobilenet_v2:image=160@nchw16c mobilenet_v2:width=75,image=224@nchw16c resnet18:image=160@nchw16c"
W2="googlenet:image=224@nchw16c resnet50:image=128@nchw16c mobilenet_v2:image=192@nchw16c mobilenet_v3_large:image=224@nchw16c"
if [ "$1" = 2 ]; then
  GREEDY=1 ONLY="$K" WORKLOADS="$W1 $W2" THREADS=2 CPUS=0-1 scripts/expert_records.sh runs/s46/er.2t.jsonl
else
  GREEDY=1 ONLY="$K" WORKLOADS="$W1" THREADS=1 CPUS=0 scripts/expert_records.sh runs/s46/er.1t.a.jsonl &
  GREEDY=1 ONLY="$K" WORKLOADS="$W2" THREADS=1 CPUS=1 scripts/expert_records.sh runs/s46/er.1t.b.jsonl
  wait
fi
echo ER_DONE
