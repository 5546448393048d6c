import json,re,sys
def best(path, tol=None):
    by={}
    for l in open(path):
        r=json.loads(l)
        if r.get('error') or 'cores=2' not in r['hardware']: continue
        by.setdefault(r['task_key'],[]).append((r['median_s'],r['sentence'],r['task_kind']))
    return by
def rows(s):
    m=re.search(r"pad (f\d+_convnchwc)\.d3 -> (\d+)",s)
    t=re.search(r"tile (f\d+_convnchwc)\.d3 (\d+) -> (\d+) (\d+) (\d+)",s)
    p=re.search(r"parallel \S+ -> (\d+)",s)
    if not t: return None
    e=int(t.group(2)); pad=int(m.group(2)) if m else 1
    pe=-(-e//pad)*pad
    s0=pe//(int(t.group(3))*int(t.group(4))*int(t.group(5)))
    return s0==1 and int(p.group(1))>=2
for path in (sys.argv[1:] if __name__ == "__main__" else []):
    by=best(path)
    print(path)
    order=sorted(by.items(), key=lambda kv: kv[1][0][2])
    n=0
    for k,v in by.items():
        v.sort(key=lambda x:x[0])
        f=v[0]; near=[x for x in v if x[0]<=f[0]*1.05]
        rs=[x for x in near if rows(x[1])]
        ch = f if rows(f[1]) or not rs else rs[0]
        shape=k.split('\n')[0]
        if rows(f[1]) is None: continue
        n+=1
        print(f"  {f[2]:24s} {shape:28s} fastest rows={rows(f[1])} chosen rows={rows(ch[1])} nvariants_rows={sum(1 for x in v if rows(x[1]))} ratio={ch[0]/f[0]:.3f}")
print("best row-split ratio per task (not chosen)")
for path in (sys.argv[1:] if __name__ == "__main__" else []):
    by=best(path)
    for k,v in by.items():
        v.sort(key=lambda x:x[0]); f=v[0]
        if rows(f[1]) is None or rows(f[1]): continue
        rs=[x for x in v if rows(x[1])]
        if rs: print(f"  {k.split(chr(10))[0]:28s} {k.split(chr(10))[1][:30]:30s} best rows ratio {rs[0][0]/f[0]:.3f}  fastest {f[0]*1e3:.3f} ms")
