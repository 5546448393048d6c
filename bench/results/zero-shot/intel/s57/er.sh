#!/bin/bash
# Provenance (session 57): every expert (and the shipped model's greedy program) of every dense
# channel-blocked convolution with kernel taps (3x3, 7x7, ...) of the blocked training workloads,
# now with session 56's root-copied padded input forms (commit 7d5fbe3), measured in one sitting
# on Intel model 167: at one thread in two lanes (CPU 0 and CPU 1, each its own workloads), then
# at two threads. The bare forms measured beside them bridge this sitting to sessions 42-45's
# (the ranker scales sittings by the programs measured in both). Run from the repository root
# with TLM_BIN (default ./build/tlm); writes runs/s57/er.{1t.a,1t.b,2t}.jsonl (concatenated:
# er.jsonl.gz here, 5,432 records). The candidate ranker trained with them (not shipped; ab.sh):
#   EXTRA_RECORDS=bench/results/zero-shot/intel/s57/er.jsonl.gz scripts/train_ranker.sh runs/s57/ranker.json
cd "$(dirname "$0")/../../../../.."
tlm=${TLM_BIN:-./build/tlm}
mkdir -p runs/s57
K='w0 [0-9]+ [0-9]+ ([2-9]|[0-9]{2,}) [0-9]+ 16 16 w1 .*ConvNchwc .* group 1 |w0 [0-9]+ [0-9]+ [0-9]+ ([2-9]|[0-9]{2,}) 16 16 w1 .*ConvNchwc .* group 1 '
A="googlenet:image=224@nchw16c resnet50:image=128@nchw16c"
B="resnet18:image=224@nchw16c resnet18:image=160@nchw16c resnet50:image=192@nchw16c"
if [ "${STEP:-1t}" = 1t ]; then
  GREEDY=1 ONLY="$K" WORKLOADS="$A" THREADS=1 CPUS=0 scripts/expert_records.sh runs/s57/er.1t.a.jsonl "$tlm" &
  GREEDY=1 ONLY="$K" WORKLOADS="$B" THREADS=1 CPUS=1 scripts/expert_records.sh runs/s57/er.1t.b.jsonl "$tlm" &
  wait
  echo ER1_DONE
fi
GREEDY=1 ONLY="$K" WORKLOADS="$A $B" THREADS=2 CPUS=0-1 scripts/expert_records.sh runs/s57/er.2t.jsonl "$tlm"
echo ER2_DONE
