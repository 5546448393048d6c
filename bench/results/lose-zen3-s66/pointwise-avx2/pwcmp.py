import json,sys,collections,re
# per task: best old expert, and each pw variant's time
recs=sys.argv[1]
var={}
import glob
for f in glob.glob('/tmp/s66/exp/pw_*,*.txt'):
    v=f.split('pw_')[1][:-4]
    for l in open(f): var.setdefault(l.strip(),set()).add(v)
old=set(l.strip() for l in open(sys.argv[2]))
t=collections.defaultdict(dict)
for l in open(recs):
    r=json.loads(l); s=r['sentence'].strip(); k=r['task_key']
    if not r['median_s']: continue
    if s in old: t[k]['old']=min(t[k].get('old',1e9), r['median_s'])
    elif s in var and len(var[s])<7:
        for v in var[s]: t[k][v]=r['median_s']
vs=['4,3,16','4,3,8','4,3,32','2,6,16','4,2,16','3,4,16','1,12,16']
print('task'.ljust(34),'old', *vs)
for k,d in t.items():
    if len(d)>1: print(k[:34].replace('\n',' ').ljust(34), '%.3f'%(d['old']*1e3), *['%.3f'%(d[v]*1e3) if v in d else '-' for v in vs])
import itertools,math
rows=[d for d in t.values() if len(d)>1]
for n in (1,2,3):
    res=[]
    for sub in itertools.combinations(vs,n):
        g=math.exp(sum(math.log(d['old']/min([d['old']]+[d[v] for v in sub if v in d])) for d in rows)/len(rows))
        res.append((g,sub))
    res.sort(reverse=True); print(n, ['%.4f %s'%x for x in res[:4]])
