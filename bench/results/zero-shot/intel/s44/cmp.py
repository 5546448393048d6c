# Session 44: best tap-split lane-chunk expert vs the best of every other expert per task
# (same-sitting records). python3 cmp.py RECORDS.jsonl...
import json, sys, re, collections, math


def slots(s):
    """The anchor's reduction R1 tiles: {'r0': (extent, R1), ...}."""
    return {m.group(1): (int(m.group(2)), int(m.group(3)))
            for m in re.finditer(r'tile f\d+_convnchwc\.(r\d) (\d+) -> (\d+)', s)}


def is_split(s):
    r = slots(s)
    chunk = 'r0' in r and r['r0'][1] < r['r0'][0]
    rows = [d for d in ('r1', 'r2') if d in r and r[d][0] > 1 and r[d][1] == 1]
    return chunk and len(rows) == 1


by = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sys.argv[1:]:
    for l in open(f):
        r = json.loads(l)
        if r.get('error') or 'ConvNchwc' not in r['sentence'] or r['strategy'] != 'expert': continue
        th = re.search(r'cores=(\d)', r['hardware']).group(1)
        by[(th, r['workload'], r['task_key'])]['split' if is_split(r['sentence']) else 'other'].append(r['median_s'])
for th in '21':
    g = []; wins = 0; big = 0
    for k, d in by.items():
        if k[0] != th or 'split' not in d: continue
        o, s = min(d['other']), min(d['split'])
        ratio = o / min(o, s)
        g.append(ratio); wins += s < o; big += ratio > 1.03
    print(f'{th} thread(s): {len(g)} tasks, a tap split fastest on {wins}, by >3% on {big}, '
          f'best expert gains {math.exp(sum(map(math.log, g)) / len(g)):.3f} geomean, up to {max(g):.3f}')
