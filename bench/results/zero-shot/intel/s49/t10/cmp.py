# cmp.py [DIR=here]: TLM-10xg with the shipped model (old.*) and the candidate (new.*), per held-out
# model: the sum and geomean of each task's best program (hot, alone), and the same programs'
# times in the two runs (the machine's drift between them: both runs measure mostly the same
# zero-shot candidates first).
import glob, gzip, json, math, os, statistics, sys

d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
for m in ["resnet50", "mobilenet_v2", "bert-base", "gpt2"]:
    t, best = {}, {}
    for c in ["old", "new"]:
        t[c], best[c] = {}, {}
        for l in gzip.open(f"{d}/{c}.{m}.t2.tlm10.jsonl.gz", "rt"):
            r = json.loads(l)
            if r.get("error") or not r.get("median_s") or r["strategy"] != "tlm":
                continue
            t[c][r["sentence"]] = r["median_s"]
            k = r["task_key"]
            if r["median_s"] < best[c].get(k, (1e9,))[0]:
                best[c][k] = (r["median_s"], r["sentence"])
    ks = [k for k in best["old"] if k in best["new"]]
    so = sum(best["old"][k][0] for k in ks) * 1e3
    sn = sum(best["new"][k][0] for k in ks) * 1e3
    g = math.exp(sum(math.log(best["old"][k][0] / best["new"][k][0]) for k in ks) / len(ks))
    common = set(t["old"]) & set(t["new"])
    drift = statistics.median(t["new"][s] / t["old"][s] for s in common)
    same = sum(best["old"][k][1] == best["new"][k][1] for k in ks)
    print(f"| {m} | {len(ks)} | {so:.2f} -> {sn:.2f} | {g:.3f} | {len(common)} of {len(t['old'])} |"
          f" {drift:.3f} | {same} |")
