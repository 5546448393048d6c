#!/usr/bin/python3
"""Loss curve of a `tlm train` run: the CSV it writes next to the checkpoint (CKPT.csv:
step,tokens,train_loss,val_loss,heldout_loss,lr,elapsed_s, one row per validation) -> a PNG.

    /usr/bin/python3 bench/lm/plot_loss.py models/tlm-base.ckpt.csv bench/results/lm/pretrain_loss.png

(Debian's python3-matplotlib, which bench/setup.sh installs.)

Training loss is the mean over the eval interval; validation is on training workloads' sentences
(chooses the checkpoint); held-out is on the held-out workloads' sentences (evaluation only)."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = list(csv.DictReader(open(sys.argv[1])))
    if not rows:
        sys.exit(f"{sys.argv[1]}: no rows")
    tokens = [float(r["tokens"]) / 1e6 for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for key, label in [("train_loss", "train (interval mean)"), ("val_loss", "validation"),
                       ("heldout_loss", "held-out workloads")]:
        ys = [float(r[key]) for r in rows]
        ax.plot(tokens, ys, marker="o", ms=3, label=label)
    ax.set_xlabel("tokens seen (millions)")
    ax.set_ylabel("loss per decision value (nats)")
    ax.set_title(f"tlm pre-training: {len(rows)} evaluations, "
                 f"{float(rows[-1]['elapsed_s']) / 60:.0f} min")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    print(f"wrote {sys.argv[2]}")


if __name__ == "__main__":
    main()
