#!/bin/bash
# Zen 2 (AMD EPYC family 23 model 49) two-thread where-we-lose for ResNet-50 (session 55): the
# held-out driver's two-thread TLM-10xg records of this machine plus every expert program
# measured at two threads, then three paired rounds against ORT on both cores. Reads the committed
# (gzipped) records, so it runs from a clone; BUILD as for bench/lose/run.sh (default build).
set -e
cd "$(dirname "$0")/../../.."
L=bench/results/lose-zen2
mkdir -p $L/records runs
R=bench/results/heldout-zen2/records
onnx=bench/results/e2e/onnx/resnet50.onnx
TLM=${BUILD:-build}/tlm
zcat $R/resnet50.t2.tlm10.jsonl.gz > $L/records/resnet50.2t.jsonl
taskset -c 0-1 $TLM --threads 2 generate $onnx --task all --expert -o runs/resnet50.expert.t2.txt
taskset -c 0-1 $TLM --threads 2 measure runs/resnet50.expert.t2.txt --records $L/records/resnet50.2t.jsonl --workload $onnx --repeats 5 > $L/expert.measure.log 2>&1
tail -1 $L/expert.measure.log
LOSE_OUT=$L LAYOUT=auto MODELS="resnet50" FINAL_TOP=1 ROUNDS=3 CPUS=0-1 bench/lose/run.sh 2 0 maps peak final pairs peak table
echo LOSE_DONE
