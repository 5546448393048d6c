# Session 43: best new-form vs best old-form expert per task (same-sitting records).
# python3 cmp.py RECORDS.jsonl... ; the forms are named by form() (lc<c>: block lanes in chunks of c).
import json,sys,os,re,collections,math
sys.path.insert(0,os.path.dirname(os.path.abspath(__file__)))
from cmpforms import form
by=collections.defaultdict(lambda: collections.defaultdict(list))
for f in sys.argv[1:]:
    for l in open(f):
        r=json.loads(l)
        if r.get('error') or 'ConvNchwc' not in r['sentence']: continue
        th=re.search(r'cores=(\d)',r['hardware']).group(1)
        k=(th, r['workload'].split('@')[0], r['task_key'])
        by[k][form(r['sentence'])].append(r['median_s'])
for th in '21':
    rat=[]; wins=collections.Counter(); tot=0
    for k,d in by.items():
        if k[0]!=th or 'old' not in d: continue
        old=min(d['old']); new=min(min(v) for f,v in d.items() if f!='old')
        bf=min((min(v),f) for f,v in d.items())[1]
        wins[bf]+=1; tot+=1; rat.append(old/new)
        taps=',3,3,16,16]' in k[2] or ',7,7,16,16]' in k[2]
        print(th, k[1][:18], 'taps' if taps else '1x1 ', '%.3f'%(old*1e3), 'best new/old %.3f'%(old/new), bf)
    for tp in (True,False):
        sel=[(k,d) for k,d in by.items() if k[0]==th and 'old' in d and ((',3,3,16,16]' in k[2])==tp)]
        if not sel: continue
        gain=[min(d['old'])/min(min(v) for v in d.values()) for k,d in sel]
        per={}
        for f in ('lc2','lc4','lc8','lc_in','taps','taps_lc'):
            g=[min(d['old'])/min(min(d['old']),min(d[f])) for k,d in sel if f in d]
            if g: per[f]='%d:%.3f'%(len(g),math.exp(sum(map(math.log,g))/len(g)))
        print('  taps' if tp else '  1x1', len(sel),'gain of adding all %.3f'%math.exp(sum(map(math.log,gain))/len(gain)), 'max %.3f'%max(gain), per)
    print('threads',th,'tasks',tot,'geomean old/new %.3f'%math.exp(sum(map(math.log,rat))/len(rat)), 'new faster on', sum(x>1 for x in rat), dict(wins))
