#!/bin/bash
# Step 3 (timed: run alone): the held-out models with no measurement, interleaved with ORT
# (bench/lose/modes.sh, two rounds): a = the shipped model's picks (OUTDIR/picks-tT.old.*, or
# session 46's s46/picks/ when gen.sh did not write them), b = the picks written with the new
# checkpoint (OUTDIR/picks-tT.*; gen.sh + meas.sh). Models whose picks are the same sentences
# are skipped (said so).
#   bench/results/zero-shot/intel/s47/ho.sh OUTDIR   (T=2, MODELS=...)
cd "$(dirname "$0")/../../../../.."
out=${1:?OUTDIR}; T=${T:-2}
p=bench/results/zero-shot/intel/s46/picks
for m in ${MODELS:-resnet50 mobilenet_v2 bert-base gpt2}; do
  a=$out/picks-t$T.old.$m.jsonl
  [ -f $a ] || a=$(ls $p/s46?-t$T.$m.jsonl | head -1)
  b=$out/picks-t$T.$m.jsonl
  n=$(python3 - "$a" "$b" <<'P'
import json, sys
s = [{json.loads(l)['task_key']: json.loads(l)['sentence'] for l in open(f)} for f in sys.argv[1:]]
print(sum(s[0].get(k) != v for k, v in s[1].items()))
P
)
  echo "$m t$T: $n of $(wc -l < $b) picks differ ($a)"
  [ "$n" = 0 ] && continue
  d=$out/mc-t$T-$m
  ROUNDS=2 THREADS=$T bench/lose/modes.sh $d bench/results/e2e/onnx/$m.onnx a=$a b=$b
  rm -rf $d/art
  echo "$(date +%H:%M:%S) t$T $m done"; grep "tlm / ORT" $d/modes.log
done
echo HO_DONE
