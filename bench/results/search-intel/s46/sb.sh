#!/bin/bash
# Session 46: ResNet-50's search-best programs (tlm-evolutionary, 100 per task, T threads) against
# the zero-shot picks and ONNX Runtime, interleaved (bench/lose/modes.sh, two rounds of 15
# blocks): a = the zero-shot picks (s46q), b = the search's records (the deployed choice per
# task), c = b with the five layers the zero-shot weight rule gives MLAS's pointwise order taking
# that program (the zero-shot pick) instead. Run from the repository root: [T=1|2] sb.sh
# (default T=2; the records resnet50.tT.tlmevo100.jsonl[.gz], the picks s46q-tT).
set -e
cd /work/main
T=${T:-2}
mkdir -p runs/s46
d=bench/results/search-intel/s46
z=bench/results/zero-shot/intel/s46/picks/s46q-t$T.resnet50.jsonl
s45=bench/results/zero-shot/intel/s45/picks/s45r1-t$T.resnet50.jsonl
[ -f $d/resnet50.t$T.tlmevo100.jsonl ] || gunzip -k $d/resnet50.t$T.tlmevo100.jsonl.gz
# The zero-shot picks the weight rule changed (they differ from session 45's on exactly those).
python3 - "$z" "$s45" > runs/s46/pw_picks.t$T.jsonl <<'P'
import json, sys
a = {json.loads(l)['task_key']: l for l in open(sys.argv[1])}
b = {json.loads(l)['task_key']: json.loads(l)['sentence'] for l in open(sys.argv[2])}
for k, l in a.items():
    if json.loads(l)['sentence'] != b[k] and ' 1 1 16 16 ' in l and 'compute_at' in l:
        sys.stdout.write(l)
P
# c: every record of those tasks replaced by the zero-shot pick (the deployed choice then takes it).
python3 - $d/resnet50.t$T.tlmevo100.jsonl runs/s46/pw_picks.t$T.jsonl > runs/s46/sb_c.t$T.jsonl <<'P'
import json, sys
pw = {json.loads(l)['task_key']: l for l in open(sys.argv[2])}
for l in open(sys.argv[1]):
    sys.stdout.write(pw.get(json.loads(l)['task_key'], l))
P
ROUNDS=2 THREADS=$T bench/lose/modes.sh runs/s46/sb-t$T bench/results/e2e/onnx/resnet50.onnx a=$z b=$d/resnet50.t$T.tlmevo100.jsonl c=runs/s46/sb_c.t$T.jsonl
