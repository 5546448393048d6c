#!/usr/bin/env bash
# Record of the first run (2026-11-25 01:20, the binary of commit d6731c3): the zero-shot modes with the
# previous session's unshipped expert-fine-tuned model (runs/s17/ft-expert.ckpt, not committed;
# re-made by `tlm finetune --records <Zen 1 loop> <Zen 4 loop> --top-k 4 --weighting speed`).
# Zero-shot modes in one run per model (2 threads): default schedules, the shipped model (ranked),
# the expert-fine-tuned model greedy / ranked / experts-only, and the measured best expert program.
set -u
cd /work/main
out=runs/s18
for m in ${MODELS_LIST:-resnet50 bert-base:seq=128 gpt2:seq=128 mobilenet_v2}; do
  n=${m%%:*}
  sets="shipped=models/tlm.ckpt@ranked,greedy=runs/s17/ft-expert.ckpt@greedy,ranked=runs/s17/ft-expert.ckpt@ranked,experts=runs/s17/ft-expert.ckpt@experts,measured=runs/s17/ex_$n.jsonl"
  [ "$n" = gpt2 ] && sets="${sets/greedy=runs\/s17\/ft-expert.ckpt@greedy,/}"
  echo "== $(date +%H:%M:%S) $m"
  ( time runs/s18/tlm run "$m" --threads 2 --repeat 4 --schedules "$sets" --csv "$out/zero_${n}_2t.csv" ) > "$out/zero_${n}_2t.log" 2>&1
  grep -E "^end-to-end|FAIL|expert programs|written in" "$out/zero_${n}_2t.log"
done
