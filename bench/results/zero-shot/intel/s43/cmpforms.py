# form(sentence): the session-43 expert form of a blocked-conv program (old, lc<c>, lc_in, taps, taps_lc).
import json,sys,re,collections,math
def form(s):
    g=lambda pat: re.search(pat,s)
    r0=g(r'convnchwc\.r0 16 -> (\d+)'); lvl=int(g(r'compute_at \S+ -> (\d)').group(1))
    r1=g(r'convnchwc\.r1 (\d+) -> (\d+)'); r3=g(r'convnchwc\.r3 (\d+) -> (\d+)')
    c=int(r0.group(1)) if r0 else 16
    if lvl==3 and c<16:
        return 'lc_in' if r3 and r3.group(2)=='1' else 'lc%d'%c
    if lvl==2 and r1 and r1.group(1)!='1' and r1.group(2)=='1':
        return 'taps' if c==16 else 'taps_lc'
    return 'old'
