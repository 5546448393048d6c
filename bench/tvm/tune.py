"""TVM MetaSchedule on the subgraph benchmark's 23 tasks: the search peer of tlm's strategies.

For each subgraph (bench/subgraph/tasks.txt, built by subgraphs.py): check TVM's untuned build
against onnxruntime, lower it the way MetaSchedule's compile_relax does (legalize, fuse), tune
every TIR function of it with one budget of max(--ks) measurements shared by MetaSchedule's task
scheduler, then build the subgraph from the tuning database, check it against onnxruntime again
and time it. Writes, per subgraph once it is done (so a run can be stopped and resumed; a
subgraph cut short is tuned again from scratch):

  bench/results/tvm/subgraph_<machine>.csv     label, kind, k, best_ms, verified, tune_wall_s,
                                               trials_done; k = 1, 10, 64, 200 and "final"
  bench/results/tvm/subgraph_<machine>.jsonl   every measurement in order (task, ms or error)
  bench/results/tvm/subgraph_<machine>.log     progress, TIR tasks, untuned and tlm latencies
  bench/results/tvm/work/<machine>/<label>/    MetaSchedule's database and logs (not committed)

best_ms after k measurements = sum over the subgraph's TIR functions of (calls x the best latency
among the first k measurements, all functions counted together); a function with no successful
measurement yet counts with its untuned latency (what compiling the subgraph from the database at
that point would give), measured once beforehand and not counted as a measurement. "final" is the whole subgraph built from
the database and timed through the Relax VM (a warm-up, 15 samples of >= 20 ms, median).
Measurements are tlm's (docs/tuning.md): a warm-up call, 5 samples of >= 20 ms, median.

Run it as the README says: `nice -n 19 taskset -c CPU bench/.venv/bin/python bench/tvm/tune.py`
(one core, one thread: TVM_NUM_THREADS=1 and the target's num-cores=1).
"""
import argparse
import csv
import json
import os
import shutil
import statistics
import sys
import time

import subgraphs as sg

KS = [1, 10, 64, 200]
FIELDS = ["label", "kind", "k", "best_ms", "verified", "tune_wall_s", "trials_done"]
RESULTS = os.path.join(sg.BENCH, "results", "tvm")
MEASURE_REPEAT = 5      # samples per candidate, as tlm's harness
FINAL_REPEAT = 15       # samples of the final build, as tlm's re-measurement
MIN_SAMPLE_MS = 20      # each sample repeats the call for at least this long

tvm = sg.import_tvm()
from tvm import relax  # noqa: E402
from tvm.ir.utils import derived_object  # noqa: E402
from tvm.s_tir import meta_schedule as ms  # noqa: E402


class Log:
    def __init__(self, path):
        self.file = open(path, "a")

    def __call__(self, msg):
        line = f"{time.strftime('%H:%M:%S')} {msg}"
        print(line, flush=True)
        self.file.write(line + "\n")
        self.file.flush()


@derived_object
class Recorder(ms.measure_callback.PyMeasureCallback):
    """Every measurement in the order the task scheduler made it: (task id, seconds or None,
    error, seconds since the start)."""

    def __init__(self):
        self.rows = []
        self.start = time.perf_counter()

    def apply(self, task_scheduler, task_id, measure_candidates, builder_results, runner_results):
        for b, r in zip(builder_results, runner_results):
            error = b.error_msg or r.error_msg
            secs = None if error or not r.run_secs else statistics.median(float(x) for x in r.run_secs)
            first_line = str(error).strip().splitlines()[0][:200] if error else ""
            self.rows.append((int(task_id), secs, first_line, time.perf_counter() - self.start))


def evaluator():
    return ms.runner.EvaluatorConfig(number=1, repeat=MEASURE_REPEAT, min_repeat_ms=MIN_SAMPLE_MS,
                                     enable_cpu_cache_flush=False)


def prepare(mod, target):
    """The fusion half of meta_schedule.relax_integration.compile_relax, so that the functions
    tuned here are structurally the ones compile_relax looks up in the database."""
    from tvm.relax import pipeline
    passes = [*pipeline.library_dispatch_passes(target),
              relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(),
              relax.transform.FoldConstant(), relax.transform.FuseOps(), relax.transform.FuseTIR()]
    with target, tvm.transform.PassContext(opt_level=3):
        return tvm.transform.Sequential(passes)(mod)


def untuned_latency(context, target, builder, runner):
    """Seconds of a TIR function as lowered, without a schedule (measured like a candidate)."""
    mod = context.mod
    (b,) = builder.build([ms.builder.BuilderInput(mod, target)])
    if b.error_msg:
        return None
    args = ms.arg_info.ArgInfo.from_entry_func(mod, remove_preproc=True)
    (r,) = [f.result() for f in runner.run([ms.runner.RunnerInput(b.artifact_path, "cpu", args)])]
    shutil.rmtree(os.path.dirname(b.artifact_path), ignore_errors=True)
    return None if r.error_msg else statistics.median(float(x) for x in r.run_secs)


def curve(rows, weights, untuned, ks):
    """{k: best subgraph seconds after k measurements} (None if a function has no latency)."""
    best = [None] * len(weights)

    def total():
        each = [u if b is None else b for b, u in zip(best, untuned)]
        return None if None in each else sum(w * x for w, x in zip(weights, each))

    out = {}
    for n, (task, secs, _, _) in enumerate(rows, 1):
        if secs is not None and (best[task] is None or secs < best[task]):
            best[task] = secs
        if n in ks:
            out[n] = total()
    for k in ks:  # budgets beyond the measurements made: the search ended, its best stands
        out.setdefault(k, total())
    return out


def run_and_check(ex, model, feeds, ref):
    outs, vm, args = sg.run_vm(tvm, ex, feeds, [i.name for i in model.graph.input])
    checks = [sg.check(o, r) for o, r in zip(outs, ref)]
    ok = len(outs) == len(ref) and all(c[0] for c in checks)
    return ok, max(c[1] for c in checks), vm, args


def time_vm(vm, args):
    vm["main"](*args)  # warm-up
    f = vm.time_evaluator("main", tvm.cpu(), number=1, repeat=FINAL_REPEAT, min_repeat_ms=MIN_SAMPLE_MS)
    return statistics.median(f(*args).results)


def tune_one(s, target, ks, args, log, work):
    model = sg.to_onnx(s.key)
    feeds = sg.random_inputs(s.key)
    ref = sg.reference(model, feeds)
    mod = sg.to_relax(model)
    ok, err, _, _ = run_and_check(relax.build(mod, target=target), model, feeds, ref)
    if not ok:
        log(f"{s.label}: TVM's untuned build differs from onnxruntime (max err {err:.3g}); skipped")
        return None
    extracted = ms.relax_integration.extract_tasks(prepare(mod, target), target)
    contexts, weights = ms.relax_integration.extracted_tasks_to_tune_contexts(
        extracted, work_dir=work, num_threads=1, seed=args.seed)
    log(f"{s.label}: {len(contexts)} TIR function(s): "
        + ", ".join(f"{c.task_name} x{w:g}" for c, w in zip(contexts, weights)))
    builder = ms.builder.LocalBuilder(max_workers=1, timeout_sec=args.timeout)
    runner = ms.runner.LocalRunner(evaluator_config=evaluator(), timeout_sec=args.timeout)
    untuned = [untuned_latency(c, target, builder, runner) for c in contexts]
    log(f"{s.label}: untuned " + ", ".join("failed" if u is None else f"{u * 1e3:.4g} ms" for u in untuned))
    recorder = Recorder()
    t0 = time.perf_counter()
    if contexts:
        callbacks = list(ms.measure_callback.MeasureCallback.create("default")) + [recorder]
        database = ms.tune_tasks(
            tasks=contexts, task_weights=weights, work_dir=work, max_trials_global=max(ks),
            num_trials_per_iter=min(args.trials_per_iter, max(ks)), builder=builder, runner=runner,
            database=ms.database.JSONDatabase(work_dir=work),
            cost_model=ms.cost_model.CostModel.create("xgb", num_tuning_cores=1),
            measure_callbacks=callbacks, task_scheduler="gradient")
    else:
        database = ms.database.MemoryDatabase()
    wall = time.perf_counter() - t0
    best = curve(recorder.rows, weights, untuned, ks) if contexts else {k: None for k in ks}
    ex = ms.relax_integration.compile_relax(database, mod, target, params=None)
    ok, err, vm, vm_args = run_and_check(ex, model, feeds, ref)
    final = time_vm(vm, vm_args)
    failed = sum(r[1] is None for r in recorder.rows)
    log(f"{s.label}: {len(recorder.rows)} measurements ({failed} failed) in {wall:.1f} s; "
        + ", ".join(f"@{k} {'-' if v is None else f'{v * 1e3:.4g}'}" for k, v in best.items())
        + f" ms; final {final * 1e3:.4g} ms, {'verified' if ok else f'WRONG (max err {err:.3g})'}"
        + f"; tlm evolutionary best {s.tlm_best_s * 1e3:.4g} ms ({s.tlm_hardware})")
    rows = [{"k": k, "best_ms": "" if v is None else f"{v * 1e3:.6g}"} for k, v in best.items()]
    rows.append({"k": "final", "best_ms": f"{final * 1e3:.6g}"})
    for r in rows:
        r.update(label=s.label, kind=s.kind, verified=int(ok), tune_wall_s=f"{wall:.1f}",
                 trials_done=len(recorder.rows))
    names = [c.task_name for c in contexts]
    measurements = [{"label": s.label, "n": n, "task": names[t], "ms": None if x is None else x * 1e3,
                     "error": e, "t_s": round(ts, 3)}
                    for n, (t, x, e, ts) in enumerate(recorder.rows, 1)]
    return rows, measurements


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--labels", help="comma-separated subset of tasks.txt's labels")
    ap.add_argument("--ks", default=",".join(map(str, KS)),
                    help="measurement budgets to report; the largest is the tuning budget")
    ap.add_argument("--mcpu", help="LLVM CPU name (default: this host's, e.g. znver1)")
    ap.add_argument("--machine", help="name in the output files (default: the LLVM CPU name)")
    ap.add_argument("--trials-per-iter", type=int, default=64,
                    help="MetaSchedule's measurement batch (its default, 64)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=30,
                    help="seconds a candidate's build or run may take (MetaSchedule's default 30; "
                         "raise it on a loaded machine, where niced builds are starved)")
    args = ap.parse_args()
    ks = sorted({int(k) for k in args.ks.split(",")})
    target = sg.host_target(tvm)
    if args.mcpu:
        target = tvm.target.Target({"kind": "llvm", "mcpu": args.mcpu, "num-cores": 1})
    machine = args.machine or str(target.attrs["mcpu"])
    os.makedirs(RESULTS, exist_ok=True)
    base = os.path.join(RESULTS, f"subgraph_{machine}")
    log = Log(base + ".log")
    subgraphs = sg.load_subgraphs()
    if args.labels:
        wanted = args.labels.split(",")
        unknown = set(wanted) - {s.label for s in subgraphs}
        if unknown:
            sys.exit(f"error: unknown label(s) {', '.join(sorted(unknown))} (see {sg.TASKS_TXT})")
        subgraphs = [s for s in subgraphs if s.label in wanted]
    done = set()
    if os.path.exists(base + ".csv"):
        done = {r["label"] for r in csv.DictReader(open(base + ".csv"))}
    log(f"target {target}, budgets {ks}, TVM_NUM_THREADS={os.environ['TVM_NUM_THREADS']}, "
        f"affinity {sorted(os.sched_getaffinity(0))}, tvm {tvm.__version__}")
    for s in subgraphs:
        if s.label in done:
            log(f"{s.label}: already in {base}.csv, skipped")
            continue
        work = os.path.join(RESULTS, "work", machine, s.label)
        shutil.rmtree(work, ignore_errors=True)  # a subgraph cut short starts again
        os.makedirs(work)
        result = tune_one(s, target, ks, args, log, work)
        if result is None:
            continue
        rows, measurements = result
        with open(base + ".jsonl", "a") as f:
            f.writelines(json.dumps(m) + "\n" for m in measurements)
        new = not os.path.exists(base + ".csv")
        with open(base + ".csv", "a", newline="") as f:  # last: the CSV marks a subgraph done
            w = csv.DictWriter(f, FIELDS)
            if new:
                w.writeheader()
            w.writerows(rows)

if __name__ == "__main__":
    main()
