import json,sys,collections
cnt=collections.Counter()
for pre in sys.argv[1:]:
    old=set(l.strip() for l in open(pre+'.old.txt'))
    best=collections.defaultdict(lambda:{'old':(1e9,''),'new':(1e9,'')})
    for l in open(pre+'.jsonl'):
        r=json.loads(l)
        s=r['sentence'].strip(); side='old' if s in old else 'new'
        if r['median_s'] and r['median_s']<best[r['task_key']][side][0]: best[r['task_key']][side]=(r['median_s'],s)
    for k,v in best.items():
        if v['new'][0]<v['old'][0]:
            s=v['new'][1]
            import re
            r1=re.search(r'r1 3 -> (\d)',s).group(1); r2=re.search(r'r2 3 -> (\d)',s).group(1)
            pk=re.search(r'pad -> (\d)',s).group(1)
            d1=re.search(r'\.d1 \d+ -> \d+ \d+ (\d+)',s).group(1)
            cnt[('split r1' if r1=='1' else 'split r2', 'pack',pk,'px',d1)]+=1
for k,v in cnt.most_common(): print(v,k)
