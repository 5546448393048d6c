"""The subgraph benchmark's 23 tasks as ONNX models and Relax modules, for the TVM peer.

Reading guide:
  load_subgraphs()   tasks.txt + the evolutionary records -> [Subgraph] (label, kind, task key,
                     tlm's best latency for scale); the n-th distinct task key of the records is
                     the n-th task of tasks.txt (bench/subgraph/report.py's rule), checked 1:1
  parse_task_key()   the task key text (tlm's canonical task, `tlm extract`) -> inputs and nodes
  to_onnx()          -> an opset-17 ONNX model: `w*` inputs become initializers and inline
                     scalars (`f32[]=0x1p+3`) constants, both with seeded values; `in*` stay inputs
  random_inputs()    seeded activations (Gather indices drawn inside the gathered axis)
  to_relax()         -> IRModule through TVM's Relax ONNX frontend (initializers become constants)
  reference()        onnxruntime's outputs on one thread, the independent reference
  check()            does an output match the reference (tolerance scaled by its magnitude)

tlm spells attributes as ONNX does, with a few opset-6 forms (Clip min/max, Reshape shape, Slice
starts/ends/steps as attributes) that opset 17 takes as constant inputs; to_onnx() moves them.
Floats are hexadecimal (`0x1.8p+2`), so an attribute value is a float iff it is spelled as one.

`python3 subgraphs.py [LABEL...]`: convert, compile with TVM's default schedules and check against
onnxruntime (no tuning); the first thing to run when the frontend or TVM changes.
"""
import json
import os
import re
import sys
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
TASKS_TXT = os.path.join(BENCH, "subgraph", "tasks.txt")
RECORDS = os.path.join(BENCH, "results", "subgraph", "evolutionary.jsonl")
OPSET = 17

DTYPES = {"f32": TensorProto.FLOAT, "f64": TensorProto.DOUBLE, "i64": TensorProto.INT64,
          "i32": TensorProto.INT32, "i8": TensorProto.INT8, "u8": TensorProto.UINT8,
          "bool": TensorProto.BOOL}
NUMPY = {"f32": np.float32, "f64": np.float64, "i64": np.int64, "i32": np.int32, "i8": np.int8,
         "u8": np.uint8, "bool": np.bool_}
# Attributes of tlm's spelling that opset 17 takes as (constant) inputs, in input order.
ATTRS_AS_INPUTS = {"Clip": ["min", "max"], "Reshape": ["shape"],
                   "Slice": ["starts", "ends", "axes", "steps"]}


@dataclass
class Subgraph:
    label: str          # tasks.txt's name, e.g. "conv2d_3x3"
    workload: str       # zoo spec, e.g. "resnet50:image=224"
    task_id: int        # `tlm extract` id within the workload
    kind: str           # tlm's task kind, e.g. "conv2d_relu"
    key: str            # the task key text
    tlm_best_s: float   # best median_s of tlm's evolutionary search (records), for scale
    tlm_hardware: str   # the machine those records were measured on


def load_subgraphs(tasks_txt=TASKS_TXT, records=RECORDS):
    tasks = []
    for line in open(tasks_txt):
        if line.strip() and not line.startswith("#"):
            label, spec, tid = line.split()
            tasks.append((label, spec, int(tid)))
    keys, info = [], {}
    for line in open(records):
        if not line.strip():
            continue
        r = json.loads(line)
        if r["strategy"].endswith("/remeasure"):
            continue
        if r["task_key"] not in info:
            keys.append(r["task_key"])
            info[r["task_key"]] = {"kind": r["task_kind"], "workload": r["workload"],
                                   "best": float("inf"), "hardware": r["hardware"]}
        if not r["error"]:
            i = info[r["task_key"]]
            i["best"] = min(i["best"], r["median_s"])
    if len(keys) != len(tasks):
        sys.exit(f"error: {records} has {len(keys)} distinct tasks, {tasks_txt} lists {len(tasks)}")
    out = []
    for (label, spec, tid), key in zip(tasks, keys):
        i = info[key]
        if i["workload"] != spec:
            sys.exit(f"error: task {label}: records say workload {i['workload']}, tasks.txt {spec}")
        out.append(Subgraph(label, spec, tid, i["kind"], key, i["best"], i["hardware"]))
    return out


# ---------------------------------------------------------------------------------------------
# The task key

@dataclass
class Tensor:
    name: str
    dtype: str          # "f32", "i64", "bool", ...
    shape: list


@dataclass
class Node:
    out: str            # "%3"
    op: str
    args: list          # names, or Tensor with .value for an inline constant (name "")
    attrs: dict = field(default_factory=dict)
    result: Tensor = None


TYPE_RE = re.compile(r"^(\w+)\[([0-9,]*)\]$")


def _type(text):
    m = TYPE_RE.match(text)
    if not m:
        raise ValueError(f"bad tensor type {text!r}")
    return m.group(1), [int(d) for d in m.group(2).split(",") if d]


def _number(text):
    return float.fromhex(text) if ("0x" in text or "inf" in text or "nan" in text) else int(text)


def _attr(text):
    if text.startswith("["):
        return [_number(t) for t in text[1:-1].split(",") if t]
    return _number(text)


def parse_task_key(key):
    """-> (inputs [Tensor], nodes [Node], outputs [names])."""
    inputs, nodes, outputs = [], [], []
    for line in key.strip().splitlines():
        if line.startswith("out "):
            outputs += line[4:].split()
        elif line.startswith("%"):
            m = re.match(r"^(%\d+) = (\w+)\((.*?)\)(.*) -> (\S+)$", line)
            if not m:
                raise ValueError(f"bad node line {line!r}")
            out, op, args, attrs, result = m.groups()
            node = Node(out, op, [], {}, Tensor(out, *_type(result)))
            for a in [a.strip() for a in args.split(",") if a.strip()]:
                if "=" in a:  # inline constant, e.g. f32[]=0x1p+3
                    t, v = a.split("=", 1)
                    c = Tensor("", *_type(t))
                    c.value = _number(v)
                    node.args.append(c)
                else:
                    node.args.append(a)
            for a in attrs.split():
                k, v = a.split("=", 1)
                node.attrs[k] = _attr(v)
            nodes.append(node)
        else:
            name, t = line.split(":", 1)
            inputs.append(Tensor(name, *_type(t)))
    return inputs, nodes, outputs


# ---------------------------------------------------------------------------------------------
# ONNX

def _onnx_name(name):
    return "t" + name[1:] if name.startswith("%") else name


def _random(t, rng, high=None):
    if t.dtype == "bool":
        return rng.random(t.shape) < 0.5
    if t.dtype.startswith(("i", "u")):
        return rng.integers(0, high or 8, size=t.shape).astype(NUMPY[t.dtype])
    return rng.uniform(-1.0, 1.0, size=t.shape).astype(NUMPY[t.dtype])


def _index_bounds(inputs, nodes):
    """{input name: exclusive upper bound} for inputs used as Gather indices."""
    shapes = {t.name: t.shape for t in inputs}
    shapes.update({n.out: n.result.shape for n in nodes})
    bounds = {}
    for n in nodes:
        if n.op == "Gather" and isinstance(n.args[1], str):
            bounds[n.args[1]] = shapes[n.args[0]][n.attrs.get("axis", 0)]
    return bounds


def to_onnx(key, seed=0):
    inputs, nodes, outputs = parse_task_key(key)
    rng = np.random.default_rng(seed)
    bounds = _index_bounds(inputs, nodes)
    inits, graph_inputs, onnx_nodes = [], [], []
    for t in inputs:
        if t.name.startswith("w"):
            inits.append(numpy_helper.from_array(_random(t, rng, bounds.get(t.name)), t.name))
        else:
            graph_inputs.append(helper.make_tensor_value_info(t.name, DTYPES[t.dtype], t.shape))
    for n in nodes:
        names = []
        for i, a in enumerate(n.args):
            if isinstance(a, Tensor):
                c = f"{_onnx_name(n.out)}_c{i}"
                inits.append(numpy_helper.from_array(np.array(a.value, NUMPY[a.dtype]).reshape(a.shape), c))
                names.append(c)
            else:
                names.append(_onnx_name(a))
        attrs = dict(n.attrs)
        moved = ATTRS_AS_INPUTS.get(n.op, [])
        if moved:
            names = names[:1]
            for k in moved:
                if k not in attrs:
                    names.append("")  # optional input left out
                    continue
                v = attrs.pop(k)
                dtype = np.int64 if n.op != "Clip" else NUMPY[n.result.dtype]
                c = f"{_onnx_name(n.out)}_{k}"
                inits.append(numpy_helper.from_array(np.array(v, dtype), c))
                names.append(c)
            while names and names[-1] == "":
                names.pop()
        onnx_nodes.append(helper.make_node(n.op, names, [_onnx_name(n.out)], **attrs))
    results = {n.out: n.result for n in nodes}
    graph_outputs = [helper.make_tensor_value_info(_onnx_name(o), DTYPES[results[o].dtype],
                                                   results[o].shape) for o in outputs]
    graph = helper.make_graph(onnx_nodes, "subgraph", graph_inputs, graph_outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(model)
    return model


def random_inputs(key, seed=1):
    """Seeded activations {name: array}, in graph-input order."""
    inputs, nodes, _ = parse_task_key(key)
    rng = np.random.default_rng(seed)
    bounds = _index_bounds(inputs, nodes)
    return {t.name: _random(t, rng, bounds.get(t.name)) for t in inputs if not t.name.startswith("w")}


def reference(model, feeds):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def check(out, ref, rtol=1e-4):
    """(ok, max abs error): error within rtol of the reference's largest finite magnitude.
    Non-finite entries (Where's -FLT_MAX is finite; inf/nan are not) must match exactly."""
    out, ref = np.asarray(out), np.asarray(ref)
    if out.shape != ref.shape or out.dtype != ref.dtype:
        return False, float("inf")
    if out.dtype == np.bool_ or np.issubdtype(out.dtype, np.integer):
        return bool(np.array_equal(out, ref)), float(np.sum(out != ref))
    fin = np.isfinite(ref)
    if not np.array_equal(fin, np.isfinite(out)) or not np.array_equal(out[~fin], ref[~fin]):
        return False, float("inf")
    if not fin.any():
        return True, 0.0
    err = float(np.max(np.abs(out[fin].astype(np.float64) - ref[fin])))
    scale = max(1.0, float(np.max(np.abs(ref[fin]))))
    return err <= rtol * scale, err


# ---------------------------------------------------------------------------------------------
# TVM

def import_tvm():
    """tvm, with torch hidden (no_torch/) in this process and the worker processes it starts, and
    one runtime thread. Call before any other tvm import."""
    hide = os.path.join(HERE, "no_torch")
    sys.path.insert(0, hide)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [hide, os.environ.get("PYTHONPATH")]))
    os.environ.setdefault("TVM_NUM_THREADS", "1")
    import tvm
    return tvm


def to_relax(model):
    from tvm.relax.frontend.onnx import from_onnx
    return from_onnx(model, opset=OPSET, keep_params_in_input=False)


def host_target(tvm, cores=1):
    """The LLVM target of this machine, in 0.27's dict form (it refuses "-mcpu=" strings)."""
    from tvm.target import codegen
    return tvm.target.Target({"kind": "llvm", "mcpu": codegen.llvm_get_system_cpu(),
                              "num-cores": cores})


def run_vm(tvm, ex, feeds, order):
    """Run a built Relax executable on feeds (in graph-input order) -> list of numpy outputs."""
    from tvm import relax
    vm = relax.VirtualMachine(ex, tvm.cpu())
    args = [tvm.runtime.tensor(feeds[name]) for name in order]
    out = vm["main"](*args)
    outs = out if isinstance(out, (list, tuple)) or type(out).__name__ == "Array" else [out]
    return [o.numpy() for o in outs], vm, args


def main(labels):
    tvm = import_tvm()
    from tvm import relax
    target = host_target(tvm)
    print(f"target {target}")
    bad = 0
    for sg in load_subgraphs():
        if labels and sg.label not in labels:
            continue
        model = to_onnx(sg.key)
        feeds = random_inputs(sg.key)
        ref = reference(model, feeds)
        try:
            mod = to_relax(model)
            ex = relax.build(mod, target=target)
            outs, _, _ = run_vm(tvm, ex, feeds, [i.name for i in model.graph.input])
        except Exception as e:  # noqa: BLE001  (report every subgraph, then fail)
            print(f"{sg.label:24s} FAILED {type(e).__name__}: {str(e).splitlines()[0][:200]}")
            bad += 1
            continue
        results = [check(o, r) for o, r in zip(outs, ref)]
        ok = len(outs) == len(ref) and all(r[0] for r in results)
        bad += not ok
        print(f"{sg.label:24s} {sg.kind:32s} {'ok' if ok else 'WRONG'}  max err "
              f"{max(r[1] for r in results):.3g}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
