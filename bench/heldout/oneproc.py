#!/usr/bin/python3
"""Held-out evaluation against ONNX Runtime in ONE process, for one model at one thread count
(called by run.sh oneproc).

final.py times every schedule set in one `tlm run`, so the sets' ratios to each other and to the
default schedules are measured in one run; but ONNX Runtime runs in a process of its own before
and after, and on these VMs the machine's speed drifts by 15-30% within minutes (ResNet-50's ORT
75.3 then 57.4 ms one minute apart, session 53): that drift is in final's "vs ORT" column. Here
every set becomes the AOT artifact `tlm compile` emits (verified against the reference interpreter
by `tlm compile` itself; TLM-1xg through `tlm compile --tlm`, the default schedules without
records), and bench/lose/interleave.py loads them all beside an ORT session and times them in
short blocks taking turns: each set's ratio to ORT is the median over the blocks of its block's
time over the ORT blocks around it.

The sets are final.py's (discover_sets: the same records, the same machine and checkpoint checks)
except the Halide autoschedulers' (their schedules are the autoscheduler's, run inside `tlm run`;
`tlm compile` emits recorded tensor-language programs only). Writes RESULTS/oneproc/<model>.t<T>.
{json (the ratios, the sets, the machine, the command), csv (every block), log}; the artifacts are
built in --art-dir (default a temporary directory, removed at the end).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from final import (HALIDE, ROOT, add_model_args, cpu_model_name, discover_sets,  # noqa: E402
                   model_inputs, order_key, ranker_input)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_model_args(ap, tlm_help="the tlm binary of `tlm compile`")
    ap.add_argument("--cpus", help="pin everything to these cores (taskset list; default: 0 for "
                                   "one thread, 0-(T-1) otherwise)")
    ap.add_argument("--blocks", type=int, default=15, help="blocks per side (interleave.py)")
    ap.add_argument("--block", type=int, default=0,
                    help="calls per block (default: about 0.6 s of the default schedules' "
                         "final time, 4-12 calls)")
    ap.add_argument("--art-dir", help="where the artifacts are built (kept; reused when the "
                                      "records, binary and flags are the same)")
    a = ap.parse_args()

    m, t = a.model, a.threads
    onnx, ckpt, ckpt_sha = model_inputs(a)
    ranker, ranker_sha = ranker_input(a)
    res = a.results
    py = os.path.join(ROOT, "bench", ".venv", "bin", "python")
    if not os.path.exists(py):
        sys.exit("bench/.venv missing (bench/setup.sh)")
    sets = discover_sets(res, m, t, ckpt, ckpt_sha)
    skipped = sorted(n for n, s in sets.items() if s["tag"] in HALIDE)
    names = ["default", "tlm"] + sorted((n for n in sets if n not in skipped), key=order_key)

    out = os.path.join(res, "oneproc")
    os.makedirs(out, exist_ok=True)
    base = os.path.join(out, f"{m}.t{t}")
    signature = {"sets": {n: [sets[n]["source"], os.path.getsize(sets[n]["source"]),
                              int(os.path.getmtime(sets[n]["source"]))]
                          for n in names if n in sets},
                 "ckpt": ckpt_sha, "ranker": ranker_sha, "blocks": a.blocks, "block": a.block}
    if os.path.exists(base + ".json") and not a.redo:
        old = json.load(open(base + ".json"))
        if old.get("signature") == signature and old.get("ratios"):
            print(f"== {m} (threads {t}): measured earlier with the same records (skipped; "
                  f"REDO=1 runs it again)")
            return

    block = a.block
    if block <= 0:  # ~0.6 s per block at the default schedules' speed (final's time if known)
        block = 8
        try:
            st = json.load(open(os.path.join(res, "final", f"{m}.t{t}.json")))
            if st.get("default_ms"):
                block = max(4, min(12, int(600 / st["default_ms"])))
        except (OSError, ValueError):
            pass
    art = a.art_dir or tempfile.mkdtemp(prefix=f"oneproc-{m}-t{t}-")
    cpus = a.cpus or ("0" if t == 1 else f"0-{t - 1}")
    variants = []
    for n in names:
        spec = {"default": "default", "tlm": "tlm"}.get(n) or sets[n]["records"]
        flags = [f"--layout={a.layout}"] + (
            [f"--model={ckpt}", f"--ranker={ranker}"] if n == "tlm" else [])
        variants += ["--variant", f"{n}={spec}@{';'.join(flags)}"]
    summary = base + ".summary.tmp.json"
    cmd = ["taskset", "-c", cpus, py, os.path.join(ROOT, "bench", "lose", "interleave.py"),
           "--threads", str(t), "--tlm", a.tlm, "--blocks", str(a.blocks), "--block", str(block),
           "--out", out, "--art-dir", art, "--summary", summary, "--reuse"] + variants + [onnx]
    print(f"== {time.strftime('%F %T')} {m}: threads {t}, cores {cpus}; in one process with ORT: "
          f"{', '.join(names)}" + (f" (Halide sets not compiled ahead of time: "
                                   f"{', '.join(skipped)})" if skipped else ""), flush=True)
    t0 = time.time()
    with open(base + ".log", "a") as log:
        log.write(f"== {time.strftime('%F %T')} {' '.join(cmd)}\n")
        log.flush()
        rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT).returncode
        log.write(f"== exit {rc} after {time.time() - t0:.0f} s\n")
    if not a.art_dir:
        shutil.rmtree(art, ignore_errors=True)
    if rc != 0:
        tail = open(base + ".log", errors="replace").read().splitlines()[-8:]
        sys.exit(f"{m} (threads {t}): interleave.py failed (exit {rc}); {base}.log ends:\n  "
                 + "\n  ".join(tail))
    s = json.load(open(summary))
    os.remove(summary)
    os.replace(os.path.join(out, f"{m}.{t}t.csv"), base + ".csv")
    st = {"model": m, "threads": t, "cpus": cpus, "cpu_model": cpu_model_name(),
          "date": time.strftime("%F %T"), "wall_s": round(time.time() - t0, 1),
          "checkpoint": {"path": ckpt, "sha": ckpt_sha},
          "ranker": {"path": ranker, "sha": ranker_sha}, "signature": signature,
          "skipped": skipped, "command": " ".join(cmd), "ort_ms": s["ort_ms"],
          "ort_version": s["ort_version"], "blocks": s["blocks"], "block": s["block"],
          "ratios": s["variants"],
          "sets": {n: {k: sets[n][k] for k in ("tag", "source") if k in sets[n]} for n in names
                   if n in sets}}
    with open(base + ".json.tmp", "w") as f:
        json.dump(st, f, indent=1, sort_keys=True)
    os.replace(base + ".json.tmp", base + ".json")
    for n in names:
        r = s["variants"][n]
        print(f"     {n:10s} tlm / ORT {r['ratio']:.3f} (quartiles {r['q25']:.3f}-{r['q75']:.3f}; "
              f"{r['ms']:.2f} vs {s['ort_ms']:.2f} ms)")


if __name__ == "__main__":
    main()
