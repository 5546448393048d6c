#!/usr/bin/env bash
# Generation throughput and validity of a language-model checkpoint on the 23 held-out tasks of
# the subgraph benchmark (bench/subgraph/tasks.txt): `tlm generate` writes N distinct programs per
# task at each batch size; every sentence it prints is parsed back and re-validated by tlm itself
# (the "(V valid)" count). Output: one line per task and batch, then the totals.
#
#   bench/lm/generate.sh [CKPT=models/tlm.ckpt] [N=64] [BATCHES="16 64"]
set -euo pipefail
cd "$(dirname "$0")/../.."
ckpt=${1:-models/tlm.ckpt}
n=${2:-64}
batches=${3:-16 64}
for b in $batches; do
  total_p=0
  total_s=0
  total_v=0
  while read -r label spec task; do
    [[ -z "$label" || "$label" == \#* ]] && continue
    line=$(./build/tlm generate "$spec" --task "$task" -n "$n" --batch "$b" --model "$ckpt" --layout nchw \
      -o /dev/null 2>&1 | grep '^generate:')
    p=$(sed -E 's/.*: ([0-9]+) programs \(([0-9]+) valid\).* in ([0-9.]+) s.*/\1 \2 \3/' <<<"$line")
    read -r progs valid secs <<<"$p"
    total_p=$((total_p + progs))
    total_v=$((total_v + valid))
    total_s=$(python3 -c "print($total_s + $secs)")
    printf '%-22s batch %3d: %s\n' "$label" "$b" "${line#generate: }"
  done <bench/subgraph/tasks.txt
  python3 -c "print(f'batch $b: $total_p programs ($total_v valid) in {$total_s:.1f} s of generation = {$total_p / $total_s:.1f} programs/s')"
done
