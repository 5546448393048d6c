import json,sys,collections,math
# usage: tapcmp.py PREFIX...  (each PREFIX.old.txt, PREFIX.jsonl)
allr=[]
for pre in sys.argv[1:]:
    old=set(l.strip() for l in open(pre+'.old.txt'))
    best=collections.defaultdict(lambda:{'old':1e9,'new':1e9})
    for l in open(pre+'.jsonl'):
        r=json.loads(l)
        if not r['median_s']: continue
        s=r['sentence'].strip(); side='old' if s in old else 'new'
        best[r['task_key']][side]=min(best[r['task_key']][side], r['median_s'])
    rs=[]
    for k,v in best.items():
        if v['old']<1e9 and v['new']<1e9:
            rs.append(v['old']/min(v['old'],v['new']))
            print(pre.split('/')[-1], k.split('\n')[0][:26], 'old %.3f new %.3f x%.3f'%(v['old']*1e3, v['new']*1e3, v['old']/v['new']))
    allr+=rs
    print(pre.split('/')[-1], 'tasks',len(rs),'geomean %.4f'%math.exp(sum(map(math.log,rs))/len(rs)) if rs else '')
print('ALL tasks',len(allr),'geomean %.4f'%math.exp(sum(map(math.log,allr))/len(allr)), 'improved>3%', sum(r>1.03 for r in allr))
