#!/usr/bin/env bash
# TVM MetaSchedule, the search peer of the subgraph benchmark (bench/tvm/README.md): installs the
# PyPI wheel apache-tvm into bench/.venv (made by bench/setup.sh, which is run first if the venv is
# missing). A benchmark peer only: nothing in src/ or tests/ imports it. Idempotent.
#
# Pins: apache-tvm-ffi, because the 0.1.15.post2 that pip resolves for apache-tvm 0.27 segfaults
# when a MetaSchedule tuning task is set up (0.1.14.post0 works); numpy to Debian's own, because the
# venv also serves Debian's torch, scipy and matplotlib, which are built against numpy 1.x and fail
# to import under the numpy 2 that ml_dtypes >= 0.6 (a TVM dependency) would pull in; onnx, because
# TVM's ONNX frontend needs onnx >= 1.13 (Debian's 1.12 lacks helper.tensor_dtype_to_np_dtype).
# MetaSchedule's cost model needs xgboost: the CPU-only wheel (the plain one pulls in CUDA's NCCL);
# its builder and runner worker processes need cloudpickle (and psutil, which Debian provides).
set -euo pipefail
cd "$(dirname "$0")/../.."
TVM_VERSION=0.27.0.post1
TVM_FFI_VERSION=0.1.14.post0
ONNX_VERSION=1.17.0
XGBOOST_VERSION=3.2.0
CLOUDPICKLE_VERSION=3.1.2
[[ -x bench/.venv/bin/python ]] || bench/setup.sh
py=bench/.venv/bin/python
NUMPY_VERSION=$(/usr/bin/python3 -c 'import numpy; print(numpy.__version__)')
installed() { "$py" -m pip show "$1" 2>/dev/null | sed -n 's/^Version: //p'; }
if [[ $(installed apache-tvm) != "$TVM_VERSION" || $(installed apache-tvm-ffi) != "$TVM_FFI_VERSION" ||
  $(installed numpy) != "$NUMPY_VERSION" || $(installed onnx) != "$ONNX_VERSION" ||
  $(installed xgboost-cpu) != "$XGBOOST_VERSION" || $(installed cloudpickle) != "$CLOUDPICKLE_VERSION" ||
  -z $(installed ml_dtypes) ]]; then
  # One resolve with every pin, so that pip never installs (and keeps) a bad ffi or numpy.
  "$py" -m pip install -q "apache-tvm==$TVM_VERSION" "apache-tvm-ffi==$TVM_FFI_VERSION" \
    "numpy==$NUMPY_VERSION" "onnx==$ONNX_VERSION" "ml_dtypes<0.6" \
    "xgboost-cpu==$XGBOOST_VERSION" "cloudpickle==$CLOUDPICKLE_VERSION"
fi
# The other peers in the venv must still import under the pinned numpy.
"$py" -c "import matplotlib.pyplot, onnxruntime, torch"
# torch is hidden from tvm (bench/tvm/no_torch, as subgraphs.import_tvm does): tvm.relax otherwise
# imports it and compiles (and, with Debian's torch, fails to compile) a C++ extension every time.
PYTHONPATH=bench/tvm/no_torch "$py" - <<'EOF'
import importlib.metadata as md
import cloudpickle, onnx, onnxruntime, psutil, tvm, xgboost
from tvm.s_tir import meta_schedule  # noqa: F401  (fails here, not mid-run, if the API moved)
print("bench/tvm set up: apache-tvm", md.version("apache-tvm"), "/ apache-tvm-ffi",
      md.version("apache-tvm-ffi"), "/ numpy", md.version("numpy"), "/ onnx", onnx.__version__,
      "/ onnxruntime", onnxruntime.__version__, "/ xgboost", xgboost.__version__)
EOF
