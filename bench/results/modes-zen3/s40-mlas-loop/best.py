# best.py RECORDS [BASEFILE]: per task, the fastest programs (median latency) and the base's.
import json, re, sys, collections
base = set(l.strip() for l in open(sys.argv[2])) if len(sys.argv) > 2 else set()
by = collections.defaultdict(list)
for l in open(sys.argv[1]):
    r = json.loads(l); s = r['sentence']
    if r.get('error'): continue
    L = sorted(r['latencies_s']); ms = L[len(L) // 2] * 1e3
    by[s[:s.index(' isa=')][:70]].append((ms, s in base, s))
for k, v in by.items():
    v.sort(); b = [x[0] for x in v if x[1]]
    print(k, ' base', ['%.2f' % x for x in b])
    for ms, isb, s in v[:3]:
        d = s[s.index(' isa=') + 50:]
        print('   %.2f %s %s' % (ms, 'B' if isb else ' ', re.sub(r'f\d_\w+?\.', '', d)[:150]))
