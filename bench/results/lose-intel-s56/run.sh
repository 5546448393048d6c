#!/usr/bin/env bash
# Session 56 (Intel model 167): ResNet-50's blocked 3x3 expert programs with and without the
# padded input copied at root, measured in pairs at one thread on core 0 (BUILD as bench/lose/run.sh).
set -euo pipefail
cd "$(dirname "$0")/../../.."
L=bench/results/lose-intel-s56
TLM=${BUILD:-build}/tlm
onnx=bench/results/e2e/onnx/resnet50.onnx
[[ -f $onnx ]] || /usr/bin/python3 bench/e2e/models.py --out-dir bench/results/e2e/onnx resnet50
taskset -c 0 $TLM --threads 1 generate $onnx --task all --expert -o /tmp/resnet50.expert.t1.txt
python3 bench/lose/copy_pairs.py select /tmp/resnet50.expert.t1.txt $L/pairs.t1.txt
rm -f $L/pairs.t1.jsonl
taskset -c 0 $TLM --threads 1 measure $L/pairs.t1.txt --records $L/pairs.t1.jsonl --repeats 10 --quiet
python3 bench/lose/copy_pairs.py table $L/pairs.t1.txt $L/pairs.t1.jsonl | tee $L/pairs.t1.md
gzip -kf $L/pairs.t1.jsonl
