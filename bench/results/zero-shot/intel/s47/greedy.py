# greedy.py OUTDIR T: old / new time of each held-out model's greedy programs (gen.sh, meas.sh).
import json, math, sys
out, t = sys.argv[1], sys.argv[2]
print("| model | tasks | geomean old/new | sum old -> new (ms) | new faster >5% / slower >5% | identical |")
print("|---|---|---|---|---|---|")
for m in ["resnet50", "mobilenet_v2", "bert-base", "gpt2"]:
    try:
        old = [l.rstrip("\n") for l in open(f"{out}/{m}.greedy.old.txt")]
        new = [l.rstrip("\n") for l in open(f"{out}/{m}.greedy.new.txt")]
        rec = {}
        for l in open(f"{out}/{m}.greedy.t{t}.jsonl"):
            r = json.loads(l)
            rec[r["sentence"]] = r["median_s"] if not r["error"] else None
    except FileNotFoundError:
        continue
    logs, so, sn, fa, sl, same, n = [], 0.0, 0.0, 0, 0, 0, 0
    for a, b in zip(old, new):
        if rec.get(a) is None or rec.get(b) is None:
            continue
        n += 1
        same += a == b
        so += rec[a]; sn += rec[b]
        q = rec[a] / rec[b]
        logs.append(math.log(q))
        fa += q > 1.05; sl += q < 1 / 1.05
    print(f"| {m} | {n} | {math.exp(sum(logs)/len(logs)):.2f}x | {so*1e3:.1f} -> {sn*1e3:.1f} | {fa} / {sl} | {same} |")
