#!/bin/bash
# Session 47, step 1 (no timing: may run beside other work): for each held-out model, with the
# checkpoint NEW (and for the greedy table the shipped one too), (a) the language model's greedy
# program of every task (tlm generate --beam 1), (b) the zero-shot picks (tlm compile --tlm
# --no-build, the shipped ranker choosing), written for T threads. Step 2 is meas.sh.
#   bench/results/zero-shot/intel/s47/gen.sh NEW.ckpt OUTDIR   (T=2, MODELS=...)
set -e
cd "$(dirname "$0")/../../../../.."
new=${1:?NEW.ckpt}; out=${2:?OUTDIR}; T=${T:-2}
mkdir -p "$out"
for m in ${MODELS:-resnet50 mobilenet_v2 bert-base gpt2}; do
  onnx=bench/results/e2e/onnx/$m.onnx
  for c in old new; do
    ck=models/tlm.ckpt; [ $c = new ] && ck=$new
    build/tlm --threads $T generate $onnx --task all --beam 1 -n 1 --model $ck \
      -o "$out/$m.greedy.$c.txt" 2> "$out/$m.greedy.$c.log"
  done
  paste -d '\n' "$out/$m.greedy.old.txt" "$out/$m.greedy.new.txt" > "$out/$m.greedy.both.txt"
  d=$out/picks-t$T.$m
  rm -rf $d; mkdir -p $d
  /usr/bin/time -f "%e s" -o $d/compile.time build/tlm --threads $T compile $onnx --tlm --model $new \
    -o $d --no-build > $d/compile.log 2>&1
  sed -E 's/^task [0-9]+ [a-z0-9_]+: //' $d/schedules.txt > $d/s.txt
  echo "$(date +%H:%M:%S) $m generated"
done
