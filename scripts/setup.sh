#!/usr/bin/env bash
# Installs every Debian package tlm needs, then configures and builds it in ./build.
# Safe to re-run: apt-get skips what is installed, cmake rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libhalide14-0-dev            # Halide 14: JIT/AOT code generation + autoscheduler plugins
  libonnx-dev libonnx-testdata # ONNX C++ library (protobuf) and its operator test cases
  libprotobuf-dev protobuf-compiler
  zlib1g-dev                   # gzip-compressed records files
  libtorch-dev                 # libtorch: the language model (later stages) and a benchmark peer
  libopenblas0-openmp          # BLAS for libtorch: without it, Debian's libtorch silently uses the
                               # reference netlib BLAS, ~30x slower. OpenBLAS 0.3.21 misdetects
                               # AVX-512 Intel CPUs: set OPENBLAS_CORETYPE=SkylakeX there.
  libxgboost-dev xgboost       # cost model of the evolutionary search (its CMake config needs both)
  libcli11-dev nlohmann-json3-dev libgtest-dev libbenchmark-dev
  python3-torch python3-torchvision python3-onnx  # only for the zoo's torchvision parity test
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  echo "[setup] installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

JOBS=${JOBS:-$(nproc)}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$JOBS"
echo "[setup] built ./build/tlm"
