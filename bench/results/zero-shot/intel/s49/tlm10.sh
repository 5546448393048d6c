#!/bin/bash
# Session 49: does the candidate language model's better greedy program pay in measured tuning?
# TLM-10xg (`tlm tune --strategy tlm --trials-per-task 10`, bench/heldout/run.sh's tune step, the
# shipped ranker ordering the zero-shot candidates that come first) with the shipped checkpoint
# (old) and the candidate (new), at T threads, then both deployed sets end to end interleaved
# with ONNX Runtime (bench/lose/modes.sh, two rounds). Run alone, from anywhere:
#   bench/results/zero-shot/intel/s49/tlm10.sh OUTDIR [NEW.ckpt]   (T=2, MODELS=...)
set -e
cd "$(dirname "$0")/../../../../.."
out=$(realpath -m "${1:?OUTDIR}"); new=${2:-bench/results/zero-shot/intel/s47/tlm-ft47.ckpt}; T=${T:-2}
models=${MODELS:-resnet50 mobilenet_v2 bert-base gpt2}
for c in old new; do
  ck=models/tlm.ckpt; [ $c = new ] && ck=$new
  MODELS="$models" JOBS="tlm:10" TLM_MODEL=$ck RESULTS=$out/$c bench/heldout/run.sh tune $T
done
for m in $models; do
  ROUNDS=2 THREADS=$T bench/lose/modes.sh $out/mc-t$T-$m bench/results/e2e/onnx/$m.onnx \
    a=$out/old/records/$m.t$T.tlm10.jsonl b=$out/new/records/$m.t$T.tlm10.jsonl
  rm -rf $out/mc-t$T-$m/art
  echo "$(date +%H:%M:%S) t$T $m done"; grep "tlm / ORT" $out/mc-t$T-$m/modes.log
done
echo TLM10_DONE
