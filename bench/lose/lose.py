"""Where tlm loses: per task of a model, tlm's best known program next to the time ONNX Runtime
spends on the same ONNX nodes, sorted by the time lost. Driven by bench/lose/run.sh.

    lose.py ort MODEL... --threads N       profile ONNX Runtime (bench/.venv): per ORT node, the
                                           median kernel time over --runs runs after --warmup,
                                           and the optimized graph (to map fused nodes back)
    lose.py best MODEL --threads N         the best three sentences of each task in the records
                                           (the run.sh `final` step times them again with tlm
                                           measure; the fastest counts)
    lose.py drift MODEL --threads N        after the final step: the tasks whose final time is
                                           above --ratio (1.3) x their records' best; exit 3 when
                                           they carry over --share (0.2) of the model's time (the
                                           machine in a slow stretch: run.sh times them again)
    lose.py table --threads N MODEL...     join: tlm's task map (`tlm extract --json`), its
                                           records (best re-measured program per task), the
                                           measured peak and ORT's profile -> lose_<N>t.csv;
                                           then lose.md from every lose_*t.csv present

Mapping ORT onto tlm. ORT renames and fuses nodes; each ORT node is mapped onto one node of the
original ONNX graph, its anchor, by the first rule that applies:
  1. its name is an original node's name;
  2. one of its outputs is an original tensor: the anchor is that tensor's producer (a fused node
     writes the last fused node's output: SkipLayerNormalization -> the LayerNormalization);
  3. its name minus "_nchwc" is an original tensor (ORT's NCHWc convolutions are named after
     their output tensor): that tensor's producer;
  4. the longest original node name its name starts with ("/l.0/key/MatMul/MatMulAddFusion",
     "/l.0/Reshape_3_new_reshape").
The anchor's tlm task instance (the instance whose `ops` contain it; tlm names the nodes it
expands an ONNX node into "NAME/suffix") gets the ORT node's time. ORT nodes without an anchor
(ORT's own reshapes, layout reorders) form "ORT-only" rows; anchors tlm folded away (constant
subgraphs) form "not in tlm" rows. When ORT fuses nodes that tlm put into different tasks, the
whole time lands on the task of the fused node's output (the `ort_spans` column names the other
tasks its original nodes belong to), so such rows are approximate; totals are exact.

tlm's time: per task, the fastest program of the records, each sentence with its latest
re-measurement (the tuner's step 4: strategy "<s>/remeasure") if it has one, else its first
measurement; replaced by the fastest of results/lose/final/MODEL.<N>t.jsonl when run.sh's `final`
step timed the best three again (with `tlm measure`, right before ORT's profile); x weight. GFLOP/s from tlm's FLOP count; % of peak from bench/results/lose/peak_<N>t.txt
(tlm_bench_kernels --peak-only on the same cores, the highest measurement of the run).
"""
import argparse
import collections
import csv
import glob
import json
import os
import re
import statistics
import sys
import tempfile

# LOSE_OUT (env) puts the results elsewhere (e.g. one directory per machine); run.sh passes it.
OUT = os.path.normpath(os.environ.get("LOSE_OUT") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "results", "lose"))


def fnv1a(s):
    h = 1469598103934665603
    for b in s.encode():
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


# --- ORT profile --------------------------------------------------------------------------------


def profile_ort(model, onnx_path, threads, warmup, runs, out_dir, tag=""):
    import numpy as np
    import onnxruntime as ort

    with tempfile.TemporaryDirectory() as tmp:
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.log_severity_level = 3  # no warning about saving an NCHWc-optimized graph
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(tmp, "profile")
        # The optimized graph (fused nodes with their inputs and outputs); weights stay out of it.
        so.optimized_model_filepath = os.path.join(tmp, "optimized.onnx")
        so.add_session_config_entry("session.optimized_model_external_initializers_file_name",
                                    "weights.bin")
        so.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", "1024")
        sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
        feed = {}
        rng = np.random.default_rng(0)
        for i in sess.get_inputs():
            if "float" in i.type:
                feed[i.name] = rng.standard_normal(i.shape).astype(np.float32)
            else:
                feed[i.name] = rng.integers(0, 1000, i.shape).astype(np.int64)
        for _ in range(warmup + runs):
            sess.run(None, feed)
        trace = json.load(open(sess.end_profiling()))
        import onnx

        g = onnx.load(so.optimized_model_filepath, load_external_data=False).graph
        graph = [{"name": n.name, "op": n.op_type, "domain": n.domain, "inputs": list(n.input),
                  "outputs": list(n.output)} for n in g.node]

    per_node = collections.defaultdict(list)
    ops = {}
    run_ms = []
    for e in trace:
        if e.get("cat") == "Session" and e.get("name") == "model_run":
            run_ms.append(e["dur"] / 1e3)
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        name = e["name"][: -len("_kernel_time")]
        per_node[name].append(e["dur"] / 1e3)
        ops[name] = e["args"].get("op_name", "?")
    nodes = {}
    for name, ts in per_node.items():
        if len(ts) != warmup + runs:
            sys.exit(f"{model}: ORT node '{name}' ran {len(ts)} times in {warmup + runs} runs")
        nodes[name] = {"op": ops[name], "median_ms": statistics.median(ts[warmup:]),
                       "min_ms": min(ts[warmup:])}
    result = {
        "model": model, "threads": threads, "onnxruntime": ort.__version__, "warmup": warmup,
        "runs": runs, "model_run_median_ms": statistics.median(run_ms[warmup:]),
        "model_run_min_ms": min(run_ms[warmup:]),
        "nodes": nodes, "graph": graph,
    }
    path = os.path.join(out_dir, f"{model}.{threads}t{'.' + tag if tag else ''}.json")
    with open(path, "w") as f:
        json.dump(result, f)
    kernels = sum(n["median_ms"] for n in nodes.values())
    print(f"{model}: ORT {threads} thread(s): {result['model_run_median_ms']:.2f} ms per run "
          f"(median of {runs}), {kernels:.2f} ms in {len(nodes)} kernels -> {path}", flush=True)


# --- tlm records --------------------------------------------------------------------------------


def best_per_task(records_path, threads, strategy=None, top=1):
    """task key hash -> the `top` fastest (seconds, sentence, re-measured?), fastest first. Each
    sentence counts with its latest re-measurement if it has one (the tuner's step 4), else its
    first measurement. strategy None: every strategy's records (a union of tuning runs is one
    pool, so an expert program measured once still competes with another run's re-measured
    best)."""
    again, first = collections.defaultdict(dict), collections.defaultdict(dict)
    if not os.path.exists(records_path):
        print(f"warning: no records {records_path}: tlm's column stays empty", file=sys.stderr)
        return {}
    with open(records_path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by a kill
            if r["error"] or f"cores={threads}," not in r["hardware"] + ",":
                continue
            k = fnv1a(r["task_key"])
            base, _, tag = r["strategy"].partition("/")
            if strategy is not None and base != strategy:
                continue
            if tag == "remeasure":
                again[k][r["sentence"]] = r["median_s"]  # the latest re-measurement counts
            elif not tag:
                first[k].setdefault(r["sentence"], r["median_s"])
    best = {}
    for k in set(again) | set(first):
        pool = {s: (t, False) for s, t in first[k].items()}
        pool.update({s: (t, True) for s, t in again[k].items()})
        ranked = sorted((t, s, re) for s, (t, re) in pool.items())
        best[k] = ranked[:top]
    return best


def best_final(final_path, threads):
    """task key hash -> (seconds, sentence, True) from `tlm measure` of the best sentences."""
    best = {}
    with open(final_path) as f:
        for line in f:
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            if r["error"] or f"cores={threads}," not in r["hardware"] + ",":
                continue
            k = fnv1a(r["task_key"])
            if k not in best or r["median_s"] < best[k][0]:
                best[k] = (r["median_s"], r["sentence"], True)
    return best


def final_drift(model, threads, out, ratio, share):
    """The final step against the records: per task (weight = instances, from the maps step) the
    final time over the records' best. Returns (drifting tasks [(task id, final/records)], their
    share of the model's weighted records time, whether that share is over `share`)."""
    final_path = os.path.join(out, "final", f"{model}.{threads}t.jsonl")
    map_path = os.path.join(out, "maps", f"{model}.json")
    for need in (final_path, map_path):
        if not os.path.exists(need):
            sys.exit(f"drift: no {need} (run.sh's final and maps steps write it)")
    recs = best_per_task(os.path.join(out, "records", f"{model}.{threads}t.jsonl"), threads)
    fin = best_final(final_path, threads)
    with open(map_path) as f:
        tasks = json.load(f)["tasks"]
    total = lost = 0.0
    drifting = []
    for task in tasks:
        k = task["key_fnv1a"]
        if k not in recs or k not in fin:
            continue
        w = len(task["instances"])
        before, after = recs[k][0][0], fin[k][0]
        total += w * before
        if after > ratio * before:
            drifting.append((task["id"], after / before))
            lost += w * before
    frac = lost / total if total > 0 else 0.0
    return drifting, frac, frac > share


def read_peak(path):
    best = 0.0
    with open(path) as f:
        for line in f:
            m = re.search(r"peak_gflops=([\d.]+)", line)
            if m:
                best = max(best, float(m.group(1)))
    if best <= 0:
        sys.exit(f"no peak measurement in {path}")
    return best


# --- mapping ------------------------------------------------------------------------------------


class Original:
    """The exported ONNX graph: node names, tensor producers, and tlm's instance of each node."""

    def __init__(self, onnx_path, task_map):
        import onnx

        g = onnx.load(onnx_path, load_external_data=False).graph
        self.op = {n.name: n.op_type for n in g.node}
        self.producer = {o: n.name for n in g.node for o in n.output}
        self.names_by_length = sorted(self.op, key=len, reverse=True)
        self.instance = {}  # original node name -> (task id, instance index)
        for t in task_map["tasks"]:
            for inst in t["instances"]:
                for op in inst["ops"]:
                    name = op["name"]
                    while name not in self.op and "/" in name:  # "NAME/suffix" -> NAME
                        name = name.rsplit("/", 1)[0]
                    self.instance.setdefault(name, (t["id"], inst["index"]))
        self.inputs = {n.name: list(n.input) for n in g.node}
        self.sources = {i.name for i in g.input} | {i.name for i in g.initializer}

    def anchor(self, node):
        if node["name"] in self.op:
            return node["name"], "name"
        for o in node["outputs"]:
            if o in self.producer:
                return self.producer[o], "output"
        if node["name"].endswith("_nchwc") and node["name"][:-6] in self.producer:
            return self.producer[node["name"][:-6]], "nchwc"
        for name in self.names_by_length:
            if node["name"].startswith(name):
                return name, "prefix"
        return None, "ort-only"

    def span(self, anchor, node, limit=64):
        """Original nodes between the ORT node's original inputs and its anchor (for the note
        about fusions across tlm tasks); just the anchor when its inputs were renamed."""
        stop = {t for t in node["inputs"] if t}
        if any(t not in self.producer and t not in self.sources for t in stop):
            return {anchor}  # renamed inputs (NCHWc reorders, ORT's own reshapes)
        seen, todo = {anchor}, [anchor]
        while todo:
            for t in self.inputs[todo.pop()]:
                p = self.producer.get(t)
                if t in stop or p is None or p in seen:
                    continue
                if len(seen) >= limit:
                    return {anchor}
                seen.add(p)
                todo.append(p)
        return seen


def steadiest(stem, ext, run_ms):
    """STEM.EXT (the ort / inmodel steps) and the pairs step's rounds (STEM.rR.EXT): the one whose
    whole run (run_ms(path)) was fastest. This VM has disturbed stretches of minutes in which
    everything runs 10-40% slower (an ORT ResNet-50 profile at 131 ms a run next to one at 109
    and an undisturbed 92): the columns measured alone come from each side's least disturbed
    round, not its last. None when neither exists."""
    paths = [stem + ext] if os.path.exists(stem + ext) else []
    paths += glob.glob(f"{stem}.r*{ext}")
    timed = [(ms, p) for p in paths if (ms := run_ms(p)) is not None]
    return min(timed)[1] if timed else (paths[0] if paths else None)


def ort_run_ms(path):
    return json.load(open(path))["model_run_median_ms"]


def inmodel_run_ms(path):
    return read_inmodel(path)[1]


def model_rows(model, threads, peak, out):
    task_map = json.load(open(os.path.join(out, "maps", f"{model}.json")))
    orig = Original(os.path.join(out, "..", "e2e", "onnx", f"{model}.onnx"), task_map)
    prof_path = steadiest(os.path.join(out, "ort", f"{model}.{threads}t"), ".json", ort_run_ms)
    if prof_path is None:
        sys.exit(f"{model}: no ORT profile for {threads} thread(s) in {out}/ort (run the ort step)")
    prof = json.load(open(prof_path))
    records = os.path.join(out, "records", f"{model}.{threads}t.jsonl")
    best = {k: ranked[0] for k, ranked in best_per_task(records, threads).items()}
    final = os.path.join(out, "final", f"{model}.{threads}t.jsonl")
    if os.path.exists(final):  # the same programs timed again next to ORT's profile
        best.update(best_final(final, threads))
    inmodel_path = steadiest(os.path.join(out, "inmodel", f"{model}.{threads}t"), ".csv",
                             inmodel_run_ms)
    inmodel, tlm_run_ms = read_inmodel(inmodel_path) if inmodel_path else ({}, None)
    ort_ms, ort_ops, spans, extra = ort_by_task(prof, orig)
    pairs = paired_rounds(model, threads, out, orig)

    rows = []
    for t in task_map["tasks"]:
        b = best.get(t["key_fnv1a"])
        tlm_s = b[0] if b else None
        gflop = t["flops"] * 1e-9
        # Instances that are views of their input (task map version 2) do not run in tlm.
        runs = sum(1 for i in t["instances"] if not i.get("view", False))
        row = {
            "model": model, "task": t["id"], "kind": t["kind"], "weight": t["weight"],
            "gflop": gflop * t["weight"],
            "tlm_ms": tlm_s * 1e3 * runs if b else (0.0 if runs == 0 else None),
            "tlm_gflops": gflop / tlm_s if b and gflop else None,
            "tlm_inmodel_ms": inmodel.get(t["id"]),
            "ort_ms": ort_ms.get(t["id"], 0.0),
            "ort_ops": " ".join(f"{op}x{c}" for op, c in sorted(ort_ops[t["id"]].items())),
            "ort_spans": " ".join(str(s) for s in sorted(spans[t["id"]])),
            "remeasured": b[2] if b else False,
            "sentence": b[1] if b else "",
        }
        row.update(pairs["tasks"].get(t["id"], {}))
        row["ort_gflops"] = row["gflop"] / (row["ort_ms"] * 1e-3) if row["ort_ms"] > 0 and gflop else None
        rows.append(row)
    for (what, op), ms in sorted(extra.items()):
        rows.append({"model": model, "task": what, "kind": op, "weight": "", "gflop": 0.0,
                     "tlm_ms": 0.0, "tlm_gflops": None, "tlm_inmodel_ms": None, "ort_ms": ms,
                     "ort_gflops": None,
                     "ort_ops": op, "ort_spans": "", "remeasured": "", "sentence": ""})
    for r in rows:
        r["tlm_pct_peak"] = 100 * r["tlm_gflops"] / peak if r["tlm_gflops"] else None
        r["ort_pct_peak"] = 100 * r["ort_gflops"] / peak if r["ort_gflops"] else None
        r["lost_ms"] = r["tlm_ms"] - r["ort_ms"] if r["tlm_ms"] is not None else None
    totals = {"model": model, "ort_model_run_ms": prof["model_run_median_ms"],
              "ort_kernels_ms": sum(n["median_ms"] for n in prof["nodes"].values()),
              "onnxruntime": prof["onnxruntime"], "runs": prof["runs"], "tlm_run_ms": tlm_run_ms}
    totals.update(pairs["model"])
    return rows, totals


def ort_by_task(prof, orig):
    """ORT's profile mapped onto tlm's tasks: task id -> ms, task id -> ORT op counts, task id ->
    the other tasks its fused nodes span, and the ORT-only / folded rows."""
    graph = {n["name"]: n for n in prof["graph"]}
    ort_ms = collections.Counter()  # task id -> ms
    ort_ops = collections.defaultdict(collections.Counter)
    spans = collections.defaultdict(set)
    extra = collections.defaultdict(float)  # ("ORT-only" | "not in tlm", op) -> ms
    for name, n in prof["nodes"].items():
        node = graph.get(name, {"name": name, "inputs": [], "outputs": []})
        anchor, _ = orig.anchor(node)
        if anchor is None:
            extra[("ORT-only", n["op"])] += n["median_ms"]
            continue
        if anchor not in orig.instance:
            extra[("not in tlm (folded)", f"{n['op']} ({orig.op[anchor]})")] += n["median_ms"]
            continue
        task, _ = orig.instance[anchor]
        ort_ms[task] += n["median_ms"]
        ort_ops[task][n["op"]] += 1
        for o in orig.span(anchor, node):
            if o in orig.instance and orig.instance[o][0] != task:
                spans[task].add(orig.instance[o][0])
    return ort_ms, ort_ops, spans, extra


def paired_rounds(model, threads, out, orig):
    """run.sh's `pairs` step: R rounds, each an ORT profile (ort/MODEL.<N>t.rR.json) right
    before one tlm run of the same programs (inmodel/MODEL.<N>t.rR.csv). This VM switches between
    a fast and a slow mode every few minutes, so two columns measured minutes apart make no
    difference; the two halves of a round are seconds apart. Per task: the medians over rounds
    of tlm's in-model time, ORT's time on the same nodes, and of their difference in each round
    (pair_lost_ms) with its lowest and highest round; per model: the median over rounds of tlm's
    whole run / ORT's whole run. Rounds missing either half are skipped."""
    rounds = []
    for path in sorted(glob.glob(os.path.join(out, "ort", f"{model}.{threads}t.r*.json"))):
        tag = re.search(r"\.(r\d+)\.json$", path).group(1)
        csv_path = os.path.join(out, "inmodel", f"{model}.{threads}t.{tag}.csv")
        if not os.path.exists(csv_path):
            continue
        prof = json.load(open(path))
        tlm, tlm_run = read_inmodel(csv_path)
        if not tlm or tlm_run is None:
            continue
        ort_ms = ort_by_task(prof, orig)[0]
        rounds.append((tlm, tlm_run, ort_ms, prof["model_run_median_ms"]))
    if not rounds:
        return {"tasks": {}, "model": {}}
    tasks = {}
    for t in rounds[0][0]:
        d = [r[0][t] - r[2].get(t, 0.0) for r in rounds if t in r[0]]
        tasks[t] = {"pair_tlm_ms": statistics.median(r[0][t] for r in rounds if t in r[0]),
                    "pair_ort_ms": statistics.median(r[2].get(t, 0.0) for r in rounds),
                    "pair_lost_ms": statistics.median(d), "pair_lost_lo": min(d),
                    "pair_lost_hi": max(d), "pair_rounds": len(d)}
    ratios = [r[1] / r[3] for r in rounds]
    return {"tasks": tasks, "model": {
        "pair_rounds": len(rounds), "pair_run_ratio": statistics.median(ratios),
        "pair_run_ratio_lo": min(ratios), "pair_run_ratio_hi": max(ratios),
        "pair_tlm_run_ms": statistics.median(r[1] for r in rounds),
        "pair_ort_run_ms": statistics.median(r[3] for r in rounds)}}


def read_inmodel(path):
    """run.sh's inmodel step: {task id: ms summed over its instances} of the `best` set, and that
    set's whole run in ms; ({}, None) when the step has not run."""
    if not os.path.exists(path):
        return {}, None
    per_task, run_ms = {}, None
    for r in csv.DictReader(open(path)):
        if r["schedules"] != "best":
            continue
        if r["task"] == "e2e":
            run_ms = float(r["ms"])
        else:
            per_task[int(r["task"])] = float(r["ms"]) * int(r["instances"])
    return per_task, run_ms


COLUMNS = ["model", "task", "kind", "weight", "gflop", "tlm_ms", "tlm_gflops", "tlm_pct_peak",
           "tlm_inmodel_ms", "ort_ms", "ort_gflops", "ort_pct_peak", "lost_ms", "ort_ops",
           "ort_spans", "remeasured", "pair_tlm_ms", "pair_ort_ms", "pair_lost_ms",
           "pair_lost_lo", "pair_lost_hi", "pair_rounds", "sentence"]


def fmt(v, digits=3):
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def write_table(threads, models, out):
    peak = read_peak(os.path.join(out, f"peak_{threads}t.txt"))
    rows, totals = [], []
    for m in models:
        r, t = model_rows(m, threads, peak, out)
        rows += r
        totals.append(t)
    rows.sort(key=lambda r: (r["lost_ms"] is None, -(r["lost_ms"] or 0)))  # untuned tasks last
    path = os.path.join(out, f"lose_{threads}t.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow([fmt(r.get(c), 4) for c in COLUMNS])
        # Totals over the rows both sides have (a task without a valid tlm program is left out).
        both = [r for r in rows if r["tlm_ms"] is not None]
        tlm = sum(r["tlm_ms"] for r in both)
        ort = sum(r["ort_ms"] for r in both)
        total = {"model": "total", "task": f"{len(rows) - len(both)} rows without tlm left out",
                 "gflop": sum(r["gflop"] for r in both), "tlm_ms": tlm,
                 "tlm_inmodel_ms": sum(r["tlm_inmodel_ms"] or 0 for r in both), "ort_ms": ort,
                 "lost_ms": tlm - ort}
        w.writerow([fmt(total.get(c), 4) for c in COLUMNS])
    with open(os.path.join(out, f"totals_{threads}t.json"), "w") as f:
        json.dump({"threads": threads, "peak_gflops": peak, "models": totals}, f, indent=1)
    print(f"{path}: {len(rows)} rows; tlm {tlm:.1f} ms, ORT {ort:.1f} ms over the tasks")


# --- Markdown -----------------------------------------------------------------------------------


def machine():
    """'AMD EPYC (family 23 model 1), 2 CPUs, ISA avx2 fma' from lscpu."""
    import subprocess

    info = dict(l.split(":", 1) for l in subprocess.run(
        ["lscpu"], capture_output=True, text=True).stdout.splitlines() if ":" in l)
    get = lambda k: info.get(k, "?").strip()
    flags = set(get("Flags").split())
    isa = " ".join(f for f in ["avx512f", "avx2", "fma"] if f in flags)
    return (f"{get('Model name')} (family {get('CPU family')} model {get('Model')}), "
            f"{get('CPU(s)')} CPUs, ISA {isa}, L2 {get('L2 cache')}, L3 {get('L3 cache')}")


def markdown(out, top):
    import datetime

    parts = [f"Generated {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC by "
             f"`bench/lose/lose.py md` on {machine()}.\n\n"]
    for path in sorted(glob.glob(os.path.join(out, "lose_*t.csv"))):
        threads = int(re.search(r"lose_(\d+)t\.csv", path).group(1))
        info = json.load(open(os.path.join(out, f"totals_{threads}t.json")))
        rows = list(csv.DictReader(open(path)))
        total = rows.pop()
        parts.append(f"### {threads} thread{'s' if threads > 1 else ''} "
                     f"(fp32 peak {info['peak_gflops']:.1f} GFLOP/s on {threads} core"
                     f"{'s' if threads > 1 else ''}, measured in the same run)\n")
        parts.append("| # | model | task | kind | weight | GFLOP | tlm ms | tlm GFLOP/s | tlm % peak"
                     " | tlm in-model ms | ORT ms | ORT GFLOP/s | ORT % peak | lost ms | ORT nodes |\n"
                     "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
        for i, r in enumerate(rows[:top]):
            def num(c, d):
                return f"{float(r[c]):.{d}f}" if r.get(c) else "-"  # older CSVs lack columns
            spans = f" (+ tasks {r['ort_spans']})" if r["ort_spans"] else ""
            parts.append(
                f"| {i + 1} | {r['model']} | {r['task']} | {r['kind']} | {r['weight']} "
                f"| {num('gflop', 3)} | {num('tlm_ms', 2)} | {num('tlm_gflops', 1)} "
                f"| {num('tlm_pct_peak', 0)} | {num('tlm_inmodel_ms', 2)} "
                f"| {num('ort_ms', 2)} | {num('ort_gflops', 1)} "
                f"| {num('ort_pct_peak', 0)} | {num('lost_ms', 2)} | {r['ort_ops']}{spans} |\n")
        parts.append(f"| | **total** ({len(rows)} rows; {total['task']}) | | | | {float(total['gflop']):.2f} "
                     f"| **{float(total['tlm_ms']):.1f}** | | | {float(total.get('tlm_inmodel_ms') or 0):.1f} "
                     f"| **{float(total['ort_ms']):.1f}** "
                     f"| | | **{float(total['lost_ms']):.1f}** | |\n\n")
        parts.append("Per model (ms): sum over tasks of tlm's best x weight, each task timed alone; "
                     "the same programs' per-task sum inside one whole tlm run, and that run "
                     "(median, the inmodel step; - when not run); ORT's kernel time on the same "
                     "nodes and its whole run (model_run, median, profiler on); each side's least disturbed "
                     "round (the one with the fastest whole run) when the pairs step ran several:\n\n"
                     "| model | tlm tasks alone | tlm tasks in-model | tlm run | ORT kernels "
                     "| ORT run | tlm / ORT kernels | tlm run / ORT run | ORT |\n"
                     "|---|---|---|---|---|---|---|---|---|\n")
        by_model = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
        for r in rows:
            if not r["tlm_ms"]:
                continue
            by_model[r["model"]][0] += float(r["tlm_ms"] or 0)
            by_model[r["model"]][1] += float(r["ort_ms"] or 0)
            by_model[r["model"]][2] += float(r.get("tlm_inmodel_ms") or 0)
        for t in info["models"]:
            a, b, c = by_model[t["model"]]
            run, ort_run = t.get("tlm_run_ms"), t["ort_model_run_ms"]
            inm = f"{c:.1f}" if run else "-"
            run_s = f"{run:.1f}" if run else "-"
            ratio = f"{run / ort_run:.2f}x" if run else "-"
            parts.append(f"| {t['model']} | {a:.1f} | {inm} | {run_s} | {b:.1f} | {ort_run:.1f} "
                         f"| {a / b if b else 0:.2f}x | {ratio} "
                         f"| {t['onnxruntime']}, median of {t['runs']} runs |\n")
        parts.append("\n")
        parts.append(paired_markdown(rows, info, top))
    commands = os.path.join(out, "commands.txt")
    if os.path.exists(commands):
        seen = list(dict.fromkeys(l.rstrip() for l in open(commands) if l.strip()))
        parts.append("Commands run (bench/results/lose/commands.txt, in order, repeats dropped):"
                     "\n\n```\n" + "\n".join(seen) + "\n```\n")
    with open(os.path.join(out, "lose.md"), "w") as f:
        f.write("".join(parts))
    print(os.path.join(out, "lose.md"))


def paired_markdown(rows, info, top):
    """The pairs step's table: in-model tlm vs ORT on the same nodes, in rounds seconds apart,
    sorted by the median time lost per round; '' when the step has not run."""
    paired = [r for r in rows if r.get("pair_rounds")]
    if not paired:
        return ""
    paired.sort(key=lambda r: -float(r["pair_lost_ms"]))
    out = ["Paired rounds (the `pairs` step: each round an ORT profile, then one tlm run of the "
           "same programs, seconds apart; medians over the rounds, and the lowest and highest "
           "round's difference; in-model times, both sides):\n\n"
           "| # | model | task | kind | weight | tlm in-model ms | ORT ms | lost ms (median) "
           "| lost ms (range) | rounds | ORT nodes |\n|---|---|---|---|---|---|---|---|---|---|---|\n"]
    for i, r in enumerate(paired[:top]):
        out.append(f"| {i + 1} | {r['model']} | {r['task']} | {r['kind']} | {r['weight']} "
                   f"| {float(r['pair_tlm_ms']):.2f} | {float(r['pair_ort_ms']):.2f} "
                   f"| {float(r['pair_lost_ms']):.2f} | {float(r['pair_lost_lo']):.2f} to "
                   f"{float(r['pair_lost_hi']):.2f} | {r['pair_rounds']} | {r['ort_ops']} |\n")
    tl = sum(float(r["pair_tlm_ms"]) for r in paired)
    ol = sum(float(r["pair_ort_ms"]) for r in paired)
    out.append(f"| | **total** ({len(paired)} tasks) | | | | **{tl:.1f}** | **{ol:.1f}** "
               f"| **{sum(float(r['pair_lost_ms']) for r in paired):.1f}** | | | |\n\n")
    for t in info["models"]:
        if t.get("pair_rounds"):
            out.append(f"- {t['model']}: tlm's whole run / ORT's whole run, median of "
                       f"{t['pair_rounds']} rounds: **{t['pair_run_ratio']:.3f}** (rounds "
                       f"{t['pair_run_ratio_lo']:.3f} to {t['pair_run_ratio_hi']:.3f}; medians "
                       f"{t['pair_tlm_run_ms']:.1f} vs {t['pair_ort_run_ms']:.1f} ms, ORT with "
                       "its profiler on)\n")
    return "".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    o = sub.add_parser("ort")
    o.add_argument("models", nargs="+")
    o.add_argument("--threads", type=int, required=True)
    o.add_argument("--warmup", type=int, default=3)
    o.add_argument("--runs", type=int, default=20)
    o.add_argument("--onnx-dir", default=os.path.join(OUT, "..", "e2e", "onnx"))
    o.add_argument("--tag", default="", help="written as ort/MODEL.<N>t.TAG.json (the pairs "
                   "step's rounds: r0, r1, ...)")
    t = sub.add_parser("table")
    t.add_argument("models", nargs="+")
    t.add_argument("--threads", type=int, required=True)
    b = sub.add_parser("best")
    b.add_argument("model")
    b.add_argument("--threads", type=int, required=True)
    b.add_argument("--top", type=int, default=3, help="sentences per task (run.sh's final step "
                   "times them all again; the table keeps each task's fastest)")
    d = sub.add_parser("drift")
    d.add_argument("model")
    d.add_argument("--threads", type=int, required=True)
    d.add_argument("--ratio", type=float, default=1.3)
    d.add_argument("--share", type=float, default=0.2)
    md = sub.add_parser("md")
    md.add_argument("--top", type=int, default=25)
    a = ap.parse_args()
    if a.cmd == "ort":
        os.makedirs(os.path.join(OUT, "ort"), exist_ok=True)
        for m in a.models:
            profile_ort(m, os.path.join(a.onnx_dir, m + ".onnx"), a.threads, a.warmup, a.runs,
                        os.path.join(OUT, "ort"), a.tag)
    elif a.cmd == "best":
        best = best_per_task(os.path.join(OUT, "records", f"{a.model}.{a.threads}t.jsonl"),
                             a.threads, top=a.top)
        # Only the model's current tasks (the maps step): records of tasks whose keys changed
        # (e.g. a new weight layout) no longer parse as programs of this model.
        map_path = os.path.join(OUT, "maps", f"{a.model}.json")
        if os.path.exists(map_path):
            keys = {t["key_fnv1a"] for t in json.load(open(map_path))["tasks"]}
            best = {k: v for k, v in best.items() if k in keys}
        for ranked in best.values():
            for _, sentence, _ in ranked:
                print(sentence)
    elif a.cmd == "drift":
        drifting, frac, over = final_drift(a.model, a.threads, OUT, a.ratio, a.share)
        worst = sorted(drifting, key=lambda x: -x[1])
        listed = ", ".join(f"task {i} {r:.2f}x" for i, r in worst[:8])
        if len(worst) > 8:
            listed += f", ... ({len(worst) - 8} more)"
        print(f"{a.model}: {len(drifting)} task(s) timed above {a.ratio}x their records' best "
              f"({100 * frac:.0f}% of the model's time){': ' + listed if listed else ''}")
        if over:
            sys.exit(3)
    elif a.cmd == "table":
        write_table(a.threads, a.models, OUT)
    else:
        markdown(OUT, a.top)


if __name__ == "__main__":
    main()
