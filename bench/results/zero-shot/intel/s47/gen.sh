#!/bin/bash
# Step 1 (no timing: may run beside other work): for each held-out model, with the checkpoint NEW
# and the shipped one (old), (a) the language model's greedy program of every task (tlm generate
# --beam 1), (b) the zero-shot picks (tlm compile --tlm --no-build, the shipped ranker choosing),
# written for T threads: OUTDIR/picks-tT.MODEL (new) and OUTDIR/picks-tT.old.MODEL. Step 2 is
# meas.sh. (Sessions 47-48; session 47 compared against session 46's picks instead of old ones.)
#   bench/results/zero-shot/intel/s47/gen.sh NEW.ckpt OUTDIR   (T=2, MODELS=...)
# RANKER=FILE: the new picks chosen by that ranker (default the shipped models/ranker.json);
# WHICH=new: write only the new checkpoint's programs (the old ones already in OUTDIR).
set -e
cd "$(dirname "$0")/../../../../.."
new=${1:?NEW.ckpt}; out=${2:?OUTDIR}; T=${T:-2}
mkdir -p "$out"
for m in ${MODELS:-resnet50 mobilenet_v2 bert-base gpt2}; do
  onnx=bench/results/e2e/onnx/$m.onnx
  for c in ${WHICH:-old new}; do
    ck=models/tlm.ckpt; d=$out/picks-t$T.old.$m; ranker=models/ranker.json
    [ $c = new ] && ck=$new && d=$out/picks-t$T.$m && ranker=${RANKER:-models/ranker.json}
    build/tlm --threads $T generate $onnx --task all --beam 1 -n 1 --model $ck \
      -o "$out/$m.greedy.$c.txt" 2> "$out/$m.greedy.$c.log"
    rm -rf $d; mkdir -p $d
    /usr/bin/time -f "%e s" -o $d/compile.time build/tlm --threads $T compile $onnx --tlm --model $ck --ranker $ranker \
      -o $d --no-build > $d/compile.log 2>&1
    sed -E 's/^task [0-9]+ [a-z0-9_]+: //' $d/schedules.txt > $d/s.txt
  done
  paste -d '\n' "$out/$m.greedy.old.txt" "$out/$m.greedy.new.txt" > "$out/$m.greedy.both.txt"
  echo "$(date +%H:%M:%S) $m generated"
done
