"""ONNX Runtime (MLAS) on the kernel benchmark's two kernels, as the peer of tlm_bench_kernels.

    bench/.venv/bin/python bench/kernels_ort.py --threads 2 [--seconds 2]

Builds each kernel as a one-node ONNX graph with constant weights (so ORT may pre-pack them, as it
does in a real model): a 1024^3 MatMul, and ResNet-50's 3x3 convolution 64->64 on 1x64x56x56
(pad 1) + bias + ReLU (ORT fuses Conv+Relu into one MLAS call). Times session.run after a warm-up
(samples of >= 20 ms, median) and prints one CSV line per kernel: name,gflop,median_s,gflops.
tlm_bench_kernels --peer runs this between its peak measurements and reports the ratio.

resnet50_conv3x3_nchw<B>c (tlm's convolution on channel-blocked activations, the layout conversions
outside it): the same ONNX graph, timed by ORT's profiler as the one Conv node MLAS runs on its
own blocked layout (ORT's NCHWc transformer puts ReorderInput / ReorderOutput around it, which
are left out), the median over >= 200 runs and >= --seconds of running.
"""
import argparse
import json
import os
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def matmul_model(n=1024):
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((n, n), dtype=np.float32), "w")
    node = helper.make_node("MatMul", ["a", "w"], ["y"])
    g = helper.make_graph([node], "matmul",
                          [helper.make_tensor_value_info("a", TensorProto.FLOAT, [n, n])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, n])], [w])
    return g, {"a": rng.standard_normal((n, n), dtype=np.float32)}, 2.0 * n ** 3


def conv_model():
    rng = np.random.default_rng(4)
    w = numpy_helper.from_array(rng.standard_normal((64, 64, 3, 3), dtype=np.float32) * 0.05, "w")
    b = numpy_helper.from_array(rng.standard_normal((64,), dtype=np.float32), "b")
    conv = helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1],
                            kernel_shape=[3, 3])
    relu = helper.make_node("Relu", ["c"], ["y"])
    g = helper.make_graph([conv, relu], "conv3x3",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 56, 56])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 56, 56])],
                          [w, b])
    return g, {"x": rng.standard_normal((1, 64, 56, 56), dtype=np.float32)}, \
        2.0 * 64 * 64 * 9 * 56 * 56


def session(graph, threads, profiling=False):
    """An ORT session of the one-node graph on `threads` threads, every graph optimization on."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.enable_profiling = profiling
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def time_session(graph, feeds, threads, seconds):
    sess = session(graph, threads)
    for _ in range(3):
        sess.run(None, feeds)
    t0 = time.perf_counter()
    sess.run(None, feeds)
    one = max(time.perf_counter() - t0, 1e-6)
    reps = max(1, int(0.02 / one))  # calls per sample: >= 20 ms
    samples = []
    end = time.perf_counter() + seconds
    while len(samples) < 7 or time.perf_counter() < end:
        t0 = time.perf_counter()
        for _ in range(reps):
            sess.run(None, feeds)
        samples.append((time.perf_counter() - t0) / reps)
    return float(np.median(samples))


def profiled_conv_node(graph, feeds, threads, seconds, runs=200):
    """The median duration of the Conv node alone (ORT's profiler), in seconds: over at least
    `runs` runs and `seconds` of running, after 20 warm-up runs."""
    sess = session(graph, threads, profiling=True)
    for _ in range(20):
        sess.run(None, feeds)
    done, end = 0, time.perf_counter() + seconds
    while done < runs or time.perf_counter() < end:
        sess.run(None, feeds)
        done += 1
    path = sess.end_profiling()
    with open(path) as f:
        events = json.load(f)
    os.remove(path)
    ops = [e for e in events if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time")]
    conv = [e["dur"] * 1e-6 for e in ops if e.get("args", {}).get("op_name") == "Conv"]
    kinds = sorted({e.get("args", {}).get("op_name") for e in ops})
    if "ReorderInput" not in kinds or len(conv) < runs:
        raise SystemExit(f"ORT did not run the convolution on its NCHWc layout (ops: {kinds})")
    return float(np.median(conv[20:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--kernel", default="", help="only this kernel (matmul_1024, resnet50_conv3x3, "
                    "resnet50_conv3x3_nchw8c / _nchw16c: MLAS's NCHWc Conv node alone)")
    a = ap.parse_args()
    blocked = a.kernel if a.kernel.startswith("resnet50_conv3x3_nchw") else ""
    for name, make in (("matmul_1024", matmul_model), ("resnet50_conv3x3", conv_model),
                       (blocked, conv_model)):
        if not name or (a.kernel and a.kernel != name):
            continue
        graph, feeds, flops = make()
        if name == blocked:
            s = profiled_conv_node(graph, feeds, a.threads, a.seconds)
        else:
            s = time_session(graph, feeds, a.threads, a.seconds)
        print(f"{name},{flops * 1e-9:.4f},{s:.6e},{flops / s * 1e-9:.2f}", flush=True)


if __name__ == "__main__":
    main()
