#!/bin/bash
# pair.sh A B T : the tasks whose picks differ between two pick sets (runs/hz/A.<model>.jsonl vs
# B), both programs measured in one run, alternating, R rounds (default 3) at T threads, into
# runs/s44/pair.<A>.<B>.t<T>.jsonl (one strategy label per set).
cd /work/main
a=$1; b=$2; t=$3
cpus=$( ((t == 1)) && echo 0 || echo "0-$((t - 1))")
out=runs/s44/pair.$a.$b.t$t.jsonl
rm -f $out
for m in ${MODELS:-resnet50 mobilenet_v2 bert-base gpt2}; do
  onnx=bench/results/e2e/onnx/$m.onnx
  python3 - $a $b $m > /tmp/pair.$m.txt <<'PY'
import json, sys
a, b, m = sys.argv[1:]
def load(n):
    return {json.loads(l)['task_key']: json.loads(l)['sentence'] for l in open(f'runs/hz/{n}.{m}.jsonl')}
A, B = load(a), load(b)
for k in B:
    if k in A and A[k] != B[k]:
        print('A', A[k]); print('B', B[k])
PY
  for r in $(seq ${R:-3}); do
    for s in A B; do
      grep "^$s " /tmp/pair.$m.txt | cut -c3- > /tmp/pair.$s.txt
      [ -s /tmp/pair.$s.txt ] || continue
      taskset -c $cpus build/tlm --threads $t measure /tmp/pair.$s.txt --records $out.tmp --workload $onnx --strategy $s$r --repeats 5 --quiet > /dev/null
      cat $out.tmp >> $out; rm -f $out.tmp
    done
  done
  echo "$(date +%H:%M:%S) $m"
done
python3 - $out <<'PY'
import json, sys, collections, math, statistics
d = collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r['error']: print('ERROR', r['error_msg'][:200]); continue
    d[(r['workload'].split('/')[-1], r['task_key'])][r['strategy'][0]].append(r['median_s'])
tot = collections.defaultdict(lambda: [0, 0])
for (m, k), v in d.items():
    a, b = statistics.median(v['A']), statistics.median(v['B'])
    print(f'{m:18s} A {a*1e3:8.3f} B {b*1e3:8.3f} A/B {a/b:.3f}  {k.splitlines()[-3][:60]}')
    tot[m][0] += a; tot[m][1] += b
for m, (a, b) in tot.items(): print(f'{m}: changed tasks sum A {a*1e3:.3f} ms, B {b*1e3:.3f} ms (A/B {a/b:.3f}, unweighted by task count)')
PY
