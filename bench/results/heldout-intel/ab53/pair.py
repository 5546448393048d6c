#!/usr/bin/env python3
"""pair.py A B LOG...: per `tlm run` log, set A's end-to-end turn medians over set B's in the same
turn, and their median (paired per turn, so the machine's drift between turns cancels)."""
import statistics
import sys

a, b = sys.argv[1], sys.argv[2]
for path in sys.argv[3:]:
    for line in open(path):
        if line.startswith("turns (end-to-end"):
            turns = {}
            for part in line.split(":", 1)[1].split(";"):
                words = part.split()
                turns[words[0]] = [float(x) for x in words[1:]]
            r = [x / y for x, y in zip(turns[a], turns[b])]
            print(path.split("/")[-1], f"{a}/{b} median {statistics.median(r):.3f}  per turn",
                  " ".join(f"{x:.2f}" for x in r))
