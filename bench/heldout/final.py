#!/usr/bin/python3
"""Held-out evaluation, final step for one model at one thread count (called by run.sh final).

1. ONNX Runtime and PyTorch eager on the model (bench/e2e/peers.py) -> peers.<model>.t<T>.a.csv
2. ONE `tlm run MODEL.onnx --threads T --repeat R --schedules tlm,NAME=RECORDS.jsonl,... --csv`
   with every schedule set whose records exist (RESULTS/records/<model>.t<T>.<tag>.jsonl: tlm10,
   tlm32, evo10, evo100, evo200, mullapudi, li, adams, ...) beside TLM-1xg (`tlm`: the checkpoint's
   zero-shot program per task, `tlm run --zero-shot` default: the expert program the model scores
   highest; no measurement) and the default schedules: compiled, verified
   against the reference interpreter and timed in one process, taking turns.
3. The peers again -> peers.<model>.t<T>.b.csv (the report takes each peer's lower median).

The held-out check is mechanical: `tlm run` prints, for the checkpoint, how many of the model's
tasks were among its fine-tuning demonstrations. More than 0 is a violation: this exits 1 at once
with a message saying so. A checkpoint that does not list its demonstrations is "not checkable"
(reported as such). The tlm records sets must come from the same checkpoint (their .ckpt file
says which; another one exits 1 too), so that the check covers TLM-10xg and TLM-32xg as well.

`tlm run` exits 1 and times nothing when any set fails verification. Then the sets that failed
("verify (NAME schedules): FAIL") are FAIL in the report, never a time, and the run is repeated
without them. If it fails otherwise (a crash, out of memory, --timeout), the Halide autoscheduler
sets (their autoscheduler re-runs inside `tlm run`) are moved to runs of their own and the rest is
repeated. Sets in --separate, and adams-greedy next to adams (HL_BEAM_SIZE is per process), are
timed in runs of their own from the start (each beside the default schedules).

Writes RESULTS/final/<model>.t<T>.{log (every attempt, appended), csv, json (status of every set,
held-out check, coverage, compile and generation times, the machine)} and <model>.t<T>.<set>.csv
for the sets timed on their own. A model whose status is complete for the same records and
checkpoint is skipped unless --redo.
"""
import argparse
import atexit
import csv
import gzip
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
HALIDE = {"halide-mullapudi2016": "mullapudi", "halide-li2018": "li",
          "halide-adams2019": "adams", "halide-adams2019-greedy": "adams-greedy"}


_UNPACK_DIR = None


def unpacked(gz_path):
    """gz_path's records, decompressed into a temporary directory removed at exit."""
    global _UNPACK_DIR
    if _UNPACK_DIR is None:
        _UNPACK_DIR = tempfile.mkdtemp(prefix="heldout-records-")
        atexit.register(shutil.rmtree, _UNPACK_DIR, True)
    out = os.path.join(_UNPACK_DIR, os.path.basename(gz_path)[:-3])
    with gzip.open(gz_path, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


# Strategy -> the short name of its sets (the tag is the strategy and its trials per task).
_STRATEGY_SHORT = (("tlm-evolutionary", "tlmevo"), ("expert-evolutionary", "expevo"),
                   ("evolutionary", "evo"), ("random", "random"), ("tlm", "tlm"))


def _known_set_name(tag):
    """The set name of a set's tag (an autoscheduler's, or a strategy and a budget), else None."""
    if tag in HALIDE:
        return HALIDE[tag]
    for prefix, short in _STRATEGY_SHORT:
        m = re.fullmatch(re.escape(prefix) + r"(\d+)", tag)
        if m:
            return short + m.group(1)
    return None


def set_name(tag):
    """Records tag (strategy + trials per task) -> schedule-set name."""
    return _known_set_name(tag) or re.sub(r"[^A-Za-z0-9_.-]", "-", tag)


def is_set_tag(tag):
    """Whether `tag` names a set: an autoscheduler's, or a strategy and its trials per task."""
    return _known_set_name(tag) is not None


def order_key(name):
    """tlm, tlm<N>, tlmevo<N>, expevo<N>, evo<N>, random<N>, the autoschedulers, the rest."""
    groups = ["tlm", "tlmevo", "expevo", "evo", "random"]
    m = re.fullmatch(r"([a-z]+?)(\d*)", name)
    if name == "tlm":
        return (0, 0, name)
    if m and m.group(1) in groups and m.group(2):
        return (1 + groups.index(m.group(1)), int(m.group(2)), name)
    auto = ["mullapudi", "li", "adams", "adams-greedy"]
    if name in auto:
        return (10 + auto.index(name), 0, name)
    return (20, 0, name)


def sha16(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


def cpuinfo():
    """The first processor's /proc/cpuinfo fields ({} where it cannot be read)."""
    f = {}
    try:
        for line in open("/proc/cpuinfo"):
            k, _, v = line.partition(":")
            f.setdefault(k.strip(), v.strip())
    except OSError:
        pass
    return f


def cpu_model_name():
    return cpuinfo().get("model name", "unknown")


def cpu_id():
    """This machine as a record's hardware key names it (hardware.cc): vendor-family-model."""
    f = cpuinfo()
    vendor = {"AuthenticAMD": "amd", "GenuineIntel": "intel"}.get(f.get("vendor_id"), "other")
    return f"{vendor}-{f.get('cpu family')}-{f.get('model')}" if "model" in f else None


def records_machines(path):
    """The cpu= of the hardware keys of a records file's error-free records (read to the end)."""
    seen = set()
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        for line in f:
            m = re.search(r'"hardware":"[^"]*cpu=([^",]+)', line)
            if m and '"error":""' in line:
                seen.add(m.group(1))
    return seen


def parse_run(text):
    """What a `tlm run --schedules` output says, per set."""
    p = {"heldout": {}, "verify": {}, "coverage": {}, "written_s": None, "compile_s": {},
         "hardware": None, "tasks": None}
    for line in text.splitlines():
        m = re.match(r"(\S+): (\d+) of (\d+) tasks were among the model's fine-tuning "
                     r"demonstrations", line)
        if m:
            p["heldout"][m.group(1)] = {"seen": int(m.group(2)), "tasks": int(m.group(3))}
        # The zero-shot ranker (--zero-shot ranker) lists the tasks it learned from too.
        m = re.match(r"(\S+): (\d+) of (\d+) tasks were among the ranker's training tasks", line)
        if m:
            p["heldout"][m.group(1) + " ranker"] = {"seen": int(m.group(2)),
                                                    "tasks": int(m.group(3))}
        m = re.match(r"(\S+): the checkpoint does not list the tasks it was fine-tuned on", line)
        if m:
            p["heldout"][m.group(1)] = {"checkable": False}
        m = re.match(r"verify \((\S+) schedules\): (PASS|FAIL)", line)
        if m:
            p["verify"][m.group(1)] = m.group(2)
        m = re.match(r"verify: (PASS|FAIL)", line)
        if m:
            p["verify"]["default"] = m.group(1)
        m = re.match(r"(\S+): the best recorded program of (\d+) of (\d+) tasks on (\S+) \(", line)
        if m:
            p["coverage"][m.group(1)] = [int(m.group(2)), int(m.group(3))]
            p["hardware"] = m.group(4)
        m = re.match(r"tlm: (\d+) schedules written in ([0-9.]+) s", line)
        if m:
            p["written_s"] = float(m.group(2))
        if line.startswith("compile:"):
            for name, secs in re.findall(r"(\S+) ([0-9.]+) s", line[len("compile:"):]):
                p["compile_s"][name] = float(secs)
        m = re.match(r"model .*; \d+ nodes -> (\d+) tasks", line)
        if m:
            p["tasks"] = int(m.group(1))
    return p


def read_e2e(path):
    """{set: (ms, speedup over default)} from a `tlm run --csv` file."""
    out = {}
    if path and os.path.exists(path):
        for r in csv.DictReader(open(path)):
            if r["task"] == "e2e":
                out[r["schedules"]] = (float(r["ms"]), float(r["speedup_over_default"]))
    return out


def run_logged(cmd, log, timeout, env=None, cwd=None):
    """Runs cmd with its output appended to log; (exit code or 'timeout', the output)."""
    with open(log, "a") as f:
        f.write(f"== {time.strftime('%F %T')} {' '.join(cmd)}\n")
        f.flush()
        start = f.tell()
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=cwd,
                             env=dict(os.environ, **(env or {})), start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
            rc = "timeout"
        f.write(f"== exit {rc}\n")
    with open(log, errors="replace") as f:
        f.seek(start)
        return rc, f.read()


def discover_sets(results, m, t, ckpt, ckpt_sha):
    """{name: {tag, records, source, status}}: every records file of model m at t threads in
    RESULTS/records (a .jsonl.gz without its .jsonl unpacked into a temporary directory). Exits
    when a set was measured on another machine, or a tlm set was tuned with another checkpoint
    than ckpt."""
    rec_dir = os.path.join(results, "records")
    prefix, sets = f"{m}.t{t}.", {}
    files = sorted(os.listdir(rec_dir)) if os.path.isdir(rec_dir) else []
    for f in files:
        # Committed record sets are gzipped: a .jsonl.gz without its .jsonl is unpacked into a
        # temporary directory for `tlm run` (the signature below still names the .gz).
        gz = f.endswith(".jsonl.gz") and f[:-3] not in files
        if f.startswith(prefix) and (f.endswith(".jsonl") or gz) and \
                os.path.getsize(os.path.join(rec_dir, f)):
            tag = f[len(prefix):-len(".jsonl.gz" if gz else ".jsonl")]
            path = os.path.join(rec_dir, f)
            if "," in path or "=" in os.path.basename(path):
                sys.exit(f"{path}: a records path for --schedules may not have ',' or '='")
            name = set_name(tag)
            if name in sets or name in ("tlm", "default"):
                sys.exit(f"{path}: set name '{name}' taken twice")
            sets[name] = {"tag": tag, "records": unpacked(path) if gz else path, "source": path,
                          "status": "not run"}
    # Records of another machine would not match a task here (`tlm run` gives those tasks the
    # default schedule): stop before anything is overwritten, never time such a set.
    here = cpu_id()
    for name, s in sets.items():
        there = records_machines(s["source"])
        if here and there and here not in there:
            sys.exit(f"error: {name} ({s['source']}) was measured on cpu={','.join(sorted(there))}, "
                     f"this machine is cpu={here}: its latencies mean nothing here. Use a results "
                     f"directory per machine (RESULTS=...), or tune again")
    # The tlm records must be the checkpoint's own (one held-out check covers them all).
    for name, s in sets.items():
        if s["tag"].startswith("tlm"):
            side = re.sub(r"\.gz$", "", s["source"]) + ".ckpt"
            if not os.path.exists(side):
                s["note"] = "the checkpoint it was tuned with is not recorded"
                continue
            tuned = open(side).read().split()
            if tuned and tuned[0] != ckpt_sha:
                sys.exit(f"error: {name} ({s['records']}) was tuned with checkpoint "
                         f"{' '.join(tuned[1:])} (sha {tuned[0]}), but TLM-1xg would use {ckpt} "
                         f"(sha {ckpt_sha}): set TLM_MODEL to the tuned one, or tune again")
    return sets


def add_model_args(ap, tlm_help="the tlm binary (run.sh passes TLM_BIN)"):
    """The arguments final.py and oneproc.py share: the model, where its records and ONNX file
    are, the thread count, the checkpoint of TLM-1xg, the layout, the tlm binary, --redo."""
    ap.add_argument("model")
    ap.add_argument("--results", required=True)
    ap.add_argument("--onnx-dir", required=True)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--tlm-model", help="checkpoint of TLM-1xg (default models/tlm.ckpt)")
    ap.add_argument("--tlm-ranker", help="zero-shot ranker of TLM-1xg (default models/ranker.json)")
    ap.add_argument("--layout", default="auto", help="tlm's --layout (as the records were tuned)")
    ap.add_argument("--tlm", default=os.path.join(ROOT, "build", "tlm"), help=tlm_help)
    ap.add_argument("--redo", action="store_true")


def shipped_file(given, default, what):
    """(absolute path, sha16) of a --tlm-model / --tlm-ranker file, or of the shipped one under
    models/ when not given; exits with a message naming `what` when it is missing."""
    path = os.path.abspath(given or os.path.join(ROOT, "models", default))
    if not os.path.exists(path):
        sys.exit(f"no {what} {path}")
    return path, sha16(path)


def model_inputs(a):
    """(ONNX file, checkpoint, its sha16) of parsed add_model_args arguments; exits with a
    message when either file is missing. Makes a.results and a.onnx_dir absolute."""
    a.results, a.onnx_dir = os.path.abspath(a.results), os.path.abspath(a.onnx_dir)
    onnx = os.path.join(a.onnx_dir, a.model + ".onnx")
    if not os.path.exists(onnx):
        sys.exit(f"{a.model}: no {onnx} (run.sh prepares it)")
    return (onnx,) + shipped_file(a.tlm_model, "tlm.ckpt", "checkpoint")


def ranker_input(a):
    """(path, sha16) of the zero-shot ranker TLM-1xg uses: it chooses every task's program, so
    a run's identity includes it as it includes the checkpoint. Exits when it is missing."""
    return shipped_file(a.tlm_ranker, "ranker.json", "zero-shot ranker")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_model_args(ap)
    ap.add_argument("--cpu", help="pin tlm run and the peers to this core (taskset)")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--turns", type=int, default=6,
                    help="`tlm run --turns`: the sets take this many turns of repeat/turns runs "
                         "(the machine's speed drifts by 15-30%% within minutes: two turns let one "
                         "slow turn decide a set's time)")
    ap.add_argument("--peer-repeats", type=int, default=10)
    ap.add_argument("--separate", default="", help="set names timed in runs of their own")
    ap.add_argument("--timeout", type=float, default=10800)
    a = ap.parse_args()

    m, t = a.model, a.threads
    onnx, ckpt, ckpt_sha = model_inputs(a)
    ranker, ranker_sha = ranker_input(a)
    fin = os.path.join(a.results, "final")
    os.makedirs(fin, exist_ok=True)
    base = os.path.join(fin, f"{m}.t{t}")
    log = base + ".log"

    sets = discover_sets(a.results, m, t, ckpt, ckpt_sha)
    names = ["tlm"] + sorted(sets, key=order_key)
    sets["tlm"] = {"tag": "tlm0", "records": None, "status": "not run",
                   "note": "zero-shot program per task (tlm run --zero-shot default), no measurement"}

    signature = {"sets": {n: [s["source"], os.path.getsize(s["source"]),
                              int(os.path.getmtime(s["source"]))]
                          for n, s in sets.items() if s["records"]},
                 "ckpt": ckpt_sha, "ranker": ranker_sha, "repeat": a.repeat, "turns": a.turns,
                 "cpu": a.cpu}
    status_path = base + ".json"
    if os.path.exists(status_path) and not a.redo:
        old = json.load(open(status_path))
        if old.get("complete") and old.get("signature") == signature:
            print(f"== {m} (threads {t}): finished earlier with the same records, checkpoint "
                  f"and ranker (skipped; REDO=1 runs it again)")
            return
    pin = ["taskset", "-c", str(a.cpu)] if a.cpu is not None else []
    st = {"model": m, "threads": t, "onnx": onnx, "cpu": a.cpu, "cpu_model": cpu_model_name(),
          "started": time.strftime("%F %T"), "checkpoint": {"path": ckpt, "sha": ckpt_sha},
          "ranker": {"path": ranker, "sha": ranker_sha}, "signature": signature, "heldout": {},
          "sets": sets, "runs": [], "peers": {}, "hardware": None, "complete": False,
          "order": names}

    def save():
        with open(status_path + ".tmp", "w") as f:
            json.dump(st, f, indent=1, sort_keys=True)
        os.replace(status_path + ".tmp", status_path)

    def peers(which):
        py = os.path.join(ROOT, "bench", ".venv", "bin", "python")
        out = f"{os.path.join(fin, 'peers')}.{m}.t{t}.{which}.csv"
        if not os.path.exists(py):
            st["peers"][which] = {"error": "bench/.venv missing (bench/setup.sh)"}
            return
        print(f"   {time.strftime('%H:%M:%S')} peers ({which}): ONNX Runtime, PyTorch eager", flush=True)
        rc, text = run_logged(pin + [py, "peers.py", "--onnx-dir", a.onnx_dir, "--threads", str(t),
                                     "--repeats", str(a.peer_repeats), "--csv", out, m],
                              base + ".peers.log", a.timeout, cwd=os.path.join(ROOT, "bench", "e2e"))
        st["peers"][which] = {"csv": out} if rc == 0 else {"error": f"exit {rc}: see {base}.peers.log"}
        if rc != 0:
            print(f"     peers failed (exit {rc}): see {base}.peers.log")
        for line in text.splitlines():
            if line.startswith(m + ":"):
                print("     " + line)

    def tlm_run(run_sets, csv_path):
        """One `tlm run` of these sets (beside the defaults); returns (rc, parsed output)."""
        specs = ["tlm" if n == "tlm" else f"{n}={sets[n]['records']}" for n in run_sets]
        cmd = pin + [a.tlm, "run", onnx, "--threads", str(t),
                     "--repeat", str(a.repeat), "--turns", str(a.turns),
                     "--schedules", ",".join(specs), "--csv", csv_path,
                     "--layout", a.layout]
        if "tlm" in run_sets:
            cmd += ["--model", ckpt, "--ranker", ranker]
        env = {"HL_BEAM_SIZE": "1"} if "adams-greedy" in run_sets else {}
        print(f"   {time.strftime('%H:%M:%S')} tlm run: default, {', '.join(run_sets)}", flush=True)
        rc, text = run_logged(cmd, log, a.timeout, env=env)
        p = parse_run(text)
        st["runs"].append({"sets": run_sets, "csv": csv_path, "exit": rc, "env": env,
                           "compile_s": p["compile_s"], "verify": p["verify"]})
        st["hardware"] = st["hardware"] or p["hardware"]
        for n, h in p["heldout"].items():
            st["heldout"][n] = h
            if h.get("seen", 0) > 0:
                what = ("the training tasks of the zero-shot ranker" if n.endswith(" ranker")
                        else f"the fine-tuning demonstrations of {ckpt}")
                st["violation"] = (f"{n}: {h['seen']} of {h['tasks']} tasks of {m} were among "
                                   f"{what}")
                save()
                print(f"\nHELD-OUT VIOLATION: {st['violation']}.\nThis checkpoint has seen "
                      f"tasks of an evaluation model: its numbers are not a held-out evaluation. "
                      f"Stopped ({log}).", file=sys.stderr)
                sys.exit(1)
        for n, cov in p["coverage"].items():
            if n in sets:
                sets[n]["coverage"] = cov
        if p["written_s"] is not None:
            sets["tlm"]["written_s"] = p["written_s"]
        for line in text.splitlines():
            if line.startswith(("verify", "end-to-end:")) or "tasks were among" in line or \
                    "does not list" in line or "best recorded program" in line:
                print("     " + line)
        if rc != 0:
            tail = [x for x in text.splitlines() if x.startswith("error")][-1:]
            print(f"     exit {rc}{': ' + tail[0] if tail else ''}")
        return rc, p

    print(f"== {time.strftime('%F %T')} {m}: threads {t}{', core ' + str(a.cpu) if pin else ''}; "
          f"sets: {', '.join(names)}", flush=True)
    peers("a")
    save()

    separate = [n for n in names if n in a.separate.replace(",", " ").split()]
    if "adams-greedy" in names and "adams" in names and "adams-greedy" not in separate:
        separate.append("adams-greedy")
    shared = [n for n in names if n not in separate]
    failed_run = None
    while shared:
        rc, p = tlm_run(shared, base + ".csv")
        if rc == 0:
            e2e = read_e2e(base + ".csv")
            for n in shared:
                if n in e2e:
                    sets[n].update(status="timed", run="shared", csv=base + ".csv",
                                   ms=e2e[n][0], speedup=e2e[n][1])
            st["default_ms"] = e2e.get("default", (None,))[0]
            break
        fails = [n for n, v in p["verify"].items() if v == "FAIL"]
        if "default" in fails:
            failed_run = "the default schedules failed verification"
            break
        if fails:
            for n in fails:
                sets[n].update(status="FAIL", note="verification failed (see the log)")
            shared = [n for n in shared if n not in fails]
            continue
        auto = [n for n in shared if sets[n]["tag"] in HALIDE]
        if auto:
            for n in auto:
                sets[n]["note"] = f"timed on its own: the shared run failed (exit {rc})"
            separate += auto
            shared = [n for n in shared if n not in auto]
            continue
        failed_run = f"tlm run failed (exit {rc}): see {log}"
        break
    if failed_run:
        for n in shared:
            if sets[n]["status"] == "not run":
                sets[n].update(status="failed", note=failed_run)
    save()
    for n in separate:
        own = f"{base}.{n}.csv"
        rc, p = tlm_run([n], own)
        if rc == 0:
            e2e = read_e2e(own)
            if n in e2e:
                sets[n].update(status="timed", run="own", csv=own, ms=e2e[n][0], speedup=e2e[n][1],
                               own_default_ms=e2e.get("default", (None,))[0])
        elif p["verify"].get(n) == "FAIL":
            sets[n].update(status="FAIL", note="verification failed (see the log)")
        else:
            sets[n].update(status="failed", note=f"its own tlm run failed (exit {rc}): see {log}")
        save()
    peers("b")
    st["finished"] = time.strftime("%F %T")
    st["complete"] = (failed_run is None and all(s["status"] in ("timed", "FAIL") for s in sets.values())
                      and all("csv" in st["peers"].get(w, {}) for w in ("a", "b")))
    save()
    for n in names:
        s = sets[n]
        what = f"{s['ms']:.2f} ms ({s['speedup']:.2f}x default)" if s["status"] == "timed" else s["status"]
        print(f"     {n:14s} {what}")


if __name__ == "__main__":
    main()
