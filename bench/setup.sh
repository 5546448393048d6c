#!/usr/bin/env bash
# What the benchmarks need beyond the core (run after scripts/setup.sh): matplotlib for the plots
# (Debian); OpenBLAS (Debian, the OpenMP build scripts/setup.sh installs for libtorch), without which Debian's torch falls back to the reference BLAS and
# the PyTorch eager peer runs 10-30x slower than it should; and ONNX Runtime -- the PyPI package, a benchmark peer only -- in bench/.venv, a venv
# over Debian's python3 so that it also sees Debian's torch/torchvision. Nothing in src/ or tests/
# uses either.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO=sudo
if ! /usr/bin/python3 -c "import matplotlib, venv" 2>/dev/null ||
  ! dpkg -s libopenblas0-openmp >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq python3-matplotlib python3-venv libopenblas0-openmp
fi
if [[ ! -x bench/.venv/bin/python ]]; then
  /usr/bin/python3 -m venv --system-site-packages bench/.venv
fi
if ! bench/.venv/bin/python -c "import onnxruntime, onnx" 2>/dev/null; then
  # onnx (the Python package) only builds the kernel benchmark's one-node peer models.
  bench/.venv/bin/pip install -q onnxruntime onnx
fi
bench/.venv/bin/python -c "import onnxruntime, torch, matplotlib; print('bench set up: onnxruntime', onnxruntime.__version__, '/ torch', torch.__version__)"
