"""Choose each task's program by its time INSIDE the model, among its best few measured alone.

The tuner times every candidate alone, with hot inputs. Inside a model a task reads what the
previous task left (in L2, L3 or memory) and shares the machine with it, and on this VM the
in-model times are 10-40% above the alone ones (BENCHMARKS.md, "The slow mode"). Programs that
are equally fast alone need not be equally fast there. This script:

1. takes the K best distinct programs of every task from RECORDS (error-free, this machine's
   hardware key; a task with fewer keeps repeating its last);
2. writes them as K record sets, rank0 (every task's best) .. rank{K-1};
3. runs ONE `tlm run MODEL --schedules rank0=..,rank1=.. --csv` (every set verified against the
   reference interpreter, all timed taking turns: per-task in-model medians in one run), ROUNDS
   times;
4. per task, keeps the rank whose in-model time (summed over the rounds) is lowest; a rank
   other than 0 must win by MARGIN (default 3%) to replace the best-alone program;
5. writes OUT/picked.jsonl (one record per task, the chosen program; `tlm compile --records`,
   `tlm run --schedules NAME=...` and bench/lose/interleave.py read it) and OUT/picks.csv.

    taskset -c 0-1 bench/.venv/bin/python bench/lose/inmodel_pick.py --threads 2 --top 3 \\
        --records bench/results/lose-zen5/final/resnet50.2t.jsonl \\
        --out bench/results/inmodel-pick-zen5/resnet50.2t bench/results/e2e/onnx/resnet50.onnx

Then compare end to end, interleaved with ONNX Runtime (the same programs alone-best vs picked):

    taskset -c 0-1 bench/.venv/bin/python bench/lose/interleave.py --threads 2 \\
        --variant best=RECORDS --variant picked=OUT/picked.jsonl --blocks 15 ... MODEL.onnx
"""
import argparse
import collections
import csv
import json
import os
import subprocess
import sys


def fnv1a(s):
    """support/hash.h's fnv1a (`tlm extract --json`'s key_fnv1a). Its offset basis is
    1469598103934665603, not FNV's 14695981039346656037: kept, checkpoints list tasks by it."""
    h = 1469598103934665603
    for b in s.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", help="ONNX file or zoo spec")
    ap.add_argument("--records", required=True, help="records (.jsonl) with several programs per task")
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--top", type=int, default=3, help="programs per task to try (K)")
    ap.add_argument("--rounds", type=int, default=2, help="`tlm run`s whose per-task times are summed")
    ap.add_argument("--repeat", type=int, default=20, help="`tlm run --repeat`")
    ap.add_argument("--margin", type=float, default=0.03,
                    help="a program other than the best alone must be this much faster in the model")
    ap.add_argument("--layout", default="auto")
    ap.add_argument("--tlm", default=os.path.join(os.path.dirname(__file__), "..", "..", "build", "tlm"))
    a = ap.parse_args()
    if a.top < 2:
        sys.exit("inmodel_pick.py: --top must be at least 2 (one program per task leaves nothing to pick)")
    if not os.path.isfile(a.records):
        sys.exit(f"inmodel_pick.py: no records file {a.records}")
    os.makedirs(a.out, exist_ok=True)

    # 1. the K best distinct programs per task, on the hardware most of the records have.
    recs = []
    with open(a.records) as f:
        for n, line in enumerate(f, 1):
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                print(f"inmodel_pick.py: {a.records}:{n}: not a record (skipped)", file=sys.stderr)
                continue
            if not r.get("error") and r.get("sentence") and not r["sentence"].startswith("halide:"):
                recs.append(r)
    if not recs:
        sys.exit(f"inmodel_pick.py: {a.records} has no error-free program records")
    hw = collections.Counter(r["hardware"] for r in recs).most_common(1)[0][0]
    by_task = collections.defaultdict(dict)
    for r in recs:
        if r["hardware"] != hw:
            continue
        s = by_task[r["task_key"]]
        if r["sentence"] not in s or r["median_s"] < s[r["sentence"]]["median_s"]:
            s[r["sentence"]] = r
    ranked = {k: sorted(v.values(), key=lambda r: r["median_s"])[: a.top] for k, v in by_task.items()}

    # 2. the K record sets.
    paths = []
    for j in range(a.top):
        p = os.path.join(a.out, f"rank{j}.jsonl")
        with open(p, "w") as f:
            for k, rs in ranked.items():
                f.write(json.dumps(rs[min(j, len(rs) - 1)]) + "\n")
        paths.append(p)

    # 3. the task map (task id -> key hash), then the runs.
    tmap = os.path.join(a.out, "tasks.json")
    subprocess.run([a.tlm, "extract", a.model, "--layout", a.layout, "--json", tmap],
                   check=True, stdout=subprocess.DEVNULL)
    tasks = json.load(open(tmap))["tasks"]
    key_of_hash = {fnv1a(k): k for k in ranked}
    in_model = collections.defaultdict(float)  # (task id, rank) -> ms summed over rounds
    e2e = collections.defaultdict(list)
    sets = ",".join(f"rank{j}={p}" for j, p in enumerate(paths))
    for rnd in range(a.rounds):
        out_csv = os.path.join(a.out, f"run{rnd}.csv")
        log = os.path.join(a.out, f"run{rnd}.log")
        cmd = [a.tlm, "--threads", str(a.threads), "run", a.model, "--layout", a.layout,
               "--repeat", str(a.repeat), "--schedules", sets, "--csv", out_csv]
        print(f"[{rnd + 1}/{a.rounds}] {' '.join(cmd)}", flush=True)
        with open(log, "w") as f:
            r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
        if r.returncode != 0:
            sys.exit(f"inmodel_pick.py: tlm run failed (exit {r.returncode}); see {log}")
        for row in csv.DictReader(open(out_csv)):
            if not row["schedules"].startswith("rank"):
                continue
            j = int(row["schedules"][4:])
            if row["task"].isdigit():
                # ms is the median per instance; the task's share of a run is that x instances
                in_model[(int(row["task"]), j)] += float(row["ms"]) * int(row["instances"])
            else:
                e2e[j].append((row["task"], float(row["ms"])))

    # 4. the picks.
    picked, rows = [], []
    moved = 0
    for t in tasks:
        tid, key = int(t["id"]), key_of_hash.get(t["key_fnv1a"])
        if key is None:
            rows.append([tid, t["kind"], "", "", "", "no records"])
            continue
        times = [in_model.get((tid, j)) for j in range(a.top)]
        best_j = 0
        for j in range(1, a.top):
            if times[j] is not None and times[0] is not None and \
                    times[j] < (1 - a.margin) * times[0] and times[j] < times[best_j]:
                best_j = j
        rs = ranked[key]
        choice = rs[min(best_j, len(rs) - 1)]
        moved += best_j != 0 and len(rs) > best_j
        picked.append(choice)
        alone = [r["median_s"] * 1e3 for r in rs]
        rows.append([tid, t["kind"], best_j, " ".join("%.4f" % (x / a.rounds) for x in times if x is not None),
                     " ".join("%.4f" % x for x in alone), ""])
    with open(os.path.join(a.out, "picked.jsonl"), "w") as f:
        for r in picked:
            f.write(json.dumps(r) + "\n")
    with open(os.path.join(a.out, "picks.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["task", "kind", "picked_rank", "in_model_task_ms_by_rank", "alone_ms_per_instance_by_rank", "note"])
        w.writerows(rows)
    for j in range(a.top):
        print(f"rank{j}: end to end {e2e[j]}")
    est = sum(in_model[(int(t['id']), int(r[2]) if r[2] != '' else 0)] for t, r in zip(tasks, rows)) / a.rounds
    r0 = sum(in_model[(int(t['id']), 0)] for t in tasks) / a.rounds
    print(f"{moved} of {len(tasks)} tasks take another program than their best alone; summed in-model "
          f"time of the picks {est:.3f} ms vs rank0 {r0:.3f} ms (the same runs; an estimate: in "
          f"rank j every task ran its j-th program, so a pick's neighbours differed)")
    print(f"wrote {os.path.join(a.out, 'picked.jsonl')}")


if __name__ == "__main__":
    main()
