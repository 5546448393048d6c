#!/usr/bin/env bash
# Trains the shipped zero-shot ranker (models/ranker.json, tune/ranker.h) from the committed
# records: both loops' measurements (bench/results/loop*/loop-dir.tar.gz: AMD EPYC Zen 1 at one
# core, Zen 4 at two) and the measured expert programs of every training task
# (bench/results/zero-shot/expert-train.jsonl.gz, Zen 4). Held-out tasks are left out by
# `tlm ranker train` itself. Deterministic for the same records and seed. Run from the root:
#   scripts/train_ranker.sh [OUT.json=models/ranker.json] [TLM_BINARY=./build/tlm]
# EXTRA_RECORDS="a.jsonl b.jsonl.gz" adds more records (e.g. expert records of another machine).
set -eu
out=${1:-models/ranker.json}
tlm=${2:-./build/tlm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar xzf bench/results/loop/loop-dir.tar.gz -C "$tmp" loop/records.jsonl
tar xzf bench/results/loop-zen4/loop-dir.tar.gz -C "$tmp" loop-zen4/records.jsonl
# shellcheck disable=SC2086
"$tlm" ranker train --records "$tmp/loop/records.jsonl" "$tmp/loop-zen4/records.jsonl" \
  bench/results/zero-shot/expert-train.jsonl.gz ${EXTRA_RECORDS:-} -o "$out"
