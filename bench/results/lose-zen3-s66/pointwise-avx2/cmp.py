import json,sys,collections,math
recs, old_file, all_file = sys.argv[1], sys.argv[2], sys.argv[3]
old=set(l.strip() for l in open(old_file)); allp=[l.strip() for l in open(all_file)]
new=set(allp)-old
best=collections.defaultdict(lambda: {'old':(1e9,''),'new':(1e9,'')})
for l in open(recs):
    r=json.loads(l)
    if r.get('error') not in (None,0,'','none') and r.get('error_msg'): continue
    if r['median_s'] is None or r['median_s']<=0: continue
    s=r['sentence'].strip(); k=r['task_key']
    side='old' if s in old else ('new' if s in new else None)
    if side is None: continue
    if r['median_s']<best[k][side][0]: best[k][side]=(r['median_s'],s)
ratios=[]
for k,v in best.items():
    o,n=v['old'][0],v['new'][0]
    if o>=1e9 or n>=1e9: continue
    ratios.append(o/min(o,n))
    if n<o*0.98: print('%-40s old %.3f ms new %.3f ms  x%.3f'%(k.replace('\n',' ')[:40],o*1e3,n*1e3,o/n))
print('tasks',len(ratios),'improved>2%',sum(r>1.02 for r in ratios),'geomean best(all)/best(old) speedup %.4f'%math.exp(sum(map(math.log,ratios))/len(ratios)))
if len(sys.argv)>4:
    for k,v in best.items():
        o,n=v['old'][0],v['new'][0]
        if n<o*0.98:
            s=v['new'][1]; i=s.index(' isa=')
            print(k[:30].replace('\n',' '), 'NEW', s[s.index('pad',i):][:900]); 
            s=v['old'][1]; print('   OLD', s[s.index('pad',i):][:900] if 'pad' in s else s[-600:]); print()
