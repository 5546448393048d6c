#!/usr/bin/env python3
"""Session 45: what the one-more-loop-parallel twins of the tap-split experts add.

  cmptwin.py RECORDS.jsonl[.gz]

Per task (expert records of one run): the fastest expert without the twins, the fastest with
them, and every twin against its own expert. A twin is
an expert program whose sentence, with its parallel value one lower, is another expert program of
the task (the tap-split experts are the only ones that come in such pairs).
"""
import gzip, json, math, re, sys
from collections import defaultdict

f = gzip.open(sys.argv[1], "rt") if sys.argv[1].endswith(".gz") else open(sys.argv[1])
tasks = defaultdict(dict)
for l in f:
    r = json.loads(l)
    if r["error"]:
        continue
    if r["strategy"] == "expert":
        tasks[r["task_key"]][r["sentence"]] = r["median_s"]
par = re.compile(r"(parallel \S+ -> )(\d+)")
n = wins = wins3 = 0
gains, pair_ratios = [], []
for key, progs in tasks.items():
    twins = {}
    for s in progs:
        m = par.search(s)
        if not m:
            continue
        base = s[:m.start()] + m.group(1) + str(int(m.group(2)) - 1) + s[m.end():]
        if base in progs:
            twins[s] = base
    if not twins:
        continue
    n += 1
    without = min(v for s, v in progs.items() if s not in twins)
    best = min(progs.values())
    gains.append(without / best)
    if best < without:
        wins += 1
        wins3 += without / best > 1.03
    pair_ratios += [progs[b] / progs[t] for t, b in twins.items()]
geo = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
print(f"{n} tasks with twins; a twin the fastest expert on {wins} ({wins3} by more than 3%);"
      f" best expert with twins / without: geomean {geo(gains):.3f}, max {max(gains):.3f}")
print(f"{len(pair_ratios)} twins vs their own expert: faster for "
      f"{sum(r > 1 for r in pair_ratios)}, geomean {geo(pair_ratios):.3f}"
      f" ({min(pair_ratios):.2f}-{max(pair_ratios):.2f})")
