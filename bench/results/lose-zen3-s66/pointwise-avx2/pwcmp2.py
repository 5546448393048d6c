import json,sys,collections,itertools,math
recs=sys.argv[1]; old=set(l.strip() for l in open(sys.argv[2])); pref=sys.argv[3]
vs=sys.argv[4:]
var={}
for v in vs:
    for l in open(pref+v+'.txt'): var.setdefault(l.strip(),set()).add(v)
t=collections.defaultdict(dict)
for l in open(recs):
    r=json.loads(l); s=r['sentence'].strip(); k=r['task_key']
    if not r['median_s']: continue
    if s in old: t[k]['old']=min(t[k].get('old',1e9), r['median_s'])
    if s in var and len(var[s])<len(vs):
        for v in var[s]: t[k][v]=r['median_s']
print('task'.ljust(34),'old', *vs)
rows=[]
for k,d in t.items():
    if len(d)>1:
        rows.append(d); print(k[:34].replace('\n',' ').ljust(34), '%.3f'%(d['old']*1e3), *['%.3f'%(d[v]*1e3) if v in d else '-' for v in vs])
for n in (1,2,3):
    res=[]
    for sub in itertools.combinations(vs,n):
        g=math.exp(sum(math.log(d['old']/min([d['old']]+[d[v] for v in sub if v in d])) for d in rows)/len(rows))
        res.append((g,sub))
    res.sort(reverse=True); print(n, ['%.4f %s'%x for x in res[:3]])
