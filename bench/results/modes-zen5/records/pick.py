import json,sys
import os; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from analyze import rows
src,tol,out=sys.argv[1],float(sys.argv[2]),sys.argv[3]
by={}
for l in open(src):
    r=json.loads(l)
    if r.get('error') or 'cores=2' not in r['hardware']: continue
    by.setdefault(r['task_key'],[]).append(r)
n=0
with open(out,'w') as f:
    for k,v in by.items():
        v.sort(key=lambda r:r['median_s']); b=v[0]
        if rows(b['sentence']) is False:
            for r in v:
                if r['median_s']>b['median_s']*(1+tol): break
                if rows(r['sentence']): b=r; n+=1; break
        f.write(json.dumps(b)+'\n')
print(n,'switched')
