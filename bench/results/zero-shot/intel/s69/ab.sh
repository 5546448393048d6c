#!/bin/bash
# Session 69: the held-out models with no measurement (TLM-1xg), the shipped ranker (a) against the
# one retrained with sessions 57 and 69's Intel expert records added (b: runs/s69/ranker.json, see
# er.sh), in one process with ONNX Runtime taking turns (bench/lose/interleave.py, 15 blocks per
# side) at T threads (default 1, on CPU 0; 2 on CPUs 0-1). MODELS narrows the models.
# Run from the repository root with TLM_BIN (default ./build/tlm); logs in runs/s69/ab/.
cd "$(dirname "$0")/../../../../.."
t=${T:-1}
cpus=$( ((t == 1)) && echo 0 || echo "0-$((t - 1))")
mkdir -p runs/s69/ab
for m in ${MODELS:-resnet50 mobilenet_v2 bert-base gpt2}; do
  taskset -c $cpus bench/.venv/bin/python bench/lose/interleave.py --threads $t --tlm ${TLM_BIN:-build/tlm} \
    --variant a=tlm --variant b=tlm@--ranker=runs/s69/ranker.json \
    --summary runs/s69/ab/$m.t$t.json --out runs/s69/ab --art-dir /tmp/s69art/$m-t$t \
    bench/results/e2e/onnx/$m.onnx > runs/s69/ab/$m.t$t.log 2>&1
  rm -rf /tmp/s69art/$m-t$t
  echo "$(date +%H:%M:%S) t$t $m: $(grep -E '^(a|b)[: ]' runs/s69/ab/$m.t$t.log | tail -2 | tr '\n' ' ')"
done
echo AB_DONE
