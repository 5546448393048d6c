#!/usr/bin/env python3
"""Per `tlm run` log: each set's end-to-end turn medians over TLM-1xg's (`tlm`) in the same turn,
the median of those ratios (paired per turn, so the machine's drift between turns cancels)."""
import statistics
import sys

for path in sys.argv[1:]:
    for line in open(path):
        if not line.startswith("turns (end-to-end"):
            continue
        turns = {}
        for part in line.split(":", 1)[1].split(";"):
            words = part.split()
            turns[words[0]] = [float(x) for x in words[1:]]
        ratios = {name: statistics.median(a / b for a, b in zip(t, turns["tlm"]))
                  for name, t in turns.items() if name != "tlm"}
        print(path.split("/")[-1], "  ".join(f"{n}/tlm {r:.3f}" for n, r in ratios.items()))
