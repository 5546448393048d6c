"""The reference runtimes of the end-to-end benchmark: PyTorch eager (Debian's torch, i.e.
libtorch underneath) on the module of bench/e2e/models.py, and ONNX Runtime (PyPI, installed by
bench/setup.sh into bench/.venv) on the ONNX file exported from that same module.

For every model: the same random input to both; ORT's output is compared with torch's (a peer
that computes something else is not a reference); then each runtime is timed like tlm times a
model: warm-up calls, then `--repeats` timed calls, median (and min) in ms. One CSV row per
(model, runtime): model,runtime,threads,median_ms,min_ms,max_abs_diff_vs_torch.

    bench/.venv/bin/python bench/e2e/peers.py --onnx-dir DIR --threads 1 --csv out.csv
"""
import argparse
import csv
import os
import statistics
import time

import numpy as np
import onnxruntime as ort
import torch

import models


def time_calls(f, warmup, repeats):
    for _ in range(warmup):
        f()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3, min(ts) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--onnx-dir", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--csv", required=True)
    ap.add_argument("models", nargs="*", default=models.MODELS)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    rows = []
    for name in a.models:
        module, x = models.build(name)
        path = os.path.join(a.onnx_dir, name + ".onnx")
        so = ort.SessionOptions()
        so.intra_op_num_threads = a.threads
        so.inter_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        feed = {sess.get_inputs()[0].name: x.numpy()}
        with torch.inference_mode():
            ref = module(x).numpy()
            t_med, t_min = time_calls(lambda: module(x), 2, a.repeats)
        got = sess.run(None, feed)[0]
        diff = float(np.max(np.abs(got - ref)))
        scale = float(np.max(np.abs(ref)))
        if not diff <= 1e-3 * max(1.0, scale):
            raise SystemExit(f"{name}: ONNX Runtime differs from torch by {diff} (scale {scale})")
        o_med, o_min = time_calls(lambda: sess.run(None, feed), 2, a.repeats)
        rows.append([name, "pytorch-eager", a.threads, f"{t_med:.3f}", f"{t_min:.3f}", "0"])
        rows.append([name, "onnxruntime", a.threads, f"{o_med:.3f}", f"{o_min:.3f}", f"{diff:.3g}"])
        print(f"{name}: pytorch eager {t_med:.1f} ms, onnxruntime {o_med:.1f} ms "
              f"(threads {a.threads}; ORT vs torch max diff {diff:.2g})", flush=True)
    with open(a.csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "runtime", "threads", "median_ms", "min_ms", "max_abs_diff_vs_torch"])
        w.writerows(rows)


if __name__ == "__main__":
    main()
