#!/bin/bash
# Provenance (session 44): every expert (and the model's greedy program) of every depthwise
# channel-blocked convolution of the blocked training workloads, measured in one sitting on
# Intel (2 threads, then 1 thread in two lanes), into runs/s44/NAME.*; all of it is in
# records.jsonl.gz here (not an expert-train* archive: the shipped ranker is not trained on it,
# BENCHMARKS.md session 44). Run twice: `dw.sh dw` before the depthwise experts with the
# outermost loop alone parallel (session 41's were the only Intel depthwise records, one sitting,
# once each, and the ranker retrained without new ones flipped two of MobileNet-V2's depthwise
# picks to 1.2-1.8x slower), `dw.sh dw2` after them (every depthwise program again, one sitting).
cd /work/main
n=${1:-dw}
D='ConvNchwc .* group ([2-9]|[0-9]{2,}) '
W="mobilenet_v2:image=160@nchw16c mobilenet_v2:image=192@nchw16c mobilenet_v2:width=75,image=224@nchw16c mobilenet_v3_large:image=224@nchw16c"
GREEDY=1 ONLY="$D" WORKLOADS="$W" THREADS=2 CPUS=0-1 scripts/expert_records.sh runs/s44/$n.2t.jsonl
GREEDY=1 ONLY="$D" WORKLOADS="mobilenet_v2:image=160@nchw16c mobilenet_v3_large:image=224@nchw16c" THREADS=1 CPUS=0 scripts/expert_records.sh runs/s44/$n.1ta.jsonl > runs/s44/${n}1a.log 2>&1 &
GREEDY=1 ONLY="$D" WORKLOADS="mobilenet_v2:image=192@nchw16c mobilenet_v2:width=75,image=224@nchw16c" THREADS=1 CPUS=1 scripts/expert_records.sh runs/s44/$n.1tb.jsonl > runs/s44/${n}1b.log 2>&1 &
wait
echo "$n done"
