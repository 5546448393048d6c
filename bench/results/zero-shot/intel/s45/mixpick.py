#!/usr/bin/env python3
"""Session 45: picks that take model-cache timing's best program for weight-heavy tasks only.

  mixpick.py HOT.jsonl[.gz] MODEL_CACHE.jsonl[.gz] MIN_WEIGHT_MB OUT.jsonl

Per task: if its weights (w* inputs) hold at least MIN_WEIGHT_MB, the model-cache record of its
fastest program by model-cache timing, else the hot record of its fastest program hot. OUT holds
one record per task (tlm run --schedules NAME=OUT takes each task's best: one each).
"""
import gzip, json, math, re, sys

def load(p):
    f = gzip.open(p, "rt") if p.endswith(".gz") else open(p)
    return [json.loads(l) for l in f if l.strip()]

hot, model, mb, out = load(sys.argv[1]), load(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
def best(rs):
    b = {}
    for r in rs:
        if r["error"]:
            continue
        k = (r["workload"], r["task_key"])
        if k not in b or r["median_s"] < b[k]["median_s"]:
            b[k] = r
    return b
H, M = best(hot), best(model)
def weight_mb(key):
    return sum(math.prod(int(x) for x in m.group(1).split(",")) * 4
               for m in re.finditer(r"^w\d+:f32\[([0-9,]+)\]", key, re.M)) / 2**20
n = 0
with open(out, "w") as f:
    for k, r in H.items():
        pick = r
        if weight_mb(k[1]) >= mb and k in M:
            m = dict(M[k])
            m.pop("cache", None)  # a one-program pick set: the hot field layout
            pick = m
            n += pick["sentence"] != r["sentence"]
        f.write(json.dumps(pick) + "\n")
print(f"{len(H)} tasks, {n} picks changed (weights >= {mb} MiB)", file=sys.stderr)
