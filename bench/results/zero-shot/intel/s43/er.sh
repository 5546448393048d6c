#!/bin/bash
# Provenance (session 43): run from the repository root; it wrote runs/s43/*, committed here as
# ../../expert-train-intel-s43.jsonl.gz (screen + er, concatenated) and remeasure.jsonl.gz.
# Session 43: every expert (and the model's greedy program) of every dense channel-blocked
# convolution of the blocked training workloads, measured in one sitting on Intel, now with the
# lane-chunk / taps-outside experts: 2 threads, then 1 thread in two lanes. The screening's
# records (R50 @192, R18 @224) seed the files, so their sentences are skipped.
cd /work/main
C='w0 [0-9]+ [0-9]+ [0-9]+ [0-9]+ 16 16 w1 .*ConvNchwc .* group 1 '
W="resnet50:image=192@nchw16c resnet18:image=224@nchw16c resnet50:image=128@nchw16c resnet18:image=160@nchw16c googlenet:image=224@nchw16c mobilenet_v2:image=160@nchw16c mobilenet_v2:image=192@nchw16c mobilenet_v2:width=75,image=224@nchw16c mobilenet_v3_large:image=224@nchw16c"
GREEDY=1 ONLY="$C" WORKLOADS="$W" THREADS=2 CPUS=0-1 scripts/expert_records.sh runs/s43/er.2t.jsonl
A="resnet50:image=192@nchw16c resnet18:image=160@nchw16c googlenet:image=224@nchw16c mobilenet_v2:image=192@nchw16c"
B="resnet18:image=224@nchw16c resnet50:image=128@nchw16c mobilenet_v2:image=160@nchw16c mobilenet_v2:width=75,image=224@nchw16c mobilenet_v3_large:image=224@nchw16c"
GREEDY=1 ONLY="$C" WORKLOADS="$A" THREADS=1 CPUS=0 scripts/expert_records.sh runs/s43/er.1ta.jsonl > runs/s43/er1a.log 2>&1 &
GREEDY=1 ONLY="$C" WORKLOADS="$B" THREADS=1 CPUS=1 scripts/expert_records.sh runs/s43/er.1tb.jsonl > runs/s43/er1b.log 2>&1 &
wait
echo ER_DONE
