"""What several bench/ scripts share: reading a records file, parsing a wall time.

    records(path)   (raw line, record) per JSON line of a tlm records file, in file order; a line
                    cut short (a run killed while writing) is reported on stderr and skipped
    seconds(text)   '2m13s' / '37.2s' / '1h2m3s' (tlm's wall-time format) -> seconds
    seeded_feeds(inputs)  {name: array} for an ONNX Runtime session's inputs (sess.get_inputs()):
                    seeded normal floats, integers in [0, 1000) (token ids), symbolic dims as 1;
                    the same inputs in every script that compares runtimes on a whole model
    export_cli(doc, models, export)  the command line of the ONNX exporters (bench/e2e/models.py,
                    bench/unseen/models.py): --out-dir DIR [NAME...], export(name, path) per model
"""
import argparse
import json
import os
import re
import sys


def records(path):
    for n, raw in enumerate(open(path), 1):
        if not raw.strip():
            continue
        try:
            r = json.loads(raw)
        except json.JSONDecodeError:
            print(f"{path}:{n}: skipping a line cut short", file=sys.stderr)
            continue
        yield raw, r


def seconds(text):
    total = 0.0
    for num, unit in re.findall(r"([0-9.]+)([hms])", text):
        total += float(num) * {"h": 3600, "m": 60, "s": 1}[unit]
    return total


def seeded_feeds(inputs, seed=0):
    import numpy as np
    rng = np.random.default_rng(seed)
    feeds = {}
    for i in inputs:
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        if "float" in i.type:
            feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
        else:
            feeds[i.name] = rng.integers(0, 1000, shape).astype(np.int64)
    return feeds


def export_cli(doc, models, export):
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("models", nargs="*", default=models)
    a = ap.parse_args()
    for m in a.models:
        if m not in models:
            raise SystemExit(f"unknown model '{m}'; known: {', '.join(models)}")
    os.makedirs(a.out_dir, exist_ok=True)
    for m in a.models:
        p = os.path.join(a.out_dir, m + ".onnx")
        export(m, p)
        print(f"{m}: {p} ({os.path.getsize(p) / 1e6:.0f} MB)")
