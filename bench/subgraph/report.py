#!/usr/bin/python3
"""Subgraph benchmark report: records of bench/subgraph/run.sh -> curves, tables and plots.

For every strategy with a records file bench/results/subgraph/<strategy>.jsonl and every task of
tasks.txt: the best latency after the first k measurements of that strategy (k = 1, 10, 64, 200;
failed candidates count as measurements that found nothing). A Halide autoscheduler makes one
program per task whatever the budget, so its value is the same at every k. Re-measurements
("<strategy>/remeasure" records) are not part of the curves.

Normalized performance of a strategy on a task = (best latency any strategy reached) / (its
latency); the summary is the geometric mean over tasks (1.0 = best everywhere), as in the
paper's figures.

Writes bench/results/subgraph/{curves.csv, summary.csv, summary.md, curves.png, summary.png}.
Records are mapped to tasks by order: run.sh tunes the tasks of tasks.txt one after another, so the
n-th distinct task key of a file is the n-th task; its workload must match tasks.txt.

    bench/subgraph/report.py [--tasks FILE] [--out DIR] [--tvm CSV]

--tvm adds TVM MetaSchedule (bench/tvm/tune.py's subgraph_<machine>.csv, same tasks by label, same
machine) as the strategy "metaschedule": its best after k from that CSV (tuned by MetaSchedule,
timed by TVM's own runner; the whole-subgraph "final" builds are in the CSV, not in the curves).

--tasks (default: env TASKS, else bench/subgraph/tasks.txt) and --out (default: env OUT, else
bench/results/subgraph; records are read from and the report written to it): the same two knobs
as run.sh, e.g. TASKS=bench/subgraph/tasks_train.txt OUT=bench/results/subgraph-train for both.
"""
import argparse
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from benchlib import records, seconds  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "..", "results", "subgraph")  # --out / OUT replace it
TASKS = os.path.join(HERE, "tasks.txt")  # --tasks / TASKS replace it
KS = [1, 10, 64, 200]
ORDER = ["random", "evolutionary", "expert-evolutionary", "tlm", "tlm-evolutionary",
         "halide-mullapudi2016", "halide-li2018", "halide-adams2019"]


def read_tasks():
    tasks = []
    for line in open(TASKS):
        if line.strip() and not line.startswith("#"):
            label, spec, tid = line.split()
            tasks.append((label, spec, int(tid)))
    return tasks


def read_records(path):
    """{task index: [(latency_s or None) in measurement order]} and {index: (kind, flops?)}."""
    keys, series, kinds = [], {}, {}
    for _, r in records(path):
        if r["strategy"].endswith("/remeasure"):
            continue
        if r["task_key"] not in keys:
            keys.append(r["task_key"])
        i = keys.index(r["task_key"])
        series.setdefault(i, []).append(r["median_s"] if not r["error"] else None)
        kinds[i] = (r["task_kind"], r["workload"])
    return series, kinds


def read_tvm(path, tasks):
    """{task index: {k: best seconds after k}} from bench/tvm/tune.py's CSV (rows label, kind, k,
    best_ms, ...; the "final" rows are left out)."""
    import csv

    index = {label: i for i, (label, _, _) in enumerate(tasks)}
    out = {}
    for r in csv.DictReader(open(path)):
        if r["k"] == "final" or not r["best_ms"]:
            continue
        if r["label"] not in index:
            sys.exit(f"{path}: subgraph '{r['label']}' is not in {os.path.basename(TASKS)}")
        out.setdefault(index[r["label"]], {})[int(r["k"])] = float(r["best_ms"]) * 1e-3
    return out


def throughput(strategy):
    """(valid measurements, seconds of measuring) summed over the tune runs of a strategy's run.sh
    log: RESULTS/STRATEGY.log, or RESULTS/logs/STRATEGY.log (where the machine READMEs keep it)."""
    valid = secs = 0
    for log in (os.path.join(RESULTS, strategy + ".log"),
                os.path.join(RESULTS, "logs", strategy + ".log")):
        if os.path.exists(log):
            for m in re.finditer(r"\((\d+) valid\) in (\S+) of measuring", open(log).read()):
                valid += int(m.group(1))
                secs += seconds(m.group(2))
            break
    return valid, secs


def best_after(lat, k):
    vals = [x for x in lat[:k] if x is not None]
    return min(vals) if vals else None


def main():
    global RESULTS, TASKS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", default=os.environ.get("TASKS") or TASKS,
                    help="task list (default: env TASKS, else bench/subgraph/tasks.txt)")
    ap.add_argument("--out", default=os.environ.get("OUT") or RESULTS,
                    help="records and report directory (default: env OUT, else "
                    "bench/results/subgraph)")
    ap.add_argument("--tvm", help="TVM MetaSchedule's subgraph_<machine>.csv (bench/tvm/tune.py)")
    a = ap.parse_args()
    TASKS, RESULTS = os.path.abspath(a.tasks), os.path.abspath(a.out)
    tasks = read_tasks()
    strategies = [s for s in ORDER if os.path.exists(os.path.join(RESULTS, s + ".jsonl"))]
    if not strategies:
        sys.exit(f"no records in {RESULTS}")
    tvm = read_tvm(a.tvm, tasks) if a.tvm else None  # task index -> {k: seconds}
    data = {}  # strategy -> task index -> latencies
    for s in strategies:
        series, kinds = read_records(os.path.join(RESULTS, s + ".jsonl"))
        for i, (kind, workload) in kinds.items():
            if i >= len(tasks) or workload != tasks[i][1]:
                sys.exit(f"{s}.jsonl: task #{i + 1} is from {workload}, {os.path.basename(TASKS)} says "
                         f"{tasks[i][1] if i < len(tasks) else 'nothing'}")
        data[s] = series
    auto = {s: s.startswith("halide-") for s in strategies}
    if tvm is not None:
        strategies.append("metaschedule")
        auto["metaschedule"] = False
        data["metaschedule"] = {}  # no measurement series: value() reads the CSV's k rows

    def value(s, i, k):
        if s == "metaschedule":
            return tvm.get(i, {}).get(k)
        lat = data[s].get(i)
        if not lat:
            return None
        if auto[s]:
            return best_after(lat, len(lat))
        return best_after(lat, k) if len(lat) >= k else None

    with open(os.path.join(RESULTS, "curves.csv"), "w") as f:
        f.write("strategy,task,k,best_ms\n")
        for s in strategies:
            for i, lat in sorted(data[s].items()):
                for k in range(1, len(lat) + 1):
                    b = best_after(lat, k)
                    f.write(f"{s},{tasks[i][0]},{k},{'' if b is None else f'{b * 1e3:.5f}'}\n")

    # Best over every strategy and budget: the normalization of each task.
    best = {}
    for i in range(len(tasks)):
        vals = [v for s in strategies for k in KS for v in [value(s, i, k)] if v is not None]
        if vals:
            best[i] = min(vals)
    cols = [(s, k) for s in strategies for k in (KS if not auto[s] else [0])]
    head = ["task"] + [f"{s}@{k}" if k else s for s, k in cols]
    rows = []
    for i, (label, spec, tid) in enumerate(tasks):
        row = [label]
        for s, k in cols:
            v = value(s, i, k if k else 1)
            row.append("" if v is None else f"{v * 1e3:.4g}")
        rows.append(row)
    geo = []
    for s, k in cols:
        logs = [math.log(best[i] / v) for i in best for v in [value(s, i, k if k else 1)]
                if v is not None]
        geo.append((len(logs), math.exp(sum(logs) / len(logs)) if logs else None))
    with open(os.path.join(RESULTS, "summary.csv"), "w") as f:
        f.write(",".join(head) + "\n")
        for row in rows:
            f.write(",".join(row) + "\n")
    md = ["Best latency (ms) after k measurements; autoschedulers: their one program.", "",
          "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    md += ["| " + " | ".join(r) + " |" for r in rows]
    md.append("| **geomean normalized perf.** | " +
              " | ".join("" if g is None else f"**{g:.3f}** ({n})" for n, g in geo) + " |")
    # Where evolutionary at 200 stands against each other strategy, task by task.
    if "evolutionary" in strategies:
        md += ["", "Evolutionary at its largest k vs each strategy at 200 (or its one program):", ""]
        for s in strategies:
            if s == "evolutionary":
                continue
            wins = losses = 0
            ratios = []
            for i in range(len(tasks)):
                e = value("evolutionary", i, 200) or value("evolutionary", i, 64)
                o = value(s, i, 200 if not auto[s] else 1)
                if e is None or o is None:
                    continue
                ratios.append(o / e)
                wins += e < o
                losses += e >= o
            if ratios:
                g = math.exp(sum(map(math.log, ratios)) / len(ratios))
                md.append(f"- vs {s}: faster on {wins} of {wins + losses} tasks, geomean speedup "
                          f"{g:.2f}x")
    md += ["", "Measurement throughput (from the tune logs: valid measurements per minute of "
           "measuring, one core per strategy):", ""]
    for s in strategies:
        valid, secs = throughput(s)
        if secs:
            md.append(f"- {s}: {valid} valid in {secs / 60:.1f} min = {valid * 60 / secs:.1f}/min")
    open(os.path.join(RESULTS, "summary.md"), "w").write("\n".join(md) + "\n")
    print("\n".join(md))

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing (bench/setup.sh installs it): no plots", file=sys.stderr)
        return
    n = len(tasks)
    cols_n = 6
    fig, axes = plt.subplots((n + cols_n - 1) // cols_n, cols_n, figsize=(18, 3 * ((n + 5) // 6)))
    for i, ax in enumerate(axes.flat):
        if i >= n:
            ax.axis("off")
            continue
        for c, s in enumerate(strategies):
            lat = data[s].get(i)
            if not lat:
                continue
            if auto[s]:
                v = best_after(lat, len(lat))
                if v:
                    ax.axhline(v * 1e3, ls="--", lw=1, color=f"C{c}", label=s)
            else:
                ys = [best_after(lat, k) for k in range(1, len(lat) + 1)]
                ax.plot(range(1, len(lat) + 1), [y * 1e3 if y else float("nan") for y in ys],
                        color=f"C{c}", label=s)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(tasks[i][0], fontsize=9)
        ax.tick_params(labelsize=7)
    axes.flat[0].legend(fontsize=6)
    fig.supxlabel("measurements k")
    fig.supylabel("best latency (ms)")
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, "curves.png"), dpi=80)
    fig, ax = plt.subplots(figsize=(7, 4))
    for c, s in enumerate(strategies):
        if auto[s]:
            g = [geo[j][1] for j, (ss, k) in enumerate(cols) if ss == s][0]
            if g:
                ax.axhline(g, ls="--", color=f"C{c}", label=s)
        else:
            ys = [geo[j][1] for j, (ss, k) in enumerate(cols) if ss == s]
            ax.plot(KS, ys, marker="o", color=f"C{c}", label=s)
    ax.set_xscale("log")
    ax.set_xlabel("measurements per task (k)")
    ax.set_ylabel("geomean normalized performance")
    ax.set_title(f"subgraph benchmark: {len(tasks)} tasks")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, "summary.png"), dpi=100)


if __name__ == "__main__":
    main()
