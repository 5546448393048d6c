# Session 44: tap-split experts as written vs with the blocks x rows parallel split (parvar.sh).
# python3 cmppar.py RECORDS.jsonl
import json, sys, re, collections, math


def moved(s):
    """The program with its parallel choice 1 moved to 2, or None."""
    m = re.search(r'(parallel \S+ -> )1', s)
    return s[:m.start()] + m.group(1) + '2' + s[m.end():] if m else None


by = collections.defaultdict(dict)
for l in open(sys.argv[1]):
    r = json.loads(l)
    if not r['error']: by[(r['workload'], r['task_key'])][r['sentence']] = r['median_s']
gm = lambda x: math.exp(sum(map(math.log, x)) / len(x))
pairs, gains = [], []
for d in by.values():
    variants = {moved(s) for s in d} - {None}
    pairs += [t / d[moved(s)] for s, t in d.items() if moved(s) in d]
    gains.append(min(t for s, t in d.items() if s not in variants) / min(d.values()))
print(f'{len(pairs)} programs with the blocks alone parallel: with blocks x rows {sum(x > 1 for x in pairs)} '
      f'faster; speedup geomean {gm(pairs):.3f}, range {min(pairs):.2f}-{max(pairs):.2f}')
print(f'{len(gains)} tasks: best tap-split program with the moved split / best as written: geomean '
      f'{gm(gains):.3f}, faster on {sum(g > 1 for g in gains)}, by >3% on {sum(g > 1.03 for g in gains)}, '
      f'up to {max(gains):.2f}x')
