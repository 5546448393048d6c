"""TVM MetaSchedule on the held-out models end to end: the search peer at tlm's budgets.

Issue 11 asks for MetaSchedule on "the same models, at the same measurement budgets, if its ONNX
frontend takes them". For each MODEL (bench/results/e2e/onnx/MODEL.onnx, the held-out models of
bench/heldout):

1. import it with Relax's ONNX frontend (`from_onnx`, initializers as constants), build it with
   TVM's default schedules and check the output against onnxruntime on the same seeded inputs;
2. legalize and fuse it as `compile_relax` does and tune every TIR function with MetaSchedule's
   gradient task scheduler within ONE budget of PER_TASK x g measurements, g = tlm's number of
   tasks of the model (`--tasks`, default: what `tlm tune` reports for it), i.e. the budget of
   TLM-PER_TASKxg; evolutionary search, XGBoost cost model, seed 0, batches of budget /
   functions (so that every TIR function gets a round; MetaSchedule's default 64 would leave
   most of a model's functions untuned at these budgets); each
   candidate timed as tlm's harness times one (a warm-up call, 5 samples of >= 20 ms, median);
3. compile the model from the tuning database, check it against onnxruntime again, and time it
   through the Relax VM taking turns with an onnxruntime session on the same inputs and threads
   (BLOCKS blocks each of a few calls, medians; the ratio of medians is the number to compare
   with the held-out table's tlm / ORT ratios).

Appends a row per (model, threads, budget) to bench/results/tvm/e2e_<machine>.csv: functions,
measurements made and failed, tuning wall time, untuned / tuned / ORT ms, verified, tuned / ORT.
A model the frontend or TVM's build cannot take gets a row with its error, never a time.

    nice -n 0 taskset -c 1 bench/.venv/bin/python bench/tvm/e2e.py --per-task 10 mobilenet_v2
    taskset -c 0-1 bench/.venv/bin/python bench/tvm/e2e.py --threads 2 --per-task 10 resnet50

--retime compiles, checks and times a model again from the database an earlier run left in
bench/results/tvm/work/ (no tuning; its row says "retimed"). At two or more threads the two
runtimes' worker threads spin after a call: --settle (seconds slept before every block, default
0.05 at one thread and 0.5 at more) must outlast that, or the block that follows runs against
the other runtime's spinning workers (measured on Zen 5 at 2 threads, MobileNet-V2: ORT 8.0 ms
after TVM's blocks with 0.05 s, 2.4 ms with 0.5 s).
"""
import argparse
import csv
import os
import shutil
import statistics
import sys
import time
import traceback

import subgraphs as sg

sys.path.insert(0, sg.BENCH)
from benchlib import seeded_feeds  # noqa: E402

ROOT = os.path.dirname(sg.BENCH)
ONNX_DIR = os.path.join(sg.BENCH, "results", "e2e", "onnx")
RESULTS = os.path.join(sg.BENCH, "results", "tvm")
FIELDS = ["model", "threads", "per_task", "g", "budget", "functions", "measurements", "failed",
          "tune_wall_s", "untuned_ms", "tuned_ms", "ort_ms", "tuned_over_ort", "verified",
          "started", "settle_s", "error"]


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+", help="names of bench/results/e2e/onnx/*.onnx")
    ap.add_argument("--per-task", type=int, default=10, help="measurements per tlm task (budget = this x g)")
    ap.add_argument("--tasks", help="MODEL=g,... tlm's number of tasks (default: from `tlm tune`'s count)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--blocks", type=int, default=9, help="timing blocks per side")
    ap.add_argument("--calls", type=int, default=10, help="calls per timing block")
    ap.add_argument("--settle", type=float,
                    help="seconds slept before every timing block, so that the other runtime's workers "
                         "stop spinning (default: 0.05 at one thread, 0.5 at more)")
    ap.add_argument("--retime", action="store_true",
                    help="no tuning: compile and time from the database of an earlier run")
    ap.add_argument("--mcpu", help="LLVM CPU name (default: this host's)")
    ap.add_argument("--machine", help="name in the output file (default: the LLVM CPU name)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rtol", type=float, default=1e-3,
                    help="tolerance of the check against onnxruntime, relative to the output's "
                         "largest magnitude (a whole model sums more rounding than a subgraph)")
    ap.add_argument("--timeout", type=float, default=60,
                    help="seconds a candidate's build or run may take")
    return ap.parse_args()


# The held-out models' task counts (`tlm tune MODEL.onnx` / bench/heldout: "27 tasks" etc.).
TLM_TASKS = {"resnet50": 27, "mobilenet_v2": 32, "bert-base": 10, "gpt2": 13}


def ort_session(path, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def block_ms(f, calls):
    ts = []
    for _ in range(calls):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def taking_turns(tvm_call, ort_call, blocks, calls, settle):
    """(tvm ms, ort ms): medians of per-block medians, the two taking turns after a warm-up."""
    for f in (tvm_call, ort_call):
        block_ms(f, 3)
    a, b = [], []
    for _ in range(blocks):
        time.sleep(settle)
        a.append(block_ms(tvm_call, calls))
        time.sleep(settle)
        b.append(block_ms(ort_call, calls))
    return statistics.median(a), statistics.median(b)


def main():
    args = parse_args()
    if args.settle is None:
        args.settle = 0.05 if args.threads == 1 else 0.5
    tvm = sg.import_tvm()  # before any other tvm import; sets TVM_NUM_THREADS=1 unless set
    os.environ["TVM_NUM_THREADS"] = str(args.threads)
    import onnx
    from tvm import relax
    from tvm.s_tir import meta_schedule as ms
    import tune as tn  # the subgraph tuner's Recorder, evaluator, prepare, untuned_latency

    tasks = dict(TLM_TASKS)
    for kv in filter(None, (args.tasks or "").split(",")):
        k, _, v = kv.partition("=")
        tasks[k] = int(v)
    target = sg.host_target(tvm, cores=args.threads)
    if args.mcpu:
        target = tvm.target.Target({"kind": "llvm", "mcpu": args.mcpu, "num-cores": args.threads})
    machine = args.machine or str(target.attrs["mcpu"])
    os.makedirs(RESULTS, exist_ok=True)
    base = os.path.join(RESULTS, f"e2e_{machine}")
    log = tn.Log(base + ".log")
    log(f"target {target}, TVM_NUM_THREADS={os.environ['TVM_NUM_THREADS']}, affinity "
        f"{sorted(os.sched_getaffinity(0))}, tvm {tvm.__version__}")
    for name in args.models:
        path = os.path.join(ONNX_DIR, name + ".onnx")
        if not os.path.exists(path):
            sys.exit(f"error: no model at {path} (bench/e2e/models.py exports it)")
        if name not in tasks:
            sys.exit(f"error: tlm's task count of {name} is unknown: pass --tasks {name}=g")
        row = {"model": name, "threads": args.threads, "per_task": args.per_task, "g": tasks[name],
               "budget": args.per_task * tasks[name], "started": time.strftime("%Y-%m-%d %H:%M:%S"),
               "settle_s": args.settle}
        try:
            row.update(run_model(args, tvm, relax, ms, onnx, tn, target, machine, name, path,
                                 row["budget"], log))
        except Exception as e:  # a model the frontend or a build cannot take: a row, not a time
            log(f"{name}: FAILED: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}")
            traceback.print_exc()
            row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
        append_row(base + ".csv", row)


def append_row(path, row):
    """Appends `row`; a csv written before a column was added is rewritten with the new header
    (the old rows keep their values, the new column empty)."""
    old = []
    if os.path.exists(path):
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames == FIELDS:
                old = None
            else:
                old = list(reader)
    if old is None:
        with open(path, "a", newline="") as f:
            csv.DictWriter(f, FIELDS).writerow(row)
        return
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        w.writerows(old + [row])


def run_model(args, tvm, relax, ms, onnx, tn, target, machine, name, path, budget, log):
    model = onnx.load(path)
    sess = ort_session(path, args.threads)
    feeds = seeded_feeds(sess.get_inputs())  # as bench/lose/interleave.py makes them
    order = [i.name for i in model.graph.input if i.name in feeds]
    ref = sess.run(None, feeds)
    t0 = time.perf_counter()
    mod = sg.to_relax(model)
    log(f"{name}: imported in {time.perf_counter() - t0:.1f} s")

    def check(ex):
        outs, vm, vm_args = sg.run_vm(tvm, ex, feeds, order)
        checks = [sg.check(o, r, rtol=args.rtol) for o, r in zip(outs, ref)]
        ok = len(outs) == len(ref) and all(c[0] for c in checks)
        return ok, max(c[1] for c in checks), vm, vm_args

    ok, err, vm, vm_args = check(relax.build(mod, target=target))
    untuned_ms = block_ms(lambda: vm["main"](*vm_args), 3)
    log(f"{name}: untuned build {'matches' if ok else 'DIFFERS from'} onnxruntime (max err "
        f"{err:.3g}), {untuned_ms:.1f} ms")
    if not ok:
        return {"untuned_ms": f"{untuned_ms:.3f}", "verified": 0,
                "error": f"TVM's untuned build differs from onnxruntime (max err {err:.3g})"}
    work = os.path.join(RESULTS, "work", f"e2e-{machine}", f"{name}.t{args.threads}.{args.per_task}")
    if args.retime:
        if not os.path.exists(os.path.join(work, "database_tuning_record.json")):
            raise FileNotFoundError(f"no tuning database in {work}: run without --retime first")
        database = ms.database.JSONDatabase(work_dir=work)
        n = len(database.get_all_tuning_records())
        log(f"{name}: retiming from {work} ({n} tuning records), settle {args.settle} s")
        return finish(args, ms, mod, target, database, check, sess, feeds, name, log,
                      {"measurements": n, "untuned_ms": f"{untuned_ms:.3f}", "error": "retimed"})
    shutil.rmtree(work, ignore_errors=True)  # a run cut short starts again
    os.makedirs(work)
    extracted = ms.relax_integration.extract_tasks(tn.prepare(mod, target), target)
    contexts, weights = ms.relax_integration.extracted_tasks_to_tune_contexts(
        extracted, work_dir=work, num_threads=1, seed=args.seed)
    # MetaSchedule measures a batch of num_trials_per_iter candidates of one function per round
    # (64 by default, what the subgraph runs use). At PER_TASK x g measurements for a whole model
    # that would tune budget/64 functions and leave the rest untuned, so the batch is cut to what
    # gives every function one round: budget / functions (at least 2, at most 64).
    per_iter = max(2, min(64, budget // max(1, len(contexts))))
    log(f"{name}: {len(contexts)} TIR functions, budget {budget} measurements, batches of {per_iter}")
    builder = ms.builder.LocalBuilder(max_workers=1, timeout_sec=args.timeout)
    runner = ms.runner.LocalRunner(evaluator_config=tn.evaluator(), timeout_sec=args.timeout)
    recorder = tn.Recorder()
    t0 = time.perf_counter()
    callbacks = list(ms.measure_callback.MeasureCallback.create("default")) + [recorder]
    database = ms.tune_tasks(
        tasks=contexts, task_weights=weights, work_dir=work, max_trials_global=budget,
        num_trials_per_iter=per_iter, builder=builder, runner=runner,
        database=ms.database.JSONDatabase(work_dir=work),
        cost_model=ms.cost_model.CostModel.create("xgb", num_tuning_cores=1),
        measure_callbacks=callbacks, task_scheduler="gradient")
    wall = time.perf_counter() - t0
    failed = sum(r[1] is None for r in recorder.rows)
    log(f"{name}: {len(recorder.rows)} measurements ({failed} failed) in {wall:.1f} s")
    return finish(args, ms, mod, target, database, check, sess, feeds, name, log,
                  {"functions": len(contexts), "measurements": len(recorder.rows), "failed": failed,
                   "tune_wall_s": f"{wall:.1f}", "untuned_ms": f"{untuned_ms:.3f}"})


def finish(args, ms, mod, target, database, check, sess, feeds, name, log, row):
    """Compiles the model from `database`, checks it, times it in turns with ORT; the row."""
    ex = ms.relax_integration.compile_relax(database, mod, target, params=None)
    ok, err, vm, vm_args = check(ex)
    tuned_ms, ort_ms = taking_turns(lambda: vm["main"](*vm_args), lambda: sess.run(None, feeds),
                                    args.blocks, args.calls, args.settle)
    log(f"{name}: tuned {tuned_ms:.2f} ms, {'verified' if ok else f'WRONG (max err {err:.3g})'}; "
        f"onnxruntime {ort_ms:.2f} ms in the same turns: tuned / ORT {tuned_ms / ort_ms:.3f}")
    wrong = "" if ok else f"tuned build differs from onnxruntime (max err {err:.3g})"
    row.update({"tuned_ms": f"{tuned_ms:.3f}" if ok else "", "ort_ms": f"{ort_ms:.3f}",
                "tuned_over_ort": f"{tuned_ms / ort_ms:.4f}" if ok else "", "verified": int(ok),
                "error": "; ".join(filter(None, [row.get("error", ""), wrong]))})
    return row


if __name__ == "__main__":
    main()
