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
# GREEDY=1 also measures the language model's most likely program of every task (beam 1, the
# zero-shot ranker's other candidate: the ranker must see how it compares on this machine).
# MODEL=CKPT: that checkpoint's greedy program instead of the shipped model's; EXPERTS=0 measures
# the greedy programs alone (e.g. a candidate model's, for the ranker: session 48).
# THREADS=N writes and measures for N threads (the hardware key's cores=N; default: every core),
# CPUS=LIST pins every step (taskset), e.g. two one-thread lanes: THREADS=1 CPUS=0 ... & THREADS=1
# CPUS=1 ..., each with its own WORKLOADS and its own OUT (concatenate them afterwards).
set -eu
out=$1
tlm=${2:-./build/tlm}
threads=()
[ -n "${THREADS:-}" ] && threads=(--threads "$THREADS")
pin=()
[ -n "${CPUS:-}" ] && pin=(taskset -c "$CPUS")
model=()
[ -n "${MODEL:-}" ] && model=(--model "$MODEL")
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
  : > "$tmp/s.txt"
  [ "${EXPERTS:-1}" != 0 ] &&
    "${pin[@]}" "$tlm" "${threads[@]}" generate "$w" --layout nchw --task all --expert -o "$tmp/s.txt" 2>/dev/null
  : > "$tmp/g.txt"
  [ -n "${GREEDY:-}" ] &&
    "${pin[@]}" "$tlm" "${threads[@]}" generate "$w" --layout nchw --task all --beam 1 -n 1 "${model[@]}" -o "$tmp/g.txt" 2>/dev/null
  if [ -n "${ONLY:-}" ]; then
    for f in s g; do
      grep -E -- "$ONLY" "$tmp/$f.txt" > "$tmp/only.txt" || true
      mv "$tmp/only.txt" "$tmp/$f.txt"
    done
  fi
  echo "[$i/$n] $w: $(wc -l < "$tmp/s.txt") expert programs, $(wc -l < "$tmp/g.txt") greedy"
  for f in s g; do
    [ -s "$tmp/$f.txt" ] || continue
    strategy=expert
    [ $f = g ] && strategy=tlm-greedy
    "${pin[@]}" "$tlm" "${threads[@]}" measure "$tmp/$f.txt" --records "$out" --workload "$w" \
      --strategy $strategy --quiet | tail -1
  done
done
