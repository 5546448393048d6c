#!/usr/bin/env python3
"""Two schedule sets of `tlm run --schedules ... --csv FILE` compared round by round.

    bench/lose/ab_sets.py A B FILE.csv...    e.g. views copies results/*.csv

Each FILE is one `tlm run` in which sets A and B took turns (same process, same minutes: the only
comparison this VM's fast and slow stretches allow). Per file: the end-to-end ratio A / B, the
sums of the per-task in-model times (instances x median), and the tasks whose totals differ by
more than --min-ms; then the median ratio over the files. Used for the reshape views' A/B
(`--schedules views=R.jsonl,copies=R.jsonl@copies`, BENCHMARKS.md); any two sets work.
"""
import argparse
import csv
import statistics
import sys


def read(path):
    """set -> {task id (int) or "e2e": ms (task rows: instances x median per instance)}"""
    sets = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            row = sets.setdefault(r["schedules"], {})
            if r["task"] == "e2e":
                row["e2e"] = float(r["ms"])
            else:
                row[int(r["task"])] = float(r["ms"]) * int(r["instances"])
    return sets


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("files", nargs="+")
    ap.add_argument("--min-ms", type=float, default=0.1, help="list tasks differing by more")
    args = ap.parse_args()
    ratios = []
    for path in args.files:
        sets = read(path)
        if args.a not in sets or args.b not in sets or "e2e" not in sets[args.a] or "e2e" not in sets[args.b]:
            print(f"{path}: no complete {args.a} and {args.b} rows (an unfinished run?)", file=sys.stderr)
            continue
        a, b = sets[args.a], sets[args.b]
        tasks = sorted(k for k in a if k != "e2e")
        sa, sb = sum(a[k] for k in tasks), sum(b.get(k, 0.0) for k in tasks)
        ratio = a["e2e"] / b["e2e"]
        ratios.append(ratio)
        diff = " ".join(f"task {k} {a[k] - b.get(k, 0.0):+.2f}" for k in tasks
                        if abs(a[k] - b.get(k, 0.0)) > args.min_ms)
        print(f"{path}: end to end {args.a} {a['e2e']:.1f} ms, {args.b} {b['e2e']:.1f} ms "
              f"({ratio:.3f}); task sums {sa:.2f} vs {sb:.2f} ms; {args.a} - {args.b} "
              f"over {args.min_ms} ms: {diff or 'none'}")
    if not ratios:
        sys.exit("no complete file")
    print(f"{len(ratios)} runs: {args.a} / {args.b} end to end, median {statistics.median(ratios):.3f} "
          f"(range {min(ratios):.3f}-{max(ratios):.3f})")


if __name__ == "__main__":
    main()
