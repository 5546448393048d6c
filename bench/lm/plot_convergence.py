#!/usr/bin/python3
"""Convergence of the iterative loop (`tlm loop`, paper Figure 9): DIR/convergence.csv
(measurements,ok,tasks,total_best_s,vs_best,vs_first,elapsed_s; a row every 100 measurements)
-> a PNG, and the round boundaries from DIR/rounds.csv when it is there.

    /usr/bin/python3 bench/lm/plot_convergence.py DIR [OUT.png]   (default DIR/convergence.png)

(Debian's python3-matplotlib, which bench/setup.sh installs.)

Both curves are the total latency of the best programs so far, summed over the tasks measured so
far: `vs_best` divides it by the same tasks' best at the end (1 = the best found; the paper's
normalization), `vs_first` by their best in the first round they were measured in (below 1: how
much the fine-tuned models improved on the first programs written for them)."""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    d = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) == 3 else os.path.join(d, "convergence.png")
    rows = list(csv.DictReader(open(os.path.join(d, "convergence.csv"))))
    if not rows:
        sys.exit(f"{d}/convergence.csv: no rows")
    xs = [int(r["measurements"]) for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(xs, [float(r["vs_best"]) for r in rows], label="vs the best found (paper Fig. 9)")
    ax.plot(xs, [float(r["vs_first"]) for r in rows], label="vs each task's first round")
    rounds = os.path.join(d, "rounds.csv")
    if os.path.exists(rounds):
        done = 0
        for r in csv.DictReader(open(rounds)):
            done += int(r["measured"])
            ax.axvline(done, color="grey", alpha=0.2, lw=0.8)
    hours = float(rows[-1]["elapsed_s"]) / 3600
    ax.set_xlabel("measurements")
    ax.set_ylabel("normalized total latency of the best programs")
    ax.set_title(f"tlm loop: {xs[-1]} measurements, {rows[-1]['tasks']} tasks, {hours:.1f} h "
                 f"(grey: rounds)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
