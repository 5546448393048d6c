#!/bin/bash
# Held-out zero-shot picks with session 43's experts and ranker (runs/s43/ranker2.json, now
# models/ranker.json), 2 threads then 1; then ho.sh interleaves them with session 42's and ORT.
cd /work/main
bench/results/zero-shot/zen3/hz.sh s43c-t2 runs/s43/ranker2.json
THREADS=1 bench/results/zero-shot/zen3/hz.sh s43c-t1 runs/s43/ranker2.json
echo HZ_DONE
bench/results/modes-intel/s43/ho.sh
