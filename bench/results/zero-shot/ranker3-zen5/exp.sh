#!/bin/bash
# usage: exp.sh NAME ARGS...
cd /work/main
n=$1; shift
build/tlm ranker train --records $(cat runs/rk/list.txt) --validate-on bench/results/zero-shot/expert-train*.jsonl.gz -o runs/rk/$n.json "$@" > runs/rk/$n.log 2>&1
