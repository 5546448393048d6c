#!/usr/bin/env bash
# Fine-tunes the shipped language model (models/tlm.ckpt) from the pre-trained base
# (models/tlm-base.ckpt) on every committed training record (scripts/shipped_records.sh), with
# the settings that measured best (BENCHMARKS.md: the best four programs per task and machine,
# weighted by speed, two epochs). Resumable (OUT.last). Deterministic for the same records and
# seed. The shipped checkpoint is this script's output on the records of session 39 (before the
# Intel expert records of sessions 41-45, which so far only the ranker learned from; with them it
# takes ~95 min at two threads: session 47's candidate, bench/results/zero-shot/intel/s47/, not
# shipped, BENCHMARKS.md "Operand order ..."). Run from the root:
#   scripts/finetune_shipped.sh [OUT.ckpt=models/tlm.ckpt] [TLM_BINARY=./build/tlm]
set -eu
out=${1:-models/tlm.ckpt}
tlm=${2:-./build/tlm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# An assignment, not `< <(...)`: a missing archive stops the script (set -e) instead of
# training on fewer records.
list=$(scripts/shipped_records.sh "$tmp")
mapfile -t records <<< "$list"
"$tlm" finetune --records "${records[@]}" --top-k 4 --weighting speed --epochs 2 -o "$out"
