#!/usr/bin/python3
"""Held-out evaluation report: bench/heldout/run.sh's results -> heldout.md, heldout.csv.

    bench/heldout/report.py [--results DIR]      (default bench/results/heldout)

Reads, per model and thread count T: final/<model>.t<T>.json (final.py's status: which sets were
timed, FAIL or failed, the held-out check, the machine), the `tlm run` CSVs it names (end-to-end
ms and speedup over the default schedules, measured in the same run), the peers' CSVs (ONNX
Runtime and PyTorch eager, before and after; the lower median of the two), the records (search
measurements and re-measurements of each set) and the tune logs (tuning wall time, summed over
resumed runs; evolutionary100's comes from its records' timestamps, derive.py).

oneproc/<model>.t<T>.json (oneproc.py, when run): each set's AOT artifact and ONNX Runtime timed in
one process taking turns -- the "vs ORT, one process" column, free of the drift between the
final's processes.

Ratios between schedule sets are ratios of their speedups over the default schedules, each taken
in the `tlm run` that timed it (all sets share one run unless final.py had to split it): in a
shared run that is the ratio of their latencies. Missing pieces are "not run", failed
verification is FAIL, never a time. The targets of issue 11 (point 5) are evaluated at the end,
met or not met, with their numbers.
"""
import argparse
import csv
import gzip
import json
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from final import HALIDE, is_set_tag, order_key, set_name  # noqa: E402

sys.path.insert(0, os.path.join(HERE, ".."))
from benchlib import seconds  # noqa: E402

MODELS = ["resnet50", "mobilenet_v2", "bert-base", "gpt2"]
EXPECTED = ["tlm", "tlm10", "tlm32", "evo10", "evo100", "evo200", "mullapudi", "li", "adams"]
PEERS = ["onnxruntime", "pytorch-eager"]
LABEL = {"tlm": "TLM-1xg (no measurement)", "default": "tlm default schedules",
         "onnxruntime": "ONNX Runtime", "pytorch-eager": "PyTorch eager"}
TARGETS = [  # (name, set A, set B or "default", threshold): geomean_models(A / B) >= threshold
    ("TLM-10xg >= evolutionary at 100xg", "tlm10", "evo100", 1.0),
    ("TLM-1xg (no measurement) >= 0.8x evolutionary at 200xg", "tlm", "evo200", 0.8),
    ("TLM-1xg (no measurement) >= 1.5x tlm's default schedules", "tlm", "default", 1.5),
]


def label(n):
    m = re.fullmatch(r"(tlm|evo|tlmevo|expevo|random)(\d+)", n)
    if m:
        who = {"tlm": "TLM", "evo": "evolutionary", "tlmevo": "tlm-evolutionary",
               "expevo": "expert-evolutionary", "random": "random"}[m.group(1)]
        return f"{who} {m.group(2)}xg" if who == "TLM" else f"{who} at {m.group(2)}xg"
    return LABEL.get(n, {v: f"Halide {k[len('halide-'):]}" for k, v in HALIDE.items()}.get(n, n))


def hms(s):
    if s is None:
        return ""
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def tune_log(path):
    """Wall time summed over the log's runs, their count, hardware keys, finished or not."""
    if not os.path.exists(path):
        return None
    info = {"wall_s": 0.0, "runs": 0, "hardware": set(), "measured_runs": 0, "process_s": 0.0,
            "timed_runs": 0}
    for line in open(path, errors="replace"):
        m = re.match(r"measurements: .*; wall time (\S+)", line)
        if m:
            info["wall_s"] += seconds(m.group(1))
            info["measured_runs"] += 1
        m = re.match(r"== exit \S+ after (\d+) s", line)  # run.sh: the whole process
        if m:
            info["process_s"] += float(m.group(1))
            info["timed_runs"] += 1
        m = re.match(r"strategy \S+ on (\S+)", line)
        if m:
            info["hardware"].add(m.group(1))
        if line.startswith("== ") and " tune " in line:
            info["runs"] += 1
    return info


def count_records(path):
    """(search measurements, re-measurements) of a records file (distinct sentences per task)."""
    search, again = set(), 0
    if path and not os.path.exists(path) and os.path.exists(path + ".gz"):
        path += ".gz"  # committed record sets are gzipped
    if not path or not os.path.exists(path):
        return None
    opener = gzip.open if path.endswith(".gz") else open
    for line in opener(path, "rt", errors="replace"):
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        if r.get("strategy", "").endswith("/remeasure"):
            again += 1
        else:
            search.add((r.get("task_key"), r.get("sentence")))
    return len(search), again


def peer_ms(st, fin, model, t):
    """{runtime: (lower median ms, note)} from the two peers CSVs."""
    out = {}
    for which in ("a", "b"):
        path = os.path.join(fin, f"peers.{model}.t{t}.{which}.csv")
        if not os.path.exists(path):
            continue
        for r in csv.DictReader(open(path)):
            if r["model"] != model:
                continue
            ms = float(r["median_ms"])
            old = out.get(r["runtime"])
            out[r["runtime"]] = (min(ms, old[0]) if old else ms, (old[1] + 1) if old else 1)
    return {k: (v[0], f"lower median of {v[1]} run(s)") for k, v in out.items()}


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", default=os.path.join(HERE, "..", "results", "heldout"))
    a = ap.parse_args()
    res = os.path.abspath(a.results)
    fin, rec_dir, log_dir = (os.path.join(res, d) for d in ("final", "records", "logs"))
    one_dir = os.path.join(res, "oneproc")
    if not os.path.isdir(res):
        sys.exit(f"nothing to report: no {res}")

    # What exists: (model, threads) from the finals, the records and the logs.
    found = {}  # (model, t) -> {"status": json or None, "tags": {set: tag}}
    pat = re.compile(r"(.+)\.t(\d+)\.(.+)\.(jsonl|log)$")
    for d in (rec_dir, log_dir):
        for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            m = pat.fullmatch(f)
            if m and d == log_dir and not is_set_tag(m.group(3)):
                # Only a set's tune log names a set (a side log, e.g. of a by-hand fill, does not).
                print(f"report: ignoring {os.path.join(d, f)}: {m.group(3)!r} names no set",
                      file=sys.stderr)
                continue
            if m:
                e = found.setdefault((m.group(1), int(m.group(2))), {"status": None, "tags": {}})
                e["tags"][set_name(m.group(3))] = m.group(3)
    for f in sorted(os.listdir(fin)) if os.path.isdir(fin) else []:
        m = re.fullmatch(r"(.+)\.t(\d+)\.json", f)
        if m:
            e = found.setdefault((m.group(1), int(m.group(2))), {"status": None, "tags": {}})
            e["status"] = json.load(open(os.path.join(fin, f)))
    if not found:
        sys.exit(f"nothing to report in {res}")
    threads = sorted({t for _, t in found})
    models = MODELS + sorted({m for m, _ in found} - set(MODELS))

    # The machine: /proc/cpuinfo (recorded by final.py) and tlm's hardware key.
    cpus, keys, ckpts, rankers = set(), set(), set(), set()
    for (m, t), e in found.items():
        st = e["status"]
        if st:
            cpus.add(st.get("cpu_model", "unknown"))
            if st.get("hardware"):
                keys.add(st["hardware"])
            ck = st.get("checkpoint", {})
            ckpts.add(f"{ck.get('path')} (sha256 {ck.get('sha')})")
            rk = st.get("ranker")  # recorded from session 69 on
            rankers.add(f"{rk['path']} (sha256 {rk['sha']})" if rk else
                        "not recorded (runs before session 69: the shipped models/ranker.json "
                        "of then)")
        for tag in e["tags"].values():
            info = tune_log(os.path.join(log_dir, f"{m}.t{t}.{tag}.log"))
            if info:
                keys |= info["hardware"]
    if not cpus:
        try:
            cpus = {next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                         if l.startswith("model name")) + " (this machine; no final run yet)"}
        except (OSError, StopIteration):
            cpus = {"unknown"}

    md = [f"# Held-out end-to-end evaluation (issue 11, point 5)", "",
          f"Machine: {'; '.join(sorted(cpus))} (/proc/cpuinfo model name); tlm hardware key: "
          f"{'; '.join(sorted(keys)) or 'not printed (no records set timed yet)'}.",
          f"Checkpoint of TLM-1xg and of the tlm tuning runs: {'; '.join(sorted(ckpts)) or 'not run'}.",
          f"Zero-shot ranker of TLM-1xg: {'; '.join(sorted(rankers)) or 'not run'}.",
          "", "Batch 1 (BERT-base and GPT-2 at seq 128), the ONNX files of bench/e2e/models.py. "
          "Latency: `tlm run`'s end-to-end median (the lowest of its turns' medians: `--turns 6` "
          "of 5 runs from session 52, 2 of 5 before; every set of a model timed in one run "
          "taking turns). **vs ORT** = ONNX Runtime ms / ms (above 1: faster "
          "than ONNX Runtime; ORT timed in a process of its own before and after `tlm run`, the "
          "lower median); **vs ORT, one process** = the same ratio with each set's ahead-of-time "
          "artifact and ORT in one process taking turns (bench/heldout/oneproc.py: median over "
          "the blocks (each model's line says how many) of ORT's time around each block over "
          "the set's; the Halide sets are not "
          "compiled ahead of time); **vs default** = speedup over tlm's default schedules in the same "
          "run. Measurements: search measurements in the records (+ re-measurements of the best "
          "three per task at the end of a run; from session 52 each task's three finalists are "
          "then also timed inside the model, `src/tune/in_model.h`). Tuning time: wall time of the `tlm tune` "
          "processes, model import included (summed over resumed runs); TLM-1xg: the time its "
          "programs took to write. Status PASS: verified against the reference interpreter.", ""]
    rows = []  # heldout.csv
    speed = {}  # (t, model, set) -> speedup over default, or "FAIL"
    unfinished = set()  # (t, model, set) whose tuning run has not finished: not in the targets
    for t in threads:
        md += [f"## {t} thread{'s' if t > 1 else ''}", ""]
        ones = {}  # model -> its oneproc.py status at t threads
        for m in models:
            e = found.get((m, t), {"status": None, "tags": {}})
            st = e["status"] or {}
            sets = st.get("sets", {})
            names = sorted(set(EXPECTED) | set(sets) | set(e["tags"]), key=order_key)
            default_ms = st.get("default_ms")
            peers = peer_ms(st, fin, m, t) if st else {}
            one_path = os.path.join(one_dir, f"{m}.t{t}.json")
            one = json.load(open(one_path)) if os.path.exists(one_path) else {}
            if one:
                ones[m] = one
            ort = peers.get("onnxruntime", (None,))[0]
            md.append(f"### {m}, {t} thread{'s' if t > 1 else ''}")
            md.append("")
            if not st:
                md += ["final: not run", ""]
            else:
                h = st.get("heldout", {}).get("tlm")
                if st.get("violation"):
                    check = f"**VIOLATION**: {st['violation']}"
                elif h is None:
                    check = "unknown (the tlm set's line is missing from the log)"
                elif h.get("checkable") is False:
                    check = ("not checkable: the checkpoint does not list the tasks it was "
                             "fine-tuned on")
                else:
                    check = f"{h['seen']} of {h['tasks']} tasks among the fine-tuning demonstrations"
                hr = st.get("heldout", {}).get("tlm ranker")
                if hr is not None and not st.get("violation"):
                    check += f"; {hr['seen']} of {hr['tasks']} among the ranker's training tasks"
                md += [f"Held-out check: {check}. Final run {st.get('started', '?')} - "
                       f"{st.get('finished', 'unfinished')}"
                       f"{', core ' + str(st['cpu']) if st.get('cpu') is not None else ''}.", ""]
            if one:
                md += [f"In one process with ORT {one.get('ort_version', '')}: {one['date']}, "
                       f"cores {one['cpus']}, {one['blocks']} blocks of {one['block']} calls per "
                       f"side, ORT median {one['ort_ms']:.2f} ms.", ""]
            md += ["| runtime | latency ms | vs ORT | vs ORT, one process | vs default | "
                   "tasks from records | measurements | tuning time | status |",
                   "|---|---|---|---|---|---|---|---|---|"]

            def add(name, ms, vs_default, status, cov="", meas="", wall="", note=""):
                vs_ort = f"{ort / ms:.2f}x" if ort and ms else ""
                r1 = one.get("ratios", {}).get(name)
                x1 = 1 / r1["ratio"] if r1 else None  # ORT's time / this set's, one process
                vs_one = f"{x1:.2f}x" if x1 else ""
                md.append(f"| {label(name)} | {f'{ms:.1f}' if ms else ''} | {vs_ort} | {vs_one} | "
                          f"{f'{vs_default:.2f}x' if vs_default else ''} | {cov} | {meas} | "
                          f"{wall} | {status}{' (' + note + ')' if note else ''} |")
                rows.append([t, m, name, f"{ms:.4f}" if ms else "",
                             f"{vs_default:.4f}" if vs_default else "",
                             f"{ort / ms:.4f}" if ort and ms else "",
                             f"{x1:.4f}" if x1 else "", status, cov,
                             meas, wall, note])

            add("default", default_ms, 1.0 if default_ms else None,
                "PASS" if default_ms else "not run")
            for n in names:
                s = sets.get(n, {})
                tag = s.get("tag") or e["tags"].get(n)
                rec = s.get("source") or s.get("records") or (
                    tag and os.path.join(rec_dir, f"{m}.t{t}.{tag}.jsonl"))
                counts = count_records(rec) if n != "tlm" else (0, 0) if s.get("status") == "timed" else None
                meas = "" if counts is None else (f"{counts[0]}" + (f" (+{counts[1]})" if counts[1] else ""))
                wall, note = "", s.get("note", "")
                if n == "tlm":
                    wall = f"{s['written_s']:.1f}s (writing)" if s.get("written_s") is not None else ""
                elif n == "evo100" and tag and os.path.exists(
                        cut := os.path.join(rec_dir, f"{m}.t{t}.{tag}.jsonl.meta.json")):
                    # derive.py's cut; the final may have timed a gunzipped copy elsewhere
                    meta = json.load(open(cut))
                    spans = [h["search_span_s"] for h in meta["hardware"].values()]
                    src = [h["source_search_span_s"] for h in meta["hardware"].values()]
                    wall = f"~{hms(sum(spans))}"
                    note = (note + "; " if note else "") + (
                        f"cut from {meta['source']} ({meta['rule']}); time from record "
                        f"timestamps, by which the source's search took {hms(sum(src))}")
                elif tag:
                    info = tune_log(os.path.join(log_dir, f"{m}.t{t}.{tag}.log"))
                    if info and info["timed_runs"]:
                        wall = hms(info["process_s"])
                        if info["timed_runs"] > 1:
                            wall += f" ({info['timed_runs']} runs)"
                    elif info and info["measured_runs"]:
                        wall = hms(info["wall_s"])
                    if info and info["runs"] > max(info["timed_runs"], info["measured_runs"]):
                        # a stretch killed before its summary line: its time is not in `wall`
                        k = info["runs"] - max(info["timed_runs"], info["measured_runs"])
                        wall += f" + {k} interrupted stretch{'es' if k > 1 else ''}"
                    if tag and not os.path.exists(os.path.join(rec_dir, f"{m}.t{t}.{tag}.jsonl.done")):
                        note = (note + "; " if note else "") + "tuning unfinished"
                        unfinished.add((t, m, n))
                cov = "/".join(map(str, s["coverage"])) if s.get("coverage") else ""
                status = s.get("status", "not run")
                if status == "timed":
                    if s.get("run") == "own":
                        note = (note + "; " if note else "") + (
                            f"timed in a run of its own, its default {s.get('own_default_ms', 0):.1f} ms")
                    speed[(t, m, n)] = s["speedup"]
                    add(n, s["ms"], s["speedup"], "PASS", cov, meas, wall, note)
                else:
                    if status == "FAIL":
                        speed[(t, m, n)] = "FAIL"
                    add(n, None, None, status, cov, meas, wall, note)
                if s.get("coverage") and s["coverage"][0] < s["coverage"][1]:
                    md[-1] = md[-1][:-2] + "; **some tasks have no error-free record (none measured, or every program of theirs failed; see the records): default schedule** |"
            if default_ms:
                speed[(t, m, "default")] = 1.0
            for p in PEERS:
                if p in peers:
                    ms, note = peers[p]
                    add(p, ms, default_ms / ms if default_ms else None, "reference", note=note)
                else:
                    err = "; ".join(v.get("error", "") for v in st.get("peers", {}).values()
                                    if "error" in v)
                    add(p, None, None, "not run", note=err)
            md.append("")

        md += [f"### Targets, {t} thread{'s' if t > 1 else ''}", "",
               "Geometric mean over the four models of the ratio (speedups over the default "
               "schedules, each from the run that timed the set).", "",
               "| target | " + " | ".join(MODELS) + " | geomean | verdict |",
               "|---|" + "---|" * (len(MODELS) + 2)]
        for name, x, y, thr in TARGETS:
            cells, vals, tlm_failed, missing = [], [], False, []
            for m in MODELS:
                sx, sy = speed.get((t, m, x)), speed.get((t, m, y))
                if sx == "FAIL":
                    cells.append(f"{label(x)} FAIL")
                    tlm_failed = True
                elif sy == "FAIL":
                    cells.append(f"{label(y)} FAIL")
                    missing.append(m)
                elif (t, m, x) in unfinished or (t, m, y) in unfinished:
                    # a budget the search has not spent is not that budget's number
                    cells.append(f"{label(x if (t, m, x) in unfinished else y)} unfinished")
                    missing.append(m)
                elif sx is None or sy is None:
                    cells.append("not run")
                    missing.append(m)
                else:
                    vals.append(sx / sy)
                    cells.append(f"{sx / sy:.2f}x")
            g = geomean(vals)
            if tlm_failed:
                verdict = f"**not met** ({label(x)} failed verification)"
            elif g is None:
                verdict = "not run"
            elif missing:
                verdict = (f"incomplete: {len(vals)} of {len(MODELS)} models (not: "
                           f"{', '.join(missing)}); on those {'met' if g >= thr else 'not met'}")
            else:
                verdict = "**met**" if g >= thr else "**not met**"
            md.append(f"| {name} (>= {thr:g}) | " + " | ".join(cells) +
                      f" | {'' if g is None else f'{g:.2f}x'} | {verdict} |")
            rows.append([t, "geomean", f"target: {name}", "", "" if g is None else f"{g:.4f}",
                         "", "", verdict.replace("*", ""), "", "", "", f">= {thr:g}"])
        md.append("")

        # Issue 10, point 4: every model at least as fast as ONNX Runtime, from the one-process
        # timings (oneproc.py) where they exist.
        if ones:
            md += [f"### Against ONNX Runtime in one process, {t} thread{'s' if t > 1 else ''}", "",
                   "ONNX Runtime's time / the set's, each set's AOT artifact and ORT timed taking "
                   "turns in one process (oneproc.py; above 1: tlm faster). Sets whose tuning has "
                   "not finished are marked.", "",
                   "| model | TLM-1xg | TLM-10xg | fastest set | at least as fast as ORT |",
                   "|---|---|---|---|---|"]
            for m, o in ones.items():
                r = {n: 1 / v["ratio"] for n, v in o["ratios"].items() if n != "default"}
                done = {n: x for n, x in r.items() if (t, m, n) not in unfinished}
                best = max(done, key=done.get) if done else None

                def cell(n):
                    return f"{r[n]:.3f}x" if n in r else "not run"
                md.append(f"| {m} | {cell('tlm')} | {cell('tlm10')} | "
                          f"{f'{label(best)} {done[best]:.3f}x' if best else ''} | "
                          f"{'**yes**' if best and done[best] >= 1 else '**no**'} |")
            md.append("")

    with open(os.path.join(res, "heldout.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["threads", "model", "runtime", "latency_ms", "speedup_over_default",
                    "speedup_over_onnxruntime", "speedup_over_onnxruntime_one_process", "status", "tasks_from_records", "measurements",
                    "tuning_time", "note"])
        w.writerows(rows)
    open(os.path.join(res, "heldout.md"), "w").write("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
