"""Per task of blocked-convolution records: the best level-2 program (MLAS's loop order) against
the best other one, with each one's form (accumulator level, input blocks per chunk, register
block channel blocks x pixels, where the padded input is copied: pk0 nowhere, pk1 once per run,
pk4 per reduction chunk), then the geomean ratio. Usage: by_form.py RECORDS.jsonl..."""
import collections, json, math, re, sys

groups = collections.defaultdict(list)
for f in sys.argv[1:]:
    for line in open(f):
        r = json.loads(line)
        s = r['sentence']
        if r['error'] or 'ConvNchwc' not in s:
            continue
        level = re.search(r'compute_at f\d_convnchwc -> (\d)', s).group(1)
        r3 = re.search(r'convnchwc\.r3 (\d+) -> (\d+)', s)
        d1 = re.search(r'convnchwc\.d1 (\d+) -> (\d+) (\d+) (\d+)', s)
        d3 = re.search(r'convnchwc\.d3 (\d+) -> (\d+) (\d+) (\d+)', s)
        pk = re.search(r'pack.f0_convnchwc_pad -> (\d)', s)
        form = 'lv%s r3=%s %sx%s pk%s' % (level, r3.group(2) if r3 else '-', d3.group(4) if d3 else '-',
                                         d1.group(4) if d1 else '-', pk.group(1) if pk else '-')
        lines = r['task_key'].split('\n')
        groups[lines[0] + ' ' + lines[1][:24]].append((r['median_s'] * 1e3, form))
ratios, won = [], collections.Counter()
for task, progs in groups.items():
    old = sorted(p for p in progs if not p[1].startswith('lv2'))
    new = sorted(p for p in progs if p[1].startswith('lv2'))
    if not old or not new:
        continue
    ratios.append(old[0][0] / new[0][0])
    won[new[0][1].split()[2]] += 1
    print('%.3f  old %.3f %-22s new %.3f %-22s %s' % (ratios[-1], *old[0], *new[0], task[:50]))
print('geomean old/new %.3f over %d tasks; the best level-2 block: %s'
      % (math.exp(sum(map(math.log, ratios)) / len(ratios)), len(ratios), dict(won)))
