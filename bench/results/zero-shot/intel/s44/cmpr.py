# Session 44: how many held-out tasks two or more rankers choose differently on a set of measured
# candidates (the first is the reference), and the time their choices lose there:
#   python3 cmpr.py RECORDS.jsonl RANKER.json RANKER.json...   (run from the repository root)
import subprocess, sys, re, math
def per(r, rec):
    out = subprocess.run(['./build/tlm','ranker','eval','--ranker',r,'--records',rec,'--worst','1000'],capture_output=True,text=True).stdout
    d = {}
    for l in out.splitlines():
        m = re.match(r'\s*([0-9.]+) ms\s+([0-9.]+)\s+(\d+ programs\s+.*)', l)
        if m: d[m.group(3)] = (float(m.group(2)), float(m.group(1)))
    return d
rec = sys.argv[1]; rs = sys.argv[2:]
base = per(rs[0], rec)
for r in rs[1:]:
    d = per(r, rec)
    diff = [(k, base[k], d[k]) for k in base if k in d and abs(base[k][0] - d[k][0]) > 1e-3]
    print(f'{r}: {len(diff)} of {len(base)} tasks choose differently from {rs[0]}; lost ms {sum(v[1] for v in base.values()):.3f} -> {sum(v[1] for v in d.values()):.3f}')
    for k, a, b in sorted(diff, key=lambda x: -abs(x[1][1]-x[2][1]))[:6]: print(f'   {a[0]:.3f} -> {b[0]:.3f}  {k[:110]}')
