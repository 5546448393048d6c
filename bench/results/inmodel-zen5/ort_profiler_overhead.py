import onnxruntime as ort, numpy as np, time, statistics, sys
m = "bench/results/e2e/onnx/resnet50.onnx"
def sess(prof):
    o = ort.SessionOptions(); o.intra_op_num_threads = 2; o.inter_op_num_threads = 1
    o.enable_profiling = prof
    if prof: o.profile_file_prefix = "/tmp/s30/ortprof"
    return ort.InferenceSession(m, o, providers=["CPUExecutionProvider"])
s0, s1 = sess(False), sess(True)
x = {s0.get_inputs()[0].name: np.random.rand(1,3,224,224).astype(np.float32)}
for s in (s0, s1):
    for _ in range(5): s.run(None, x)
r = {0: [], 1: []}
for b in range(15):
    for k, s in ((0, s0), (1, s1)):
        t = []
        for _ in range(10):
            t0 = time.perf_counter(); s.run(None, x); t.append(time.perf_counter() - t0)
        r[k].append(statistics.median(t) * 1e3)
print("no profiler %.2f ms, profiler %.2f ms" % (statistics.median(r[0]), statistics.median(r[1])))
