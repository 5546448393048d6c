#!/usr/bin/env bash
# Measures the expert programs (tlm generate --expert) of every task of the training workloads
# (tlm zoo --list train) on this machine, appending to OUT.jsonl: demonstrations for
# `tlm finetune --records ... OUT.jsonl`. Held-out workloads are never listed; a training task that
# also occurs in a held-out workload is measured but finetune leaves it out (by task key).
# Resumable: tlm measure skips sentences already in OUT. Run from the repository root:
#   scripts/expert_records.sh OUT.jsonl [TLM_BINARY]
# WORKLOADS="spec ..." measures only those (e.g. a priority order; each must be a training one).
# ONLY=REGEX measures only the expert sentences matching it (grep -E), e.g. after a change to one
# kind's experts: ONLY='ConvNchwc .* group 1 ' (dense channel-blocked convolutions).
set -eu
out=$1
tlm=${2:-./build/tlm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
train=$("$tlm" zoo --list train)
workloads=${WORKLOADS:-$train}
for w in $workloads; do
  echo "$train" | grep -qxF "$w" || { echo "error: $w is not a training workload (tlm zoo --list train)"; exit 1; }
done
# Workloads on channel-blocked activations (SPEC@nchw<B>c) are written for machines with B vector
# lanes: measure only those of this machine (16 with AVX-512, 8 otherwise).
lanes=8
grep -qw avx512f /proc/cpuinfo && lanes=16
kept=""
for w in $workloads; do
  case $w in
    *@nchw${lanes}c) kept="$kept $w" ;;
    *@*) ;;
    *) kept="$kept $w" ;;
  esac
done
workloads=$kept
n=$(echo $workloads | wc -w)
i=0
for w in $workloads; do
  i=$((i + 1))
  "$tlm" generate "$w" --task all --expert -o "$tmp/s.txt" 2>/dev/null
  if [ -n "${ONLY:-}" ]; then
    grep -E -- "$ONLY" "$tmp/s.txt" > "$tmp/only.txt" || true
    mv "$tmp/only.txt" "$tmp/s.txt"
  fi
  [ -s "$tmp/s.txt" ] || continue
  echo "[$i/$n] $w: $(wc -l < "$tmp/s.txt") expert programs"
  "$tlm" measure "$tmp/s.txt" --records "$out" --workload "$w" --strategy expert --quiet | tail -1
done
