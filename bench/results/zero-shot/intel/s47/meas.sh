#!/bin/bash
# Session 47, step 2 (timed: run alone): measure what gen.sh wrote, T threads on CPUs 0..T-1:
# the greedy programs old and new side by side (9 samples; table: greedy.py OUTDIR T) and the
# zero-shot picks once (5 samples) into OUTDIR/picks-tT.MODEL.jsonl, the records
# bench/lose/modes.sh compiles (ho.sh).
#   bench/results/zero-shot/intel/s47/meas.sh OUTDIR   (T=2, MODELS=...)
set -e
cd "$(dirname "$0")/../../../../.."
out=${1:?OUTDIR}; T=${T:-2}
cpus=$( ((T == 1)) && echo 0 || echo "0-$((T - 1))")
for m in ${MODELS:-resnet50 mobilenet_v2 bert-base gpt2}; do
  onnx=bench/results/e2e/onnx/$m.onnx
  rm -f "$out/$m.greedy.t$T.jsonl" "$out/picks-t$T.$m.jsonl"
  taskset -c $cpus build/tlm --threads $T measure "$out/$m.greedy.both.txt" --records "$out/$m.greedy.t$T.jsonl" \
    --workload $onnx --strategy greedy --repeats 9 --quiet
  taskset -c $cpus build/tlm --threads $T measure "$out/picks-t$T.$m/s.txt" --records "$out/picks-t$T.$m.jsonl" \
    --workload $onnx --strategy tlm-1xg --repeats 5 --quiet
  echo "$(date +%H:%M:%S) $m measured"
done
python3 "$(dirname "$0")/greedy.py" "$out" $T
