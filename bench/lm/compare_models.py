#!/usr/bin/python3
"""Summary of bench/lm/compare_models.sh: per checkpoint, over the tasks every checkpoint has
measured, the geometric mean of (first checkpoint's latency / this one's) for its most likely
program (the first it writes: what `--trials-per-task 0` compiles), for the best and for the
median of its programs (> 1: faster than the first checkpoint), and how many tasks it wins;
then the per-task latencies.

    /usr/bin/python3 bench/lm/compare_models.py OUT_DIR CKPT...      -> OUT_DIR/summary.md"""
import json
import math
import os
import statistics
import sys


def load(path):
    by_task = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                print(f"{path}:{n}: skipped (not JSON)")
                continue
            if r.get("strategy") != "tlm":
                continue
            lat = r["median_s"] if r["median_s"] > 0 else math.inf
            by_task.setdefault((r["task_kind"], r["task_key"]), []).append(lat)
    return by_task


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, ckpts = sys.argv[1], sys.argv[2:]
    names = [os.path.basename(c).removesuffix(".ckpt") for c in ckpts]
    runs = {n: load(os.path.join(out, n + ".jsonl")) for n in names}
    common = set.intersection(*(set(r) for r in runs.values()))
    if not common:
        sys.exit("no task measured by every checkpoint yet")
    ref = names[0]
    lines = [f"{len(common)} held-out tasks measured by every checkpoint; ratios are {ref}'s "
             "latency / this checkpoint's (> 1: faster), geometric mean over tasks", "",
             "| checkpoint | programs per task (median) | most likely program | best of K | median of K | tasks where best is faster |",
             "|---|---|---|---|---|---|"]
    for n in names:
        first, best, med, wins, counts = [], [], [], 0, []
        for t in sorted(common):
            a, b = runs[ref][t], runs[n][t]
            counts.append(len(b))
            best.append(math.log(min(a) / min(b)))
            if math.isfinite(a[0]) and math.isfinite(b[0]):
                first.append(math.log(a[0] / b[0]))
            ma, mb = statistics.median(a), statistics.median(b)
            if math.isfinite(ma) and math.isfinite(mb):
                med.append(math.log(ma / mb))
            wins += min(b) < min(a)
        lines.append(f"| {n} | {statistics.median(counts):.0f} | {math.exp(statistics.mean(first)):.3f} | "
                     f"{math.exp(statistics.mean(best)):.3f} | "
                     f"{math.exp(statistics.mean(med)) if med else float('nan'):.3f} | {wins} of {len(common)} |")
    lines += ["", "Per task, ms (most likely program / best of K):", "",
              "| task | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for t in sorted(common):
        cells = [f"{runs[n][t][0] * 1e3:.3f} / {min(runs[n][t]) * 1e3:.3f}" for n in names]
        lines.append(f"| {t[0]} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
