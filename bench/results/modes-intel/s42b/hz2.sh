#!/bin/bash
# Held-out zero-shot picks with the new experts (streamed B, MLAS order on AVX-512) and the ranker
# retrained on session 42's records, 2 threads then 1.
cd /work/main
bench/results/zero-shot/zen3/hz.sh s42b-t2 runs/s42/ranker-s42b.json
THREADS=1 bench/results/zero-shot/zen3/hz.sh s42b-t1 runs/s42/ranker-s42b.json
echo HZ2_DONE
