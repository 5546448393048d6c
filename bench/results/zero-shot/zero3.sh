#!/usr/bin/env bash
# Zero-shot on the held-out zoo models, one `tlm run` per model (2 threads), every set timed in
# turns: the default schedules; the previous shipped model (OLD, `git show d047edb:models/tlm.ckpt
# > old.ckpt`) greedy (how it was used) and with --zero-shot experts; the new model (NEW, the
# shipped models/tlm.ckpt of this commit) greedy and experts; the measured best expert program per
# task (6-17 measurements per task; records of bench/expert_model.sh, committed in
# bench/results/expert/). Run from the repository root:
#   OLD=old.ckpt bench/results/zero-shot/zero3.sh
set -u
out=${OUT:-runs/zero-shot}
mkdir -p "$out"
old=${OLD:?the previous checkpoint: git show d047edb:models/tlm.ckpt > old.ckpt; OLD=old.ckpt}
new=${NEW:-models/tlm.ckpt}
for m in ${MODELS_LIST:-resnet50 bert-base:seq=128 gpt2:seq=128 mobilenet_v2}; do
  n=${m%%:*}
  sets="old=$old@greedy,oldx=$old@experts,new=$new@greedy,newx=$new@experts,measured=bench/results/expert/$n.expert.jsonl.gz"
  echo "== $(date +%H:%M:%S) $m"
  ( time ./build/tlm run "$m" --threads 2 --repeat ${REPEAT:-4} --schedules "$sets" --csv "$out/${n}_2t.csv" ) > "$out/${n}_2t.log" 2>&1
  grep -E "^end-to-end|FAIL|expert programs|were among" "$out/${n}_2t.log"
done
