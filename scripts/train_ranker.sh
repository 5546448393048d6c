#!/usr/bin/env bash
# Trains the shipped zero-shot ranker (models/ranker.json, tune/ranker.h) from the committed
# records (scripts/shipped_records.sh: the three loops' measurements and the measured expert
# programs of every training task). Held-out tasks are left out by `tlm ranker train` itself.
# Deterministic for the same records and seed. Run from the root:
#   scripts/train_ranker.sh [OUT.json=models/ranker.json] [TLM_BINARY=./build/tlm]
# EXTRA_RECORDS="a.jsonl b.jsonl.gz" adds more records (e.g. expert records of another machine).
set -eu
out=${1:-models/ranker.json}
tlm=${2:-./build/tlm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# An assignment, not `< <(...)`: a missing archive stops the script (set -e) instead of
# training on fewer records.
list=$(scripts/shipped_records.sh "$tmp")
mapfile -t records <<< "$list"
# shellcheck disable=SC2086
"$tlm" ranker train --records "${records[@]}" ${EXTRA_RECORDS:-} -o "$out"
