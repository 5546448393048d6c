import json, sys, re
d = sys.argv[1]
def load(f):
    out = {}
    for l in open(f):
        r = json.loads(l)
        out[r['sentence']] = r['median_s'] * 1e3 if not r['error'] else None
    return out
hot, cold = load(f'{d}/hot.jsonl'), load(f'{d}/cold.jsonl')
sents = [l.strip() for l in open(f'{d}/cands.txt') if l.strip()]
def t(dec, k):
    m = re.search(k + r' -> ([\d ]+?)(?= [a-z]|$)', dec)
    return m.group(1) if m else '-'
rows = []
for i, s in enumerate(sents):
    dec = s[s.index('l3=')+8:]
    parts = []
    for lab, k in (('d1', r'tile \S+\.d1 \d+'), ('d2', r'tile \S+\.d2 \d+'), ('d3', r'tile \S+\.d3 \d+'), ('r3', r'tile \S+\.r3 \d+'), ('r0', r'tile \S+\.r0 \d+'),
                   ('ca', r'compute_at \S+'), ('pkin', r'pack \S+pad'), ('pkw', r'pack \S+w0'), ('s2', r'order \S+'), ('u', r'unroll \S+'), ('par', r'parallel \S+'), ('padd3', r'pad \S+\.d3'), ('padd1', r'pad \S+\.d1')):
        parts.append(f"{lab}[{t(dec, k)}]")
    rows.append((cold.get(s) or 99, hot.get(s) or 99, i, ' '.join(parts)))
rows.sort()
for c, h, i, k in rows[:int(sys.argv[2]) if len(sys.argv) > 2 else 20]:
    print(f"{i:3d} cold {c:6.3f} hot {h:6.3f} {c/h:5.2f}  {k}")
print('best hot', min(r[1] for r in rows), 'line0 (tuned best): cold/hot', [r for r in rows if r[2]==0][0][:2])
