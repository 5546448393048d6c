#!/bin/bash
# Step 2 (timed: run alone): measure what gen.sh wrote, T threads on CPUs 0..T-1: the greedy
# programs old and new side by side (9 samples; table: greedy.py OUTDIR T) and the zero-shot
# picks, new and old, once (5 samples) into OUTDIR/picks-tT[.old].MODEL.jsonl, the records
# bench/lose/modes.sh compiles (ho.sh).
#   bench/results/zero-shot/intel/s47/meas.sh OUTDIR   (T=2, MODELS=...)
set -e
cd "$(dirname "$0")/../../../../.."
out=${1:?OUTDIR}; T=${T:-2}
cpus=$( ((T == 1)) && echo 0 || echo "0-$((T - 1))")
for m in ${MODELS:-resnet50 mobilenet_v2 bert-base gpt2}; do
  onnx=bench/results/e2e/onnx/$m.onnx
  rm -f "$out/$m.greedy.t$T.jsonl"
  taskset -c $cpus build/tlm --threads $T measure "$out/$m.greedy.both.txt" --records "$out/$m.greedy.t$T.jsonl" \
    --workload $onnx --strategy greedy --repeats 9 --quiet
  for p in picks-t$T.$m picks-t$T.old.$m; do
    [ -d "$out/$p" ] || continue
    rm -f "$out/$p.jsonl"
    taskset -c $cpus build/tlm --threads $T measure "$out/$p/s.txt" --records "$out/$p.jsonl" \
      --workload $onnx --strategy tlm-1xg --repeats 5 --quiet
  done
  echo "$(date +%H:%M:%S) $m measured"
done
python3 "$(dirname "$0")/greedy.py" "$out" $T
