# spread.py CSV [SETS...]: for schedule sets holding the same programs, how far apart are
# the per-task in-model times (max/min over the sets), weighted by time, and the e2e rows.
import csv, sys, collections
f = sys.argv[1]
d = collections.defaultdict(dict); kind = {}; inst = {}; e2e = {}
for r in csv.DictReader(open(f)):
    if not r['task'].isdigit():
        e2e.setdefault(r['task'], {})[r['schedules']] = r['ms']; continue
    d[r['task']][r['schedules']] = float(r['ms']); kind[r['task']] = r['kind']; inst[r['task']] = int(r['instances'])
sets = sys.argv[2:] or sorted({s for t in d for s in d[t] if s != 'default'})
rows = []
for t in d:
    v = [d[t][s] for s in sets if s in d[t]]
    if len(v) < 2: continue
    rows.append((inst[t] * (max(v) - min(v)), max(v) / min(v), t, kind[t], inst[t], v))
tot = {s: sum(inst[t] * d[t][s] for t in d if s in d[t]) for s in sets}
spread = sum(r[0] for r in rows)
print(f"sets {sets}: summed task time", {s: round(x, 2) for s, x in tot.items()}, f"sum of per-task max-min {spread:.2f} ms")
for r in sorted(rows, reverse=True)[:8]:
    print(f"  task {r[2]:>3} {r[3]:28s} x{r[4]:<2} max/min {r[1]:.3f}  " + " ".join(f"{x:.3f}" for x in r[5]))
for k, v in e2e.items(): print(' ', k, v)
