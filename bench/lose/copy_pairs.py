#!/usr/bin/env python3
"""Pairs of expert programs that differ only in whether a blocked convolution's padded input is
copied at root (Pack value 1) or read where it lies (0), and the per-task comparison of their
measured times (session 56: the root-copy experts of src/space/expert.cc, nchwc_targets).

  copy_pairs.py select EXPERTS.txt PAIRS.txt     from `tlm generate --task all --expert` output:
                                                 every chunked (block lanes < 16) program with the
                                                 copy at root whose twin without it is an expert
                                                 too, written as twin, program, twin, program...
  copy_pairs.py table PAIRS.txt RECORDS.jsonl    per task: the best of each side and the geomean
                                                 of the pairs' ratios (above 1: the copy faster)

Measure the pairs in one run, e.g. taskset -c 0 build/tlm --threads 1 measure PAIRS.txt --records
RECORDS.jsonl --repeats 10 (bench/results/lose-intel-s56/run.sh).
"""
import json
import math
import re
import sys


def select(experts, pairs):
    lines = [l.rstrip("\n") for l in open(experts) if l.strip()]
    have = set(lines)
    out = []
    for l in lines:
        m = re.search(r"(pack \S+_pad) -> 1 ", l)
        if not m or not re.search(r"tile \S+\.r0 16 -> (1|2|4|8) ", l):
            continue
        bare = l.replace(m.group(0), m.group(1) + " -> 0 ")
        if bare in have:
            out += [bare, l]
    with open(pairs, "w") as f:
        f.write("".join(s + "\n" for s in out))
    print(f"{len(out) // 2} pairs -> {pairs}")


def table(pairs, records):
    lines = [l.rstrip("\n") for l in open(pairs) if l.strip()]
    by = {}
    for l in open(records):
        r = json.loads(l)
        if not r.get("error"):
            by[r["sentence"]] = r
    tasks = {}
    for i in range(0, len(lines) - 1, 2):
        b, r = by.get(lines[i]), by.get(lines[i + 1])
        if not b or not r:
            continue
        t = tasks.setdefault(lines[i].split(" isa=")[0], ([], []))
        t[0].append(b["median_s"])
        t[1].append(r["median_s"])
    print("| task (input, weights) | pairs | best without copy ms | best with root copy ms | best / best | pairs' geomean |")
    print("|---|---|---|---|---|---|")
    for k, (bare, root) in tasks.items():
        st = re.search(r"strides (\d+) (\d+)", k)
        shape = " ".join(k.split()[:13]) + (f", stride {st.group(1)}" if st else "")
        g = math.exp(sum(math.log(x / y) for x, y in zip(bare, root)) / len(bare))
        print(f"| {shape} | {len(bare)} | {min(bare) * 1e3:.3f} | {min(root) * 1e3:.3f} | "
              f"{min(bare) / min(root):.3f} | {g:.3f} |")


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("select", "table"):
        sys.exit(__doc__)
    (select if sys.argv[1] == "select" else table)(sys.argv[2], sys.argv[3])
