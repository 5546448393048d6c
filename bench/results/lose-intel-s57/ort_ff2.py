# Session 57 probe (run: taskset -c 1 bench/.venv/bin/python bench/results/lose-intel-s57/ort_ff2.py).
# ORT alone on BERT-base's FFN down-projection (MatMul 128x3072 @ 3072x768 + bias + residual), 1 thread,
# hot (same inputs every call) and with a 64 MiB buffer written between calls (weights evicted).
import time, numpy as np, onnx, onnxruntime as ort
from onnx import helper, TensorProto, numpy_helper
rng = np.random.default_rng(0)
W = rng.standard_normal((3072, 768), dtype=np.float32) * 0.02
b = rng.standard_normal((768,), dtype=np.float32)
g = helper.make_graph(
    [helper.make_node("MatMul", ["x", "W"], ["y"]), helper.make_node("Add", ["y", "b"], ["z"]),
     helper.make_node("Add", ["z", "r"], ["out"])], "ff2",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 128, 3072]),
     helper.make_tensor_value_info("r", TensorProto.FLOAT, [1, 128, 768])],
    [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 128, 768])],
    [numpy_helper.from_array(W, "W"), numpy_helper.from_array(b, "b")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
so = ort.SessionOptions(); so.intra_op_num_threads = 1; so.inter_op_num_threads = 1
s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
x = rng.standard_normal((1, 128, 3072), dtype=np.float32); r = rng.standard_normal((1, 128, 768), dtype=np.float32)
flush = np.zeros(64 << 18, dtype=np.float32)
for mode in ("hot", "cold", "hot", "cold"):
    ts = []
    for i in range(25):
        if mode == "cold":
            flush += 1.0; x += 0.0; r += 0.0
        t = time.perf_counter(); s.run(None, {"x": x, "r": r}); ts.append(time.perf_counter() - t)
    print(mode, "median %.2f ms, min %.2f" % (np.median(ts[3:]) * 1e3, min(ts) * 1e3))
