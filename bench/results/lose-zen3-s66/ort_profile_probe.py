import onnxruntime as ort, numpy as np, time, sys, os, tempfile, statistics
path=sys.argv[1]; threads=int(sys.argv[2])
def mk(profile, save):
    so=ort.SessionOptions(); so.intra_op_num_threads=threads; so.inter_op_num_threads=1
    so.graph_optimization_level=ort.GraphOptimizationLevel.ORT_ENABLE_ALL; so.log_severity_level=3
    tmp=tempfile.mkdtemp()
    if profile:
        so.enable_profiling=True; so.profile_file_prefix=os.path.join(tmp,"p")
    if save:
        so.optimized_model_filepath=os.path.join(tmp,"o.onnx")
        so.add_session_config_entry("session.optimized_model_external_initializers_file_name","w.bin")
        so.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes","1024")
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
variants={"plain":mk(0,0),"profile":mk(1,0),"save":mk(0,1),"both":mk(1,1)}
s=variants["plain"]; rng=np.random.default_rng(0)
feed={i.name:(rng.standard_normal(i.shape).astype(np.float32) if "float" in i.type else rng.integers(0,1000,i.shape).astype(np.int64)) for i in s.get_inputs()}
res={k:[] for k in variants}
for k,v in variants.items():
    for _ in range(3): v.run(None,feed)
for r in range(8):
    for k,v in variants.items():
        t=time.perf_counter()
        for _ in range(3): v.run(None,feed)
        res[k].append((time.perf_counter()-t)/3*1e3)
for k in res: print(k, "%.2f"%statistics.median(res[k]), " ".join("%.1f"%x for x in res[k]))
