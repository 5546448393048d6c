#!/usr/bin/env bash
# Zen 2 (AMD EPYC family 23 model 49) two-thread where-we-lose for ResNet-50 (written in session
# 55): the held-out driver's two-thread TLM-10xg records of this machine plus every expert program
# measured at two threads, then three paired rounds against ORT on both cores. Reads the committed
# (gzipped) records, so it runs from a clone; BUILD as for bench/lose/run.sh (default build).
set -euo pipefail
cd "$(dirname "$0")/../../.."
HELDOUT=bench/results/heldout-zen2 HELDOUT_SETS=tlm10 \
  LOSE_OUT=bench/results/lose-zen2 LAYOUT=auto MODELS=resnet50 FINAL_TOP=1 ROUNDS=3 CPUS=0-1 \
  bench/lose/run.sh 2 0 maps heldout expert peak final pairs peak table
