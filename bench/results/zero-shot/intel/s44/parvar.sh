#!/bin/bash
# Session 44 (after CI): the tap-split lane-chunk experts of the training 3x3/7x7 blocked layers
# at two threads, each as written and with its parallel choice moved to the next loop out
# (the channel blocks x rows instead of the blocks alone, where the expert wrote 1), measured in
# one run: does ResNet-50 task 19's finding hold on the training layers? Variants only, no expert.
# Run from the repository root: bench/results/zero-shot/intel/s44/parvar.sh OUT.jsonl
cd /work/main
out=$1
K='w0 [0-9]+ [0-9]+ ([2-9]|[0-9]{2,}) [0-9]+ 16 16 w1 .*ConvNchwc .* group 1 |w0 [0-9]+ [0-9]+ [0-9]+ ([2-9]|[0-9]{2,}) 16 16 w1 .*ConvNchwc .* group 1 '
for w in resnet50:image=192@nchw16c resnet18:image=224@nchw16c resnet50:image=128@nchw16c resnet18:image=160@nchw16c googlenet:image=224@nchw16c; do
  taskset -c 0-1 ./build/tlm --threads 2 generate $w --layout nchw --task all --expert 2>/dev/null | grep -E -- "$K" | python3 -c "
import sys, re
for s in sys.stdin:
    s = s.strip()
    r = dict((m.group(1), (int(m.group(2)), int(m.group(3)))) for m in re.finditer(r'tile f\d+_convnchwc\.(r\d) (\d+) -> (\d+)', s))
    if not ('r0' in r and r['r0'][1] < r['r0'][0]): continue
    split = [d for d in ('r1', 'r2') if d in r and r[d][0] > 1 and r[d][1] == 1]
    if len(split) != 1: continue
    print(s)
    m = re.search(r'(parallel \S+ -> )(\d)', s)
    if m and m.group(2) == '1': print(s[:m.start()] + m.group(1) + '2' + s[m.end():])
" > /tmp/parvar.txt
  echo "$w: $(wc -l < /tmp/parvar.txt) programs"
  taskset -c 0-1 ./build/tlm --threads 2 measure /tmp/parvar.txt --records $out --workload $w --strategy expert-variant --quiet | tail -1
done
echo PARVAR_DONE
