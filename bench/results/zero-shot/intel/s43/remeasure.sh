#!/bin/bash
# Provenance (session 43): run from the repository root; it wrote runs/s43/*, committed here as
# ../../expert-train-intel-s43.jsonl.gz (screen + er, concatenated) and remeasure.jsonl.gz.
# Re-measure the top-2 old and top-2 new expert programs of each screened task, 3 rounds.
cd /work/main
for r in 1 2 3; do
 for th in 2 1; do
  cpus=0-1; [ $th = 1 ] && cpus=0
  for w in $(cut -f1 runs/s43/rm.$th.tsv | sort -u); do
    grep -F "$w	" runs/s43/rm.$th.tsv | cut -f2 > /tmp/rm_s.txt
    taskset -c $cpus ./build/tlm --threads $th measure /tmp/rm_s.txt --records runs/s43/rm.$th.r$r.jsonl --workload $w --strategy expert --quiet | tail -1
  done
 done
done
echo RM_DONE
