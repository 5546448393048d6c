#!/bin/bash
# Same-sitting re-measurement: every expert (and the model's greedy program) of the tasks whose
# experts changed this session -- the blocked dense convolutions with taps and the transformer
# dense layers -- into the files that hold the new ones (sentences already there are skipped),
# so the ranker compares old and new forms measured in one sitting.
cd /work/main
C='w0 [0-9]+ [0-9]+ (3 3|5 5|7 7) 16 16 w1 .*ConvNchwc .* group 1 '
D=' (MatMul in[0-9] w0|Gemm) '
WC="resnet50:image=128@nchw16c resnet50:image=192@nchw16c resnet18:image=160@nchw16c resnet18:image=224@nchw16c googlenet:image=224@nchw16c"
WD="gpt2:seq=64 gpt2:seq=256 bert-base:seq=64 bert-base:seq=256 bert-large:seq=128 llama_layer:seq=128 gpt2:seq=32 bert-base:seq=32 gpt2:seq=128,hidden=704,heads=11,ff=2816 gpt2:seq=128,hidden=832,heads=13,ff=3328"
GREEDY=1 ONLY="$C" WORKLOADS="$WC" THREADS=2 CPUS=0-1 scripts/expert_records.sh runs/s42/er-mlas.2t.jsonl
GREEDY=1 ONLY="$D" WORKLOADS="$WD" THREADS=2 CPUS=0-1 scripts/expert_records.sh runs/s42/er-new.2t.jsonl
(GREEDY=1 ONLY="$C" WORKLOADS="resnet50:image=128@nchw16c resnet18:image=160@nchw16c googlenet:image=224@nchw16c" THREADS=1 CPUS=0 scripts/expert_records.sh runs/s42/er-mlas.1ta.jsonl
 GREEDY=1 ONLY="$D" WORKLOADS="gpt2:seq=64 bert-base:seq=64 llama_layer:seq=128 bert-base:seq=32 gpt2:seq=128,hidden=832,heads=13,ff=3328" THREADS=1 CPUS=0 scripts/expert_records.sh runs/s42/er-new.1ta.jsonl) > runs/s42/er3a.log 2>&1 &
(GREEDY=1 ONLY="$C" WORKLOADS="resnet50:image=192@nchw16c resnet18:image=224@nchw16c" THREADS=1 CPUS=1 scripts/expert_records.sh runs/s42/er-mlas.1tb.jsonl
 GREEDY=1 ONLY="$D" WORKLOADS="gpt2:seq=256 bert-base:seq=256 bert-large:seq=128 gpt2:seq=32 gpt2:seq=128,hidden=704,heads=11,ff=2816" THREADS=1 CPUS=1 scripts/expert_records.sh runs/s42/er-new.1tb.jsonl) > runs/s42/er3b.log 2>&1 &
wait
echo ER3_DONE
