#!/usr/bin/env bash
# Runs the whole test suite (after scripts/setup.sh has built it).
set -euo pipefail
cd "$(dirname "$0")/.."
ctest --test-dir build --output-on-failure -j "${JOBS:-$(nproc)}" "$@"
