#!/usr/bin/env python3
"""picks.py MODEL A B: where selections A and B (logs/MODEL.{A,B}.in-model.jsonl.gz, their latest
selection) deploy different programs, and B's per-task time over A's in the round-2 runs
(logs/MODEL.new2.run*.csv, median over the processes), beside the same ratio on the tasks where
they agree: a `tlm run` CSV's per-task time is the lowest of the set's turn medians, which
carries set-wide effects too, so the agreeing tasks are the control."""
import collections
import csv
import glob
import gzip
import json
import statistics
import sys

model, a, b = sys.argv[1:4]


def picks(name):
    recs = [json.loads(l) for l in gzip.open(f"logs/{model}.{name}.in-model.jsonl.gz", "rt")]
    last = max(r["timestamp_ms"] for r in recs)
    by = collections.defaultdict(dict)
    for r in recs:
        if r["timestamp_ms"] == last:
            by[r["task_key"]][r["sentence"]] = r["median_s"]
    keys = list(dict.fromkeys(r["task_key"] for r in recs if r["timestamp_ms"] == last))
    return keys, {k: min(by[k], key=by[k].get) for k in keys}


keys, pa = picks(a)
_, pb = picks(b)
times = collections.defaultdict(lambda: collections.defaultdict(list))
for path in glob.glob(f"logs/{model}.new2.run*.csv"):
    for row in csv.DictReader(open(path)):
        if row["task"].isdigit():
            times[int(row["task"])][row["schedules"]].append(float(row["ms"]))
ratio = {i: statistics.median(times[i][b]) / statistics.median(times[i][a]) for i in range(len(keys))}
same = [ratio[i] for i, k in enumerate(keys) if pa[k] == pb[k]]
diff = [ratio[i] for i, k in enumerate(keys) if pa[k] != pb[k]]
med = lambda v: statistics.median(v) if v else float("nan")
print(f"{model}: {b}/{a} per task; agreeing picks n={len(same)} median {med(same):.3f}; "
      f"different picks n={len(diff)} median {med(diff):.3f} ({b} faster on {sum(x < 1 for x in diff)})")
