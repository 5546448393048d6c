#!/usr/bin/env python3
"""Session 45: how much a pick chosen by hot timing loses when timed as in a model.

  cmpcache.py HOT.jsonl[.gz] MODEL.jsonl[.gz] [PICKS_GLOB...]

Per held-out task (records of one hardware, 2 threads): the program fastest hot and the program
fastest with model-cache timing, both timed in model-cache mode; summed per model and weighted by
the task's instances when a picks file (tlm run's records) is given.
"""
import glob, gzip, json, sys
from collections import defaultdict

def load(p):
    f = gzip.open(p, "rt") if p.endswith(".gz") else open(p)
    return [json.loads(l) for l in f if l.strip()]

hot, model = load(sys.argv[1]), load(sys.argv[2])
def best(rs):
    b = defaultdict(dict)
    for r in rs:
        if r["error"] or not r["median_s"]:
            continue
        d = b[(r["workload"], r["task_key"])]
        d[r["sentence"]] = min(d.get(r["sentence"], 1e9), r["median_s"])
    return b
H, M = best(hot), best(model)
picks = {}
for pat in sys.argv[3:]:
    for p in glob.glob(pat):
        for r in load(p):
            picks[(r["task_key"])] = r["sentence"]
per_model = defaultdict(lambda: [0.0, 0.0, 0.0, 0, 0])
rows = []
for key, m in M.items():
    if key not in H:
        continue
    h = H[key]
    hot_pick = min(h, key=h.get)
    model_pick = min(m, key=m.get)
    if hot_pick not in m:
        continue
    pm = per_model[key[0].split("/")[-1]]
    pm[0] += m[hot_pick]; pm[1] += m[model_pick]; pm[3] += 1
    pm[4] += hot_pick != model_pick
    shipped = picks.get(key[1])
    pm[2] += m.get(shipped, m[hot_pick]) if shipped else m[hot_pick]
    rows.append((m[hot_pick] - m[model_pick], key[0].split("/")[-1], m[hot_pick] * 1e3,
                 m[model_pick] * 1e3, h[hot_pick] * 1e3, h.get(model_pick, float("nan")) * 1e3))
print("model: tasks, differing picks, sum over tasks (model-cache ms) of the hot-best / model-best"
      + (" / given picks" if picks else ""))
for name, (a, b, c, n, d) in sorted(per_model.items()):
    print(f"  {name:14s} {n:3d} {d:3d}  {a*1e3:8.3f} {b*1e3:8.3f}" +
          (f" {c*1e3:8.3f}" if picks else "") + f"   hot-best / model-best {a/b:.3f}")
print("largest differences (model ms of hot-best, model-best; hot ms of hot-best, model-best):")
for d, name, a, b, c, e in sorted(rows, reverse=True)[:15]:
    print(f"  {name:14s} {a:7.3f} {b:7.3f}   hot {c:7.3f} {e:7.3f}")
