#!/bin/bash
# The new B-streamed dense experts (pack w0 at S0, K chunk ~512) of the transformer training
# workloads on Intel: 2 threads, then 1 thread on two lanes.
cd /work/main
T="gpt2:seq=64 gpt2:seq=256 bert-base:seq=64 bert-base:seq=256 bert-large:seq=128 llama_layer:seq=128 gpt2:seq=32 bert-base:seq=32 gpt2:seq=128,hidden=704,heads=11,ff=2816 gpt2:seq=128,hidden=832,heads=13,ff=3328"
ONLY='pack \S+\.pack\.w0 -> 2 ' WORKLOADS="$T" THREADS=2 CPUS=0-1 scripts/expert_records.sh runs/s42/er-new.2t.jsonl
A="gpt2:seq=64 bert-base:seq=64 llama_layer:seq=128 bert-base:seq=32 gpt2:seq=128,hidden=832,heads=13,ff=3328"
B="gpt2:seq=256 bert-base:seq=256 bert-large:seq=128 gpt2:seq=32 gpt2:seq=128,hidden=704,heads=11,ff=2816"
ONLY='pack \S+\.pack\.w0 -> 2 ' WORKLOADS="$A" THREADS=1 CPUS=0 scripts/expert_records.sh runs/s42/er-new.1ta.jsonl > runs/s42/er1a.log 2>&1 &
ONLY='pack \S+\.pack\.w0 -> 2 ' WORKLOADS="$B" THREADS=1 CPUS=1 scripts/expert_records.sh runs/s42/er-new.1tb.jsonl > runs/s42/er1b.log 2>&1 &
wait
echo ER_DONE
