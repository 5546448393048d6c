#!/bin/bash
# The MLAS-order experts whose rows per tile changed (hrows from the width tile written): measure
# the ones not yet in the records, 2 threads then 1 thread in two lanes.
cd /work/main
O='tile \S+convnchwc\.r3 [0-9]+ -> [12] .*compute_at \S+convnchwc -> 2 '
W="resnet50:image=128@nchw16c resnet50:image=192@nchw16c resnet18:image=160@nchw16c resnet18:image=224@nchw16c googlenet:image=224@nchw16c"
ONLY="$O" WORKLOADS="$W" THREADS=2 CPUS=0-1 scripts/expert_records.sh runs/s42/er-mlas.2t.jsonl
ONLY="$O" WORKLOADS="resnet50:image=128@nchw16c resnet18:image=160@nchw16c googlenet:image=224@nchw16c" THREADS=1 CPUS=0 scripts/expert_records.sh runs/s42/er-mlas.1ta.jsonl > runs/s42/er4a.log 2>&1 &
ONLY="$O" WORKLOADS="resnet50:image=192@nchw16c resnet18:image=224@nchw16c" THREADS=1 CPUS=1 scripts/expert_records.sh runs/s42/er-mlas.1tb.jsonl > runs/s42/er4b.log 2>&1 &
wait
echo ER4_DONE
