import json,sys,collections,re
sys.path.insert(0,__import__('os').path.dirname(__file__))
from cmpforms import form
th=sys.argv[1]; files=sys.argv[2:]
by=collections.defaultdict(list)
for f in files:
    for l in open(f):
        r=json.loads(l)
        if r.get('error') or 'cores=%s'%th not in r['hardware']: continue
        by[(r['workload'],r['task_key'])].append((r['median_s'],form(r['sentence']),r['sentence'],r['workload']))
for k,v in by.items():
    v.sort()
    old=[x for x in v if x[1]=='old'][:2]; new=[x for x in v if x[1]!='old'][:2]
    for x in old+new: print(x[3]+'\t'+x[2])
