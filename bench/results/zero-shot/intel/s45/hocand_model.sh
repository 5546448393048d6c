#!/bin/bash
# Session 45: session 44's held-out candidate set (../s44/hocand.2t.jsonl.gz: every zero-shot
# candidate of the four HELD-OUT models) measured again with the caches as in a model
# (`tlm measure --model-cache`: before every sample the caches are flushed and the activation
# inputs read back in), 15 one-call samples each, at T threads (default 2). Evaluation only.
# Run from the repository root: bench/results/zero-shot/intel/s45/hocand_model.sh OUT.jsonl
cd /work/main
out=$1; t=${THREADS:-2}
cpus=$( ((t == 1)) && echo 0 || echo "0-$((t - 1))")
for m in ${MODELS:-resnet50 mobilenet_v2 bert-base gpt2}; do
  w=bench/results/e2e/onnx/$m.onnx
  f=runs/s45/hocand.$m.txt
  zcat bench/results/zero-shot/intel/s44/hocand.2t.jsonl.gz |
    python3 -c "import sys, json
seen = set()
for l in sys.stdin:
    r = json.loads(l)
    if r['workload'] == '$w' and r['sentence'] not in seen:
        seen.add(r['sentence']); print(r['sentence'])" > $f
  echo "$m: $(wc -l < $f) candidates"
  taskset -c $cpus ./build/tlm --threads $t measure $f --records $out --workload $w \
    --strategy tlm-zero-shot-candidate --model-cache --repeats 15 --quiet | tail -1
done
echo HOCAND_DONE
