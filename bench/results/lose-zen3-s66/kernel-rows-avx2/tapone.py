import json,sys,collections,math,re
allr=[]
for pre in sys.argv[1:]:
    old=set(l.strip() for l in open(pre+'.old.txt'))
    best=collections.defaultdict(lambda:{'old':1e9,'one':1e9})
    for l in open(pre+'.jsonl'):
        r=json.loads(l); s=r['sentence'].strip()
        if not r['median_s']: continue
        if s in old: side='old'
        else:
            if re.search(r'r2 3 -> 1',s) and re.search(r'pad -> 1 ',s) and re.search(r'\.d1 \d+ -> \d+ \d+ 2 ',s): side='one'
            else: continue
        best[r['task_key']][side]=min(best[r['task_key']][side],r['median_s'])
    for k,v in best.items():
        if v['one']<1e9: allr.append(v['old']/min(v['old'],v['one']))
print('tasks',len(allr),'geomean %.4f'%math.exp(sum(map(math.log,allr))/len(allr)),'max %.3f'%max(allr), 'improved>2%',sum(r>1.02 for r in allr))
