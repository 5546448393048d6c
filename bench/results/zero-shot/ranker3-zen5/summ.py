import re,sys,collections,statistics
# summ.py FILE [REF]: per model (order of lines repeats every 3), ratio of each set to REF (default: base)
ref = sys.argv[2] if len(sys.argv)>2 else 'base'
models=['r50@192','r18@224','mnv2@192']
rows=collections.defaultdict(list)
for i,l in enumerate(open(sys.argv[1])):
    d=dict((k,float(v)) for k,v in re.findall(r'(\w+) ([\d.]+) ms',l))
    if not d: continue
    rows[models[i%3]].append(d)
for m,rs in rows.items():
    dm=statistics.median(r['default'] for r in rs)
    for mode,sel in (('fast',[r for r in rs if r['default']<=1.04*dm]),('slow',[r for r in rs if r['default']>1.04*dm])):
        if not sel: continue
        sets=[k for k in sel[0] if k not in ('default',)]
        print(m,mode,len(sel),' '.join('%s %.3f'%(k,statistics.median(r[k]/r[ref] for r in sel)) for k in sets))
