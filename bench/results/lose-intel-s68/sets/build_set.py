# set B: the s67 final programs, each task in CHANGE replaced by its best candidate under --model-cache timing
import json, sys
base = '/work/main/bench/results/lose-intel-s67/final/resnet50.1t.jsonl'
change = [int(x) for x in sys.argv[1].split(',')]
out = sys.argv[2]
recs = {}
for l in open(base):
    r = json.loads(l); recs[r['sentence'].split(' isa=')[0]] = r
for t in change:
    d = f'/tmp/s68/cold/t{t}'
    cold = [json.loads(l) for l in open(f'{d}/cold.jsonl')]
    hot = {json.loads(l)['sentence']: json.loads(l) for l in open(f'{d}/hot.jsonl')}
    best = min((r for r in cold if not r['error']), key=lambda r: r['median_s'])
    h = hot[best['sentence']]
    pre = best['sentence'].split(' isa=')[0]
    assert pre in recs, t
    recs[pre] = h
    print(t, 'cold', round(best['median_s']*1e3, 3), 'hot', round(h['median_s']*1e3, 3))
with open(out, 'w') as f:
    for r in recs.values(): f.write(json.dumps(r) + '\n')
