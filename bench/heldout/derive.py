#!/usr/bin/python3
"""Cut a shorter tuning run out of a longer one's records: evolutionary at 100 per task
(100xg measurements for a model of g tasks, i.e. 100xg/g = 100 per task on average) out of the
evolutionary run at 200 per task, so that the shorter run costs no extra measurement.

    derive.py --src M.t1.evolutionary200.jsonl --dst M.t1.evolutionary100.jsonl --trials 100
              [--log M.t1.evolutionary200.log] [--rule prefix|per-task] [--strategy evolutionary]

What the records say (checked with a tiny `tlm tune`): search measurements carry the strategy
name ("evolutionary"); the tuner's end-of-run re-measurements of each task's best three programs
carry "evolutionary/remeasure" (src/tune/tuner.cc kRemeasureSuffix). Re-measurements are left out
of the count and of the derived file: a run stopped at 100 per task would have re-measured its
own best programs, not those of the longer run. The derived set's best program per task is
therefore chosen on the search measurements (5 timing samples), the source's on its
re-measurements (15); `tlm run` re-times both anyway.

Rules (per hardware key; errors count as measurements, as in the tuner's budget):
  prefix    (default) the first TRIALS x g search measurements of the file, in file order. The
            task scheduler (src/tune/scheduler.h) never looks at the total budget (round-robin
            warm-up of min(batch, trials) per task, then gradients), so a run with TRIALS per task
            measures exactly these, up to timing noise: this IS evolutionary at TRIALS x g, and
            like a real run it gives some tasks more than TRIALS and others fewer.
  per-task  each task's first TRIALS search measurements (file order): TRIALS per task exactly,
            which no run of the tuner does (tasks the longer run gave fewer keep all of theirs).

g is the model's task count from the source run's log ("model ...: N tasks"), else the number of
distinct tasks in the records. Writes DST (the kept lines, verbatim) and DST.meta.json (the rule,
g, the counts, and the search's span from the records' timestamps, for the tuning-time column).
Exit 1 when the source has too few search measurements (prefix) or is not finished (per-task:
SRC.done missing); DST is then not written (an older one and its .meta.json are removed).
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from benchlib import records  # noqa: E402

GAP_S = 600  # a pause longer than this between two records is a stop and resume, not tuning


def span_s(stamps_ms):
    """Seconds covered by these record timestamps, pauses (> GAP_S) left out."""
    total = 0.0
    for a, b in zip(stamps_ms, stamps_ms[1:]):
        d = (b - a) / 1e3
        if 0 <= d <= GAP_S:
            total += d
    return total


def task_count(log):
    n = None
    if log and os.path.exists(log):
        for line in open(log, errors="replace"):
            m = re.match(r"model (.*): (\d+) tasks, (\d+) instances", line)
            if m:
                n = int(m.group(2))
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", required=True)
    ap.add_argument("--dst", required=True)
    ap.add_argument("--trials", type=int, required=True, help="per task")
    ap.add_argument("--log", help="the source run's tune log (for the model's task count)")
    ap.add_argument("--rule", choices=["prefix", "per-task"], default="prefix")
    ap.add_argument("--strategy", default="evolutionary")
    a = ap.parse_args()

    def give_up(why):
        for stale in (a.dst, a.dst + ".meta.json"):
            if os.path.exists(stale):
                os.remove(stale)
        sys.exit(f"{a.dst}: not derived: {why}")

    lines = []  # (raw line, record) of the search measurements, file order
    remeasured = other = 0
    for raw, r in records(a.src):
        if r.get("strategy") == a.strategy:
            lines.append((raw if raw.endswith("\n") else raw + "\n", r))
        elif r.get("strategy") == a.strategy + "/remeasure":
            remeasured += 1
        else:
            other += 1
    by_hw = {}
    for raw, r in lines:
        by_hw.setdefault(r.get("hardware", ""), []).append((raw, r))
    g = task_count(a.log)
    if g is None:
        g = len({r["task_key"] for _, r in lines})
        g_from = "distinct tasks of the records"
    else:
        g_from = "the source run's log"
    if a.rule == "per-task" and not os.path.exists(a.src + ".done"):
        give_up(f"{a.src} is not finished ({a.src}.done missing)")
    kept, meta_hw = [], {}
    for hw, rs in by_hw.items():
        seen = set()  # (task, sentence): the tuner's budget counts distinct sentences
        per_task = {}
        keep = []
        budget = a.trials * g
        for raw, r in rs:
            key = (r["task_key"], r.get("sentence", ""))
            if key not in seen:
                if a.rule == "prefix" and len(seen) >= budget:
                    break
                if a.rule == "per-task" and per_task.get(r["task_key"], 0) >= a.trials:
                    continue
                seen.add(key)
                per_task[r["task_key"]] = per_task.get(r["task_key"], 0) + 1
            keep.append((raw, r))
        if a.rule == "prefix" and len(seen) < budget:
            give_up(f"{hw}: {len(seen)} search measurements, {budget} ({a.trials} x {g} tasks) "
                    "needed: let the source run go on")
        kept += keep
        stamps_all = [r.get("timestamp_ms", 0) for _, r in rs]
        stamps = [r.get("timestamp_ms", 0) for _, r in keep]
        counts = sorted(per_task.values())
        meta_hw[hw] = {
            "measurements": len(seen), "tasks_measured": len(per_task),
            "per_task_min": counts[0] if counts else 0, "per_task_max": counts[-1] if counts else 0,
            "search_span_s": round(span_s(stamps), 1),
            "source_measurements": len({(r["task_key"], r.get("sentence", "")) for _, r in rs}),
            "source_search_span_s": round(span_s(stamps_all), 1),
        }
    if not kept:
        give_up(f"no '{a.strategy}' records in {a.src}")
    tmp = a.dst + ".tmp"
    with open(tmp, "w") as f:
        f.writelines(raw for raw, _ in kept)
    os.replace(tmp, a.dst)
    meta = {"source": os.path.basename(a.src), "rule": a.rule, "strategy": a.strategy,
            "trials_per_task": a.trials, "tasks": g, "tasks_from": g_from,
            "left_out_remeasurements": remeasured, "left_out_other": other, "hardware": meta_hw}
    with open(a.dst + ".meta.json", "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    for hw, m in meta_hw.items():
        print(f"   {os.path.basename(a.dst)}: {m['measurements']} of {m['source_measurements']} "
              f"search measurements of {os.path.basename(a.src)} ({a.rule}: {a.trials} x {g} tasks; "
              f"{m['per_task_min']}-{m['per_task_max']} per task; {remeasured} re-measurements "
              f"left out) on {hw}")


if __name__ == "__main__":
    main()
