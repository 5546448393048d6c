#!/bin/bash
# Provenance (session 69): every expert program (and the shipped model's greedy program) of every
# task of the blocked training CNNs, with the experts of sessions 57-68 (the strided-shortcut
# rewrite, MLAS's orders, the copy twins), measured in one sitting on Intel model 167 at one thread
# in three lanes (CPU 0 and CPU 1, each its own workloads). The forms measured in sessions 42-57
# bridge this sitting to theirs (the ranker scales sittings by the programs measured in both).
# Run from the repository root with TLM_BIN (default ./build/tlm); writes runs/s69/er.1t.{a,b,c}.jsonl
# (concatenated: er.jsonl.gz here). The candidate ranker trained with them (ab.sh):
#   EXTRA_RECORDS="bench/results/zero-shot/intel/s57/er.jsonl.gz bench/results/zero-shot/intel/s69/er.jsonl.gz" \
#     scripts/train_ranker.sh runs/s69/ranker.json
cd "$(dirname "$0")/../../../../.."
tlm=${TLM_BIN:-./build/tlm}
mkdir -p runs/s69
A="resnet50:image=192@nchw16c resnet18:image=224@nchw16c"
B="resnet50:image=128@nchw16c resnet18:image=160@nchw16c googlenet:image=224@nchw16c"
C="mobilenet_v2:image=160@nchw16c mobilenet_v3_large:image=224@nchw16c"
GREEDY=1 WORKLOADS="$A" THREADS=1 CPUS=0 scripts/expert_records.sh runs/s69/er.1t.a.jsonl "$tlm"
GREEDY=1 WORKLOADS="$C" THREADS=1 CPUS=0 scripts/expert_records.sh runs/s69/er.1t.c.jsonl "$tlm" &
GREEDY=1 WORKLOADS="$B" THREADS=1 CPUS=1 scripts/expert_records.sh runs/s69/er.1t.b.jsonl "$tlm"
wait
echo ER1_DONE
# Then at two threads (the ResNets; GoogLeNet and the MobileNets left out for time):
GREEDY=1 WORKLOADS="resnet50:image=192@nchw16c resnet18:image=224@nchw16c resnet50:image=128@nchw16c resnet18:image=160@nchw16c" \
  THREADS=2 CPUS=0-1 scripts/expert_records.sh runs/s69/er.2t.jsonl "$tlm"
echo ER2_DONE
