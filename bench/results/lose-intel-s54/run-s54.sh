#!/bin/bash
# Intel (model 167) one-thread where-we-lose for ResNet-50 (session 54): the held-out driver's
# one-thread records of this machine (TLM-10xg, TLM-32xg, evolutionary 10xg, Mullapudi2016,
# Li2018) plus every expert program measured at one thread on core 0, then the paired rounds
# against ORT on core 0. Core 1 was tuning (evolutionary 200xg) meanwhile.
set -e
cd /work/main
L=bench/results/lose-intel-s54
mkdir -p $L/records runs
R=bench/results/heldout-intel/records
onnx=bench/results/e2e/onnx/resnet50.onnx
cat $R/resnet50.t1.{tlm10,tlm32,evolutionary10,halide-mullapudi2016,halide-li2018}.jsonl > $L/records/resnet50.1t.jsonl
taskset -c 0 build/tlm --threads 1 generate $onnx --task all --expert -o runs/resnet50.expert.t1.txt
taskset -c 0 build/tlm --threads 1 measure runs/resnet50.expert.t1.txt --records $L/records/resnet50.1t.jsonl --workload $onnx --repeats 5 > $L/expert.measure.log 2>&1
tail -1 $L/expert.measure.log
LOSE_OUT=$L LAYOUT=auto MODELS="resnet50" FINAL_TOP=1 ROUNDS=3 CPUS=0 bench/lose/run.sh 1 0 maps peak final pairs peak table
echo LOSE_DONE
