#!/bin/bash
# MLAS's loop order for the blocked 3x3 convolutions, now also on AVX-512: the new experts of the
# blocked training workloads on Intel, 2 threads, then 1 thread in two lanes.
cd /work/main
O='tile \S+convnchwc\.r3 [0-9]+ -> [12] .*compute_at \S+convnchwc -> 2 '
W="resnet50:image=128@nchw16c resnet50:image=192@nchw16c resnet18:image=160@nchw16c resnet18:image=224@nchw16c mobilenet_v2:image=160@nchw16c mobilenet_v2:image=192@nchw16c mobilenet_v2:width=75,image=224@nchw16c mobilenet_v3_large:image=224@nchw16c googlenet:image=224@nchw16c"
ONLY="$O" WORKLOADS="$W" THREADS=2 CPUS=0-1 scripts/expert_records.sh runs/s42/er-mlas.2t.jsonl
A="resnet50:image=128@nchw16c resnet18:image=160@nchw16c mobilenet_v2:image=160@nchw16c mobilenet_v2:width=75,image=224@nchw16c googlenet:image=224@nchw16c"
B="resnet50:image=192@nchw16c resnet18:image=224@nchw16c mobilenet_v2:image=192@nchw16c mobilenet_v3_large:image=224@nchw16c"
ONLY="$O" WORKLOADS="$A" THREADS=1 CPUS=0 scripts/expert_records.sh runs/s42/er-mlas.1ta.jsonl > runs/s42/er2a.log 2>&1 &
ONLY="$O" WORKLOADS="$B" THREADS=1 CPUS=1 scripts/expert_records.sh runs/s42/er-mlas.1tb.jsonl > runs/s42/er2b.log 2>&1 &
wait
echo ER2_DONE
