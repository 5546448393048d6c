import json, gzip, collections, subprocess, csv, sys
HW = "isa=avx512,cores=1,vec=16,l1=32k,l2=2m,l3=256m,cpu=intel-6-167"
tasks = [int(x) for x in sys.argv[1].split(',')]
rows = {int(r['task']): r for r in csv.DictReader(open('/work/main/bench/results/lose-intel-s67/lose_1t.csv')) if r['task'].isdigit()}
recs = collections.defaultdict(list)
for l in gzip.open('/work/main/bench/results/lose-intel-s67/tlmevo64-t1/resnet50.t1.tlm32+evo64.jsonl.gz', 'rt'):
    r = json.loads(l)
    if r.get('error') or not r.get('median_s'): continue
    recs[r['sentence'].split(' isa=')[0]].append((r['median_s'], r['sentence']))
for t in tasks:
    best = rows[t]['sentence']
    pre = best.split(' isa=')[0]
    top = []
    for m, s in sorted(recs[pre]):
        if s not in top: top.append(s)
        if len(top) >= 8: break
    ex = subprocess.run(['/work/main/build/tlm', 'generate', '/work/main/bench/results/e2e/onnx/resnet50.onnx', '--task', str(t), '--expert', '--hardware', HW],
                        capture_output=True, text=True).stdout.split('\n')
    cands = [best] + top + [e for e in ex if e.strip()]
    seen = []
    for c in cands:
        if c not in seen: seen.append(c)
    import os
    os.makedirs(f'/tmp/s68/cold/t{t}', exist_ok=True)
    open(f'/tmp/s68/cold/t{t}/cands.txt', 'w').write('\n'.join(seen) + '\n')
    print(t, len(seen))
