#!/usr/bin/python3
"""End-to-end benchmark report: logs of bench/e2e/run.sh + peers.csv -> e2e.csv, e2e.md, e2e.png.

From each `tlm tune` log bench/results/e2e/logs/<model>.<strategy>.log: the tuned model's
latency, the default schedules' latency (measured in the same run), whether the tuned model
verified against the interpreter, the measurements made and the wall time. From peers.csv: PyTorch
eager and ONNX Runtime. A tuned model that failed verification is reported as FAIL, never as a
time.
"""
import csv
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "..", "results", "e2e")
MODELS = ["resnet50", "mobilenet_v2", "bert-base", "gpt2"]
STRATEGIES = ["random", "evolutionary", "halide-mullapudi2016", "halide-li2018",
              "halide-adams2019", "halide-adams2019-greedy"]
E2E = re.compile(r"end-to-end: tuned ([0-9.]+) ms, default schedules ([0-9.]+) ms .*verify (\w+)")
MEAS = re.compile(r"measurements: (\d+) of this strategy.*; wall time (.*)$")


def parse_log(path):
    if not os.path.exists(path):
        return None
    text = open(path).read()
    m = E2E.search(text)
    if not m:
        return {"status": "incomplete"}
    r = {"tuned_ms": float(m.group(1)), "default_ms": float(m.group(2)),
         "status": m.group(3)}
    for line in text.splitlines():
        mm = MEAS.search(line)
        if mm:
            r["measurements"], r["wall"] = int(mm.group(1)), mm.group(2)
    return r


def main():
    rows = []  # model, runtime, ms, status, note
    for m in MODELS:
        defaults = []
        for s in STRATEGIES:
            r = parse_log(os.path.join(RESULTS, "logs", f"{m}.{s}.log"))
            if r is None:
                continue
            if "tuned_ms" not in r:
                rows.append([m, "tlm " + s, "", r["status"], ""])
                continue
            defaults.append(r["default_ms"])
            note = f"{r.get('measurements', 0)} measurements, {r.get('wall', '?')}"
            rows.append([m, "tlm " + s, r["tuned_ms"] if r["status"] == "PASS" else "",
                         r["status"], note])
        if defaults:
            defaults.sort()
            rows.append([m, "tlm default schedules", defaults[len(defaults) // 2], "PASS",
                         f"median of the {len(defaults)} runs' measurements"])
    peers = os.path.join(RESULTS, "peers.csv")
    if os.path.exists(peers):
        for p in csv.DictReader(open(peers)):
            rows.append([p["model"], p["runtime"], float(p["median_ms"]), "reference",
                         f"{p['threads']} thread(s)"])
    if not rows:
        sys.exit(f"nothing to report in {RESULTS}")
    with open(os.path.join(RESULTS, "e2e.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "runtime", "latency_ms", "status", "note"])
        w.writerows(rows)

    runtimes = []
    for r in rows:
        if r[1] not in runtimes:
            runtimes.append(r[1])
    table = {(r[0], r[1]): r for r in rows}
    md = ["Batch 1, one thread, latency in ms (lower is better); in brackets: speedup over "
          "ONNX Runtime.", "", "| runtime | " + " | ".join(MODELS) + " |",
          "|---|" + "---|" * len(MODELS)]
    for rt in runtimes:
        cells = []
        for m in MODELS:
            r = table.get((m, rt))
            ort = table.get((m, "onnxruntime"))
            if r is None:
                cells.append("")
            elif r[2] == "":
                cells.append(r[3])
            else:
                c = f"{r[2]:.1f}"
                if ort and ort[2]:
                    c += f" ({ort[2] / r[2]:.2f}x)"
                cells.append(c)
        md.append(f"| {rt} | " + " | ".join(cells) + " |")
    # Speedup over the default schedules measured in the same `tlm tune` run (the two lanes share
    # the machine's memory system, so defaults measured in different runs differ by up to ~30%).
    md += ["", "Speedup of each tuned model over tlm's default schedules, both measured in the same "
           "run:", "", "| strategy | " + " | ".join(MODELS) + " |", "|---|" + "---|" * len(MODELS)]
    for s in STRATEGIES:
        cells = []
        for m in MODELS:
            r = parse_log(os.path.join(RESULTS, "logs", f"{m}.{s}.log"))
            cells.append(f"{r['default_ms'] / r['tuned_ms']:.2f}x" if r and "tuned_ms" in r else "")
        if any(cells):
            md.append(f"| {s} | " + " | ".join(cells) + " |")
    open(os.path.join(RESULTS, "e2e.md"), "w").write("\n".join(md) + "\n")
    print("\n".join(md))

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing (bench/setup.sh installs it): no plot", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(10, 4.5))
    width = 0.8 / len(runtimes)
    for j, rt in enumerate(runtimes):
        ys = []
        for m in MODELS:
            r, ort = table.get((m, rt)), table.get((m, "onnxruntime"))
            ys.append(ort[2] / r[2] if r and r[2] != "" and ort and ort[2] else 0)
        ax.bar([i + j * width for i in range(len(MODELS))], ys, width, label=rt)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(MODELS))])
    ax.set_xticklabels(MODELS)
    ax.set_ylabel("speedup over ONNX Runtime (higher is better)")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.legend(fontsize=7, ncol=2)
    ax.set_title("end to end, batch 1, one thread")
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, "e2e.png"), dpi=100)


if __name__ == "__main__":
    main()
