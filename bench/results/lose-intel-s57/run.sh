#!/usr/bin/env bash
# Intel (model 167) one-thread where-we-lose for BERT-base and GPT-2 (session 57): the held-out
# driver's one-thread records of this machine (TLM-10xg, TLM-32xg, evolutionary 200xg) plus every
# expert program measured at one thread, then three paired rounds against ORT, all on CPU ${CPUS:-1}
# (BUILD as bench/lose/run.sh). Where the 3-6% that these two models lose to ONNX Runtime at one
# thread (session 54's one-process table) sits.
set -euo pipefail
cd "$(dirname "$0")/../../.."
HELDOUT=bench/results/heldout-intel HELDOUT_SETS="tlm10 tlm32 evolutionary200" \
  LOSE_OUT=bench/results/lose-intel-s57 LAYOUT=auto MODELS="${MODELS:-bert-base gpt2}" FINAL_TOP=1 \
  ROUNDS=3 CPUS=${CPUS:-1} bench/lose/run.sh 1 0 maps heldout expert peak final pairs peak table
