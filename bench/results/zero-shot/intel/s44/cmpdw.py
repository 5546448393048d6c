# Session 44: depthwise experts with the outermost loop alone parallel (new) vs the others (old)
# and the model's greedy program, per task, from one sitting's records (dw2.sh).
# python3 cmpdw.py OLD_EXPERTS.jsonl... -- NEW_RECORDS.jsonl...   (old: the sentences of dw.sh)
import json, sys, re, collections, math
i = sys.argv.index('--')
old = {json.loads(l)['sentence'] for f in sys.argv[1:i] for l in open(f) if json.loads(l)['strategy'] == 'expert'}
by = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sys.argv[i + 1:]:
    for l in open(f):
        r = json.loads(l)
        if r['error']: continue
        th = re.search(r'cores=(\d)', r['hardware']).group(1)
        kind = 'greedy' if r['strategy'] != 'expert' else ('old' if r['sentence'] in old else 'new')
        by[(th, r['workload'], r['task_key'])][kind].append(r['median_s'])
for th in '21':
    g = []; gg = []; wins = collections.Counter()
    for k, d in by.items():
        if k[0] != th or 'new' not in d or 'old' not in d: continue
        o, n = min(d['old']), min(d['new'])
        g.append(o / min(o, n)); wins['new' if n < o else 'old'] += 1
        if 'greedy' in d: gg.append((min(d['greedy']) / min(o, n), min(d['greedy']) / o))
    gm = lambda x: math.exp(sum(map(math.log, x)) / len(x))
    if not g:
        print(f'{th} thread(s): no task with the new form'); continue
    print(f'{th} thread(s): {len(g)} tasks with both; the new form the faster on {wins["new"]}, by >3% on '
          f'{sum(x > 1.03 for x in g)}; best expert gains {gm(g):.3f} geomean, up to {max(g):.2f}x; '
          f'best expert / greedy {1 / gm([a for a, b in gg]):.3f} geomean (without the new form {1 / gm([b for a, b in gg]):.3f})')
