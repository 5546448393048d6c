#!/bin/bash
# Provenance (session 43): run from the repository root; it wrote runs/s43/*, committed here as
# ../../expert-train-intel-s43.jsonl.gz (screen + er, concatenated) and remeasure.jsonl.gz.
# Screening the session-43 blocked-conv experts (lane chunks, taps outside) against the other
# experts of the same tasks, one sitting: 2 threads, then 1 thread in two lanes.
cd /work/main
C='w0 [0-9]+ [0-9]+ [0-9]+ [0-9]+ 16 16 w1 .*ConvNchwc .* group 1 '
ONLY="$C" WORKLOADS="resnet50:image=192@nchw16c resnet18:image=224@nchw16c" THREADS=2 CPUS=0-1 scripts/expert_records.sh runs/s43/sc.2t.jsonl
ONLY="$C" WORKLOADS="resnet50:image=192@nchw16c" THREADS=1 CPUS=0 scripts/expert_records.sh runs/s43/sc.1ta.jsonl > runs/s43/sc1a.log 2>&1 &
ONLY="$C" WORKLOADS="resnet18:image=224@nchw16c" THREADS=1 CPUS=1 scripts/expert_records.sh runs/s43/sc.1tb.jsonl > runs/s43/sc1b.log 2>&1 &
wait
echo SCREEN_DONE
