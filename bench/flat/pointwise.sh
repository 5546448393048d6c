#!/usr/bin/env bash
# Pointwise (1x1) convolutions on narrow maps, 2-D against the pixels flattened (the layout pass's
# kFlatWidth, graph/layout.cc): for each shape, a two-conv ONNX model (a cheap 1x1 conv from 8
# channels, then the measured 1x1 conv + ReLU, so the measured task reads a channel-blocked
# input as inside a CNN), its expert programs written and measured once with the flattening off
# (TLM_FLAT_PIXELS=0: the H x W task) and once on (the 1 x H*W task); prints the best expert of
# each. Sequential measurements (noisy on these VMs: the end-to-end effect is measured
# interleaved, bench/lose/modes.sh with @TLM_FLAT_PIXELS=0). Run from the root:
#   bench/flat/pointwise.sh OUT_DIR [THREADS=2]
set -euo pipefail
out=${1:?usage: bench/flat/pointwise.sh OUT_DIR [THREADS]}
t=${2:-2}
cpus=$( ((t == 1)) && echo 0 || echo "0-$((t - 1))")
tlm=$(pwd)/build/tlm
mkdir -p "$out"
/usr/bin/python3 - "$out" <<'PY'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
out = sys.argv[1]
rng = np.random.default_rng(0)
for cin, cout, hw in ((2048, 512, 7), (512, 2048, 7), (960, 160, 7), (160, 960, 7),
                      (1024, 256, 14), (256, 1024, 14), (96, 576, 14), (512, 128, 28)):
    init = [numpy_helper.from_array(rng.standard_normal((cin, 8, 1, 1)).astype(np.float32) * 0.1, "W0"),
            numpy_helper.from_array(rng.standard_normal((cout, cin, 1, 1)).astype(np.float32) * 0.02, "W"),
            numpy_helper.from_array(rng.standard_normal((cout,)).astype(np.float32), "B")]
    nodes = [helper.make_node("Conv", ["x", "W0"], ["a"], kernel_shape=[1, 1]),
             helper.make_node("Conv", ["a", "W", "B"], ["c"], kernel_shape=[1, 1]),
             helper.make_node("Relu", ["c"], ["y"])]
    name = f"pw{cin}_{cout}_{hw}x{hw}"
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, hw, hw])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, cout, hw, hw])], init)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, f"{out}/{name}.onnx")
PY
for f in "$out"/pw*.onnx; do
  b=${f%.onnx}
  for flat in 0 1; do
    TLM_FLAT_PIXELS=$flat "$tlm" --threads "$t" generate "$f" --layout nchwc --task 1 --expert -o "$b.f$flat.t$t.txt" 2>/dev/null
    rm -f "$b.f$flat.t$t.jsonl"
    taskset -c "$cpus" "$tlm" --threads "$t" measure "$b.f$flat.t$t.txt" --records "$b.f$flat.t$t.jsonl" \
      --workload "$f" --repeats 9 > /dev/null 2>&1
  done
done
python3 - "$out" "$t" <<'PY'
import glob, json, re, sys
out, t = sys.argv[1], sys.argv[2]
print(f"| conv (1x1 + ReLU) | 2-D best ms | flattened best ms | 2-D / flattened | flattened block |")
print("|---|---|---|---|---|")
for f in sorted(glob.glob(f"{out}/pw*.onnx")):
    b = f[:-5]
    best = []
    for flat in (0, 1):
        rs = [json.loads(l) for l in open(f"{b}.f{flat}.t{t}.jsonl")]
        rs = [r for r in rs if not r.get("error")]
        best.append(min(rs, key=lambda r: r["median_s"]))
    s = re.sub(r"f\d_convnchwc\.", "", best[1]["sentence"])
    blk = " ".join(re.findall(r"tile d[13] \d+ -> [\d ]+", s))
    a, c = best[0]["median_s"] * 1e3, best[1]["median_s"] * 1e3
    print(f"| {b.split('/')[-1][2:]} | {a:.3f} | {c:.3f} | {a / c:.2f}x | {blk} |")
PY
