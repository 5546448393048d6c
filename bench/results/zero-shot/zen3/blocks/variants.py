# round 2: blocks around MLAS's 4x3, S1 width and rows varied: python3 variants2.py IN OUT
import re,sys
src=open(sys.argv[1]).readline().strip()
w=int(re.search(r'tile f[01]_convnchwc\.d1 (\d+) ->',src).group(1))
h=int(re.search(r'tile f[01]_convnchwc\.d2 (\d+) ->',src).group(1))
cb=int(re.search(r'tile f[01]_convnchwc\.d3 (\d+) ->',src).group(1))
def setv(s,var,val):
    return re.sub(r'(tile f[01]_convnchwc\.%s \d+ -> )[\d ]+?(?= pad| tile| order)'%var, r'\g<1>'+val, s)
def setca(s,ca): return re.sub(r'(compute_at f[01]_convnchwc -> )\d',r'\g<1>%d'%ca,s)
out=[]
def add(name,d1=None,d2=None,d3=None,ca=1):
    s=src
    if d1: s=setv(s,'d1',d1)
    if d2: s=setv(s,'d2',d2)
    if d3: s=setv(s,'d3',d3)
    s=setca(s,ca); out.append((name,s))
for ca in (1,3):
    for a,r in ((4,3),(2,6),(4,2),(8,1)):
        if w%r or cb%a: continue
        nb=w//r
        for s2 in sorted({1,nb}):
            if nb%s2: continue
            for rows in (1,2):
                if h%rows: continue
                for c2 in (1,2):
                    if cb%(a*c2): continue
                    add('a%d r%d s2w%d rows%d c2%d ca%d'%(a,r,s2,rows,c2,ca), d1='1 %d %d'%(s2,r), d2='1 %d 1'%rows, d3='1 %d %d'%(c2,a), ca=ca)
with open(sys.argv[2],'w') as f:
    for n,s in out: f.write(s+'\n')
with open(sys.argv[2]+'.names','w') as f:
    for n,s in out: f.write(n+'\n')
print(len(out))
