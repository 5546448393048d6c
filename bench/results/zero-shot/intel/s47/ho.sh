#!/bin/bash
# Session 47, step 3 (timed: run alone): the held-out models with no measurement, interleaved
# with ORT (bench/lose/modes.sh, two rounds): a = session 46's shipped picks (s46/picks/), b = the
# picks written with the checkpoint fine-tuned again with the Intel records (OUTDIR/picks-tT.*,
# gen.sh + meas.sh). Models whose picks are the same sentences are skipped (said so).
#   bench/results/zero-shot/intel/s47/ho.sh OUTDIR   (T=2, MODELS=...)
cd "$(dirname "$0")/../../../../.."
out=${1:?OUTDIR}; T=${T:-2}
p=bench/results/zero-shot/intel/s46/picks
for m in ${MODELS:-resnet50 mobilenet_v2 bert-base gpt2}; do
  a=$(ls $p/s46?-t$T.$m.jsonl | head -1)
  b=$out/picks-t$T.$m.jsonl
  n=$(python3 - "$a" "$b" <<'P'
import json, sys
s = [{json.loads(l)['task_key']: json.loads(l)['sentence'] for l in open(f)} for f in sys.argv[1:]]
print(sum(s[0].get(k) != v for k, v in s[1].items()))
P
)
  echo "$m t$T: $n of $(wc -l < $b) picks differ from session 46's"
  [ "$n" = 0 ] && continue
  d=runs/s47/mc-t$T-$m
  ROUNDS=2 THREADS=$T bench/lose/modes.sh $d bench/results/e2e/onnx/$m.onnx a=$a b=$b
  rm -rf $d/art
  echo "$(date +%H:%M:%S) t$T $m done"; grep "tlm / ORT" $d/modes.log
done
echo HO_DONE
