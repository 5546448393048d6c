"""Record sets for an in-model comparison of the level-2 (MLAS loop order) blocked-convolution
experts: from BASE (all tasks' expert records) and ONE (the dense convolutions with kernel taps,
re-measured in one pass), writes OUT/old.jsonl (each taps task's best program without level 2),
OUT/lv2.jsonl (its best level-2 program) and OUT/best.jsonl (its best of all), every other task
keeping BASE's records. `tlm run SPEC --schedules old=OUT/old.jsonl,lv2=...,best=...` then times
them in one process, taking turns. Usage: sets.py BASE.jsonl.gz ONE.jsonl OUT"""
import gzip, json, os, re, sys

base, one, out = sys.argv[1:4]
os.makedirs(out, exist_ok=True)
taps = {}
for line in open(one):
    r = json.loads(line)
    if not r['error']:
        taps.setdefault(r['task_key'], []).append(r)
keep = [json.loads(l) for l in gzip.open(base, 'rt')]
keep = [r for r in keep if r['task_key'] not in taps]
lv2 = lambda r: re.search(r'compute_at f\d_convnchwc -> 2 ', r['sentence']) is not None
for name, want in (('old', lambda r: not lv2(r)), ('lv2', lv2), ('best', lambda r: True)):
    with open(os.path.join(out, name + '.jsonl'), 'w') as f:
        for r in keep:
            f.write(json.dumps(r) + '\n')
        for rs in taps.values():
            rs = [r for r in rs if want(r)] or rs
            f.write(json.dumps(min(rs, key=lambda r: r['median_s'])) + '\n')
print('%d taps tasks, %d other records' % (len(taps), len(keep)))
