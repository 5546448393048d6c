# cmpnew.py NEW.jsonl OLD.jsonl[.gz]...: per task key (sentence up to the decisions) and hardware,
# the best new program vs the best old one (median latency); geomean of old/new.
import json, sys, gzip, math, collections
def rd(f):
    op = gzip.open if f.endswith('.gz') else open
    for l in op(f, 'rt'):
        r = json.loads(l)
        if r.get('error') or not r.get('latencies_s'): continue
        s = r['sentence']; i = s.index(' isa=')
        hw = r['hardware']
        L = sorted(r['latencies_s']); yield (s[:i], hw), L[len(L) // 2]
new = collections.defaultdict(lambda: 1e9); old = collections.defaultdict(lambda: 1e9)
for k, v in rd(sys.argv[1]): new[k] = min(new[k], v)
for f in sys.argv[2:]:
    for k, v in rd(f): old[k] = min(old[k], v)
rat = []
for k in new:
    if k in old:
        rat.append(old[k] / new[k])
        print('%-60s %s old %.3f new %.3f ms  old/new %.3f' % (k[0][:60], k[1].split(',')[1], old[k]*1e3, new[k]*1e3, old[k]/new[k]))
if rat: print('tasks', len(rat), 'geomean old/new %.3f' % math.exp(sum(map(math.log, rat)) / len(rat)), 'new faster in', sum(r > 1 for r in rat))
