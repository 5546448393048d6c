#!/bin/bash
# Only GPT-2's picks changed (its LM head): stop ho.sh after GPT-2 at 2 threads, then GPT-2 at 1.
cd /work/main
until grep -q "t2 gpt2 done" runs/s42/ho.log; do sleep 5; done
pkill -f runs/s42/ho.sh; sleep 1; pkill -f "bench/lose/modes.sh runs/s42/modes-t2-bert-base"; pkill -f interleave.py; sleep 2
rm -rf runs/s42/modes-t2-bert-base
T=1; m=gpt2; d=runs/s42/modes-t$T-$m
ROUNDS=2 THREADS=$T bench/lose/modes.sh $d bench/results/e2e/onnx/$m.onnx a=bench/results/zero-shot/intel/intel-t${T}r.$m.jsonl b=runs/hz/s42-t$T.$m.jsonl
rm -rf $d/art
echo "$(date +%H:%M:%S) t$T $m done"; grep "tlm / ORT" $d/modes.log
echo HO2_DONE
