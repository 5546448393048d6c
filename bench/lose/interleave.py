"""tlm's compiled model and ONNX Runtime in ONE process, taking turns in short blocks: an
end-to-end ratio that this machine's fast/slow modes cannot bias.

These machines switch between a fast and a slow mode (about 2x apart) every few minutes, even
inside one process; two whole-model times taken minutes apart make no ratio. Here tlm's model is
the AOT artifact of `tlm compile MODEL --records FILE` (the best recorded program of every task,
verified against the reference interpreter by `tlm compile` itself), built as a shared library
and called through ctypes, beside an ORT InferenceSession on the same ONNX file. The script
alternates blocks of --block calls (ORT, tlm, ORT, tlm, ...), --blocks blocks per side, each
block after a --settle pause (default 50 ms) and with its first --drop calls uncounted: ORT's
intra-op workers keep spinning after a run, and on an AMD Zen 5 VM that stole a core from the
next tlm block for its whole length (MobileNet-V2, 2 threads: tlm 2.90 ms without the pause,
1.58 with it, 1.80 alone in its own process; ORT 1.88 either way),
and reports the median of each block, the ratio of each tlm block to the mean of the ORT blocks
around it, and the median of those ratios. A variant is NAME=RECORDS (several artifacts in the
same turns, e.g. before/after a change); NAME=tlm is the language model's zero-shot program per
task (`tlm compile --tlm`, no measurement; @--model=CKPT for another checkpoint) and
NAME=default tlm's default schedules (`tlm compile` without records). --summary writes the
ratios as JSON (bench/heldout/oneproc.py reads it).

    taskset -c 0-1 bench/.venv/bin/python bench/lose/interleave.py --threads 2 \
        --variant tlm=bench/results/lose-zen4/final/resnet50.2t.jsonl \
        --out bench/results/interleave-zen4 bench/results/e2e/onnx/resnet50.onnx

Environment and flags of each variant: NAME=RECORDS@K=V;K=V sets variables for its `tlm compile`
(e.g. TLM_WEIGHT_BLOCKS=0; TLM_BIN=PATH compiles the variant with another tlm binary, e.g. the
one before a change), and a key that starts with -- is a flag of it (e.g.
@--layout=nchw for records tuned on plain activations: `tlm compile`'s default is auto = nchwc). Pin the script to the cores of --threads (taskset); HL_NUM_THREADS is set
to --threads for the artifacts' Halide thread pool.
"""
import argparse
import csv
import ctypes
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from benchlib import seeded_feeds  # noqa: E402


def build_artifact(tlm, threads, onnx, records, out_dir, env, flags, reuse=False):
    """`tlm compile` (which builds and verifies the runner), then the same objects as a .so.
    records "tlm": the language model's zero-shot programs; "default": the default schedules.
    With reuse, an artifact that an earlier run built from the same command, records, binary and
    environment (its stamp file says so) is taken as it is."""
    source = {"tlm": ["--tlm"], "default": []}.get(records, ["--records", records])
    cmd = [tlm, "--threads", str(threads), "compile", onnx] + source + ["-o", out_dir]
    cmd += flags
    so = os.path.join(out_dir, "libmodel.so")
    stamp_path = os.path.join(out_dir, "interleave.stamp")
    inputs = [tlm, onnx] + ([records] if records not in ("tlm", "default") else [])
    if records == "tlm":  # the checkpoint and ranker it reads (the shipped ones unless
        # --model / --ranker say otherwise)
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

        def flag(name, default):
            return flags[flags.index(name) + 1] if name in flags else os.path.join(root, default)
        inputs += [f for f in (flag("--model", "models/tlm.ckpt"),
                               flag("--ranker", "models/ranker.json")) if os.path.exists(f)]
    stamp = repr((cmd, [(f, os.stat(f).st_size, os.stat(f).st_mtime_ns) for f in inputs],
                  sorted((k, v) for k, v in env.items() if k.startswith(("TLM_", "HL_")))))
    if reuse and os.path.exists(so) and os.path.exists(stamp_path):
        with open(stamp_path) as f:
            if f.read() == stamp:
                return so
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0 or "verify: PASS" not in r.stdout:
        sys.exit(f"interleave.py: `{' '.join(cmd)}` failed (exit {r.returncode}):\n"
                 + r.stdout[-3000:] + r.stderr[-2000:])
    objs = sorted(f for f in os.listdir(out_dir) if f.startswith("task_") and f.endswith(".o"))
    subprocess.run(["c++", "-O2", "-std=c++17", "-shared", "-fPIC", "-I", out_dir, "-o", so,
                    os.path.join(out_dir, "model.cc"), os.path.join(out_dir, "par_for.cc"),
                    os.path.join(out_dir, "support", "spin_pool.cc")]
                   + [os.path.join(out_dir, o) for o in objs]
                   + [os.path.join(out_dir, "runtime.o"), "-lpthread", "-ldl"], check=True)
    with open(stamp_path, "w") as f:
        f.write(stamp)
    return so


class TlmModel:
    def __init__(self, so, out_dir, feed_arrays):
        self.lib = ctypes.CDLL(so)
        if self.lib.tlm_model_init(os.path.join(out_dir, "weights.bin").encode()) != 0:
            sys.exit(f"interleave.py: tlm_model_init failed for {out_dir}")
        in_bytes = (ctypes.c_int64 * 64).in_dll(self.lib, "tlm_model_input_bytes")
        self.inputs = [np.ascontiguousarray(x) for x in feed_arrays]
        for k, x in enumerate(self.inputs):  # same inputs, same order (the ONNX graph's)
            if in_bytes[k] != x.nbytes:
                sys.exit(f"interleave.py: input {k}: the model takes {in_bytes[k]} bytes, ORT "
                         f"{x.nbytes}")
        out_bytes = (ctypes.c_int64 * 64).in_dll(self.lib, "tlm_model_output_bytes")
        self.outputs = []
        for k in range(64):
            if out_bytes[k] == 0:
                break
            self.outputs.append(np.empty(out_bytes[k], dtype=np.uint8))
        self.in_ptrs = (ctypes.c_void_p * len(self.inputs))(*[x.ctypes.data for x in self.inputs])
        self.out_ptrs = (ctypes.c_void_p * len(self.outputs))(
            *[x.ctypes.data for x in self.outputs])

    def __call__(self):
        if self.lib.tlm_model_run(self.in_ptrs, self.out_ptrs) != 0:
            sys.exit("interleave.py: tlm_model_run failed")


def ort_session(path, threads):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return sess, seeded_feeds(sess.get_inputs())


def block(f, calls, drop):
    ts = []
    for k in range(calls):
        t0 = time.perf_counter()
        f()
        if k >= drop:
            ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--variant", action="append", required=True,
                    help="NAME=RECORDS[@K=V;--flag=V] (repeatable)")
    ap.add_argument("--blocks", type=int, default=15, help="blocks per side")
    ap.add_argument("--block", type=int, default=12, help="calls per block")
    ap.add_argument("--drop", type=int, default=2, help="uncounted first calls of a block")
    ap.add_argument("--settle", type=float, default=0.05,
                    help="seconds to sleep before each block, so that the other runtime's "
                         "worker threads stop spinning first")
    ap.add_argument("--tlm", default="build/tlm")
    ap.add_argument("--reuse", action="store_true",
                    help="take an artifact built by an earlier run with the same records, flags, "
                         "environment and tlm binary instead of compiling it again")
    ap.add_argument("--out", required=True, help="directory: artifacts and the CSV")
    ap.add_argument("--art-dir", help="directory of the artifacts (default: --out)")
    ap.add_argument("--summary", help="also write the ratios as JSON to this file")
    ap.add_argument("onnx")
    a = ap.parse_args()
    os.environ["HL_NUM_THREADS"] = str(a.threads)
    model = os.path.splitext(os.path.basename(a.onnx))[0]
    os.makedirs(a.out, exist_ok=True)
    sess, feed = ort_session(a.onnx, a.threads)
    arrays = list(feed.values())
    runners = [("ort", lambda: sess.run(None, feed))]
    for spec in a.variant:
        name, _, rest = spec.partition("=")
        records, _, envs = rest.partition("@")
        env = dict(os.environ)
        flags = []
        for kv in filter(None, envs.split(";")):
            k, _, v = kv.partition("=")
            if k.startswith("--"):
                flags += [k, v]
            else:
                env[k] = v
        tlm = env.pop("TLM_BIN", a.tlm)  # @TLM_BIN=PATH: this variant's tlm binary
        d = os.path.join(a.art_dir or a.out, f"art-{model}-{a.threads}t-{name}")
        print(f"{name}: tlm compile {records} -> {d}", flush=True)
        so = build_artifact(tlm, a.threads, a.onnx, records, d, env, flags, a.reuse)
        runners.append((name, TlmModel(so, d, arrays)))
    for _, f in runners:  # warm-up: each side's first calls are slow for a while
        block(f, a.block, a.drop)
    times = {name: [] for name, _ in runners}
    for b in range(a.blocks):
        for name, f in runners:
            time.sleep(a.settle)
            times[name].append(block(f, a.block, a.drop))
        print(f"block {b + 1}/{a.blocks}: " + ", ".join(
            f"{n} {times[n][-1]:.2f} ms" for n, _ in runners), flush=True)
    csv_path = os.path.join(a.out, f"{model}.{a.threads}t.csv")
    with open(csv_path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["block"] + [n for n, _ in runners])
        for b in range(a.blocks):
            w.writerow([b + 1] + [f"{times[n][b]:.4f}" for n, _ in runners])
    ort_t = times["ort"]
    summary = {"model": model, "threads": a.threads, "blocks": a.blocks, "block": a.block,
               "drop": a.drop, "ort_ms": statistics.median(ort_t), "ort_version": ort.__version__,
               "variants": {}}
    for name, _ in runners[1:]:
        # Each tlm block against ORT's blocks right before it and after it (the next round's).
        ratios = []
        for b in range(a.blocks):
            around = [ort_t[b]] + ([ort_t[b + 1]] if b + 1 < a.blocks else [])
            ratios.append(times[name][b] / statistics.mean(around))
        summary["variants"][name] = {
            "ratio": statistics.median(ratios), "q25": float(np.percentile(ratios, 25)),
            "q75": float(np.percentile(ratios, 75)), "ms": statistics.median(times[name]),
            "fastest_ms": min(times[name])}
        print(f"{model} {a.threads}t {name}: tlm / ORT = {statistics.median(ratios):.3f} "
              f"(median of {len(ratios)} blocks; quartiles "
              f"{np.percentile(ratios, 25):.3f}-{np.percentile(ratios, 75):.3f}); medians "
              f"{statistics.median(times[name]):.2f} vs {statistics.median(ort_t):.2f} ms, "
              f"fastest blocks {min(times[name]):.2f} vs {min(ort_t):.2f} ms")
    print(f"wrote {csv_path}")
    if a.summary:
        with open(a.summary + ".tmp", "w") as fh:
            json.dump(summary, fh, indent=1, sort_keys=True)
        os.replace(a.summary + ".tmp", a.summary)
        print(f"wrote {a.summary}")


if __name__ == "__main__":
    main()
