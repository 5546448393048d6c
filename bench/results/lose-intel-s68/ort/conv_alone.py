# ORT's Conv node alone (hot, profiler), for ResNet-50 layers: C->C 3x3 at HxW.
import sys, json, os, time
sys.path.insert(0, '/work/main/bench')
import numpy as np
from onnx import TensorProto, helper, numpy_helper
import kernels_ort as k

def conv(c, h, ksz=3, cout=None):
    cout = cout or c
    rng = np.random.default_rng(4)
    w = numpy_helper.from_array(rng.standard_normal((cout, c, ksz, ksz), dtype=np.float32) * 0.05, "w")
    b = numpy_helper.from_array(rng.standard_normal((cout,), dtype=np.float32), "b")
    p = ksz // 2
    cv = helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[p]*4, strides=[1, 1], kernel_shape=[ksz, ksz])
    relu = helper.make_node("Relu", ["c"], ["y"])
    g = helper.make_graph([cv, relu], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, h])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, cout, h, h])], [w, b])
    return g, {"x": rng.standard_normal((1, c, h, h), dtype=np.float32)}

for spec in sys.argv[1:]:
    c, h, ksz, cout = (int(x) for x in spec.split(':'))
    g, feeds = conv(c, h, ksz, cout)
    s = k.profiled_conv_node(g, feeds, 1, 2.0)
    print(spec, f"{s*1e3:.4f} ms", flush=True)
