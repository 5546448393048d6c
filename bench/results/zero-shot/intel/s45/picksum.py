#!/usr/bin/env python3
"""Session 45: pick sets looked up in one sitting's candidate measurements.

  picksum.py CANDIDATES.jsonl[.gz] MODEL NAME=PICKS.jsonl...

For each pick set (tlm run records: one program per task), the sum over the model's tasks of its
programs' times in CANDIDATES weighted by the task's instance count is not known here, so the
plain per-task sum, beside the best candidate's; and which tasks differ from the first set.
"""
import gzip, json, sys
cand_path, model = sys.argv[1], sys.argv[2]
f = gzip.open(cand_path, "rt") if cand_path.endswith(".gz") else open(cand_path)
t = {}
for l in f:
    r = json.loads(l)
    if r["error"] or not r["workload"].endswith(model + ".onnx"):
        continue
    t.setdefault(r["task_key"], {})[r["sentence"]] = r["median_s"]
sets = []
for a in sys.argv[3:]:
    name, path = a.split("=", 1)
    sets.append((name, {json.loads(l)["task_key"]: json.loads(l)["sentence"] for l in open(path)}))
best = sum(min(v.values()) for v in t.values())
print(f"{model}: {len(t)} tasks, best candidates sum {best*1e3:.3f} ms")
ref = sets[0][1]
for name, picks in sets:
    missing = [k for k in t if picks.get(k) not in t[k]]
    s = sum(t[k][picks[k]] for k in t if k not in missing)
    diff = [k for k in t if k not in missing and picks[k] != ref.get(k)]
    gain = sum(t[k][ref[k]] - t[k][picks[k]] for k in diff if ref.get(k) in t[k])
    print(f"  {name:8s} sum {s*1e3:8.3f} ms (best/this {best/s:.3f}), {len(missing)} not measured,"
          f" {len(diff)} differ from {sets[0][0]} (their time {gain*1e3:+.3f} ms better)")
