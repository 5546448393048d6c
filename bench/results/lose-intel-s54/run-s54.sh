#!/usr/bin/env bash
# Intel (model 167) one-thread where-we-lose for ResNet-50 (session 54): the held-out driver's
# one-thread records of this machine (TLM-10xg, TLM-32xg, evolutionary 10xg, Mullapudi2016,
# Li2018) plus every expert program measured at one thread on core 0, then three paired rounds
# against ORT on core 0 (core 1 was tuning meanwhile). Session 54 ran the same steps by hand;
# bench/lose/run.sh's heldout and expert steps now do them (BUILD as there).
set -euo pipefail
cd "$(dirname "$0")/../../.."
HELDOUT=bench/results/heldout-intel \
  HELDOUT_SETS="tlm10 tlm32 evolutionary10 halide-mullapudi2016 halide-li2018" \
  LOSE_OUT=bench/results/lose-intel-s54 LAYOUT=auto MODELS=resnet50 FINAL_TOP=1 ROUNDS=3 CPUS=0 \
  bench/lose/run.sh 1 0 maps heldout expert peak final pairs peak table
