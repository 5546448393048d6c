#!/bin/bash
# Provenance (session 44, after dw.sh): the same measurement with the depthwise experts whose
# outermost loop alone is parallel (each core its own channel blocks): every depthwise expert and
# greedy program of the blocked training workloads again, in one sitting on Intel, appended to
# records.jsonl.gz here (not an expert-train* archive: the shipped ranker is not trained on it, BENCHMARKS.md session 44).
cd /work/main
D='ConvNchwc .* group ([2-9]|[0-9]{2,}) '
W="mobilenet_v2:image=160@nchw16c mobilenet_v2:image=192@nchw16c mobilenet_v2:width=75,image=224@nchw16c mobilenet_v3_large:image=224@nchw16c"
GREEDY=1 ONLY="$D" WORKLOADS="$W" THREADS=2 CPUS=0-1 scripts/expert_records.sh runs/s44/dw2.2t.jsonl
GREEDY=1 ONLY="$D" WORKLOADS="mobilenet_v2:image=160@nchw16c mobilenet_v3_large:image=224@nchw16c" THREADS=1 CPUS=0 scripts/expert_records.sh runs/s44/dw2.1ta.jsonl > runs/s44/dw21a.log 2>&1 &
GREEDY=1 ONLY="$D" WORKLOADS="mobilenet_v2:image=192@nchw16c mobilenet_v2:width=75,image=224@nchw16c" THREADS=1 CPUS=1 scripts/expert_records.sh runs/s44/dw2.1tb.jsonl > runs/s44/dw21b.log 2>&1 &
wait
echo DW2_DONE
