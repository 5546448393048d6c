#!/bin/bash
# Provenance (session 45): every expert (and the model's greedy program) of every dense
# channel-blocked convolution with kernel taps (3x3, 7x7, ...) of the blocked training
# workloads, now with each tap-split lane-chunk expert's one-more-loop-parallel twin, measured in
# one sitting on Intel at 2 threads (the twins differ from their experts at two threads only).
# Run from the repository root; writes runs/s45/er.2t.jsonl.
cd /work/main
K='w0 [0-9]+ [0-9]+ ([2-9]|[0-9]{2,}) [0-9]+ 16 16 w1 .*ConvNchwc .* group 1 |w0 [0-9]+ [0-9]+ [0-9]+ ([2-9]|[0-9]{2,}) 16 16 w1 .*ConvNchwc .* group 1 '
W="resnet50:image=192@nchw16c resnet18:image=224@nchw16c resnet50:image=128@nchw16c resnet18:image=160@nchw16c googlenet:image=224@nchw16c mobilenet_v2:image=160@nchw16c mobilenet_v2:image=192@nchw16c mobilenet_v2:width=75,image=224@nchw16c mobilenet_v3_large:image=224@nchw16c"
GREEDY=1 ONLY="$K" WORKLOADS="$W" THREADS=2 CPUS=0-1 scripts/expert_records.sh runs/s45/er.2t.jsonl
echo ER_DONE
