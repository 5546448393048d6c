#!/usr/bin/env bash
# Catch the VM's slow mode (BENCHMARKS.md, "The slow mode"): repeat, for ROUNDS rounds, a few
# seconds of bench/lose/probe_crosscore.cc (CPU 1's read bandwidth of what it wrote, of what CPU 0
# wrote, and from memory) and then one interleaved run of MODEL against ONNX Runtime with the
# given record sets (bench/lose/interleave.py), so every interleaved ratio has the probe's
# reading of the machine's mode next to it. Both use CPUs 0 and 1; run nothing else meanwhile.
#
#   bench/lose/modes.sh OUT_DIR MODEL.onnx NAME=RECORDS [NAME=RECORDS...]
#
# Environment: ROUNDS=10, BLOCKS=15 (interleave.py --blocks), PROBE_S=3, THREADS=2,
# TLM_BIN=build/tlm. The artifacts are built once (OUT_DIR/art, interleave.py --reuse).
# Output: OUT_DIR/modes.log (one block per round: the probe's median line, then the ratios),
# OUT_DIR/probe.rN.txt, interleave.rN.txt, <model>.<T>t.rN.csv (interleave.py's per-block data).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[[ $# -ge 3 ]] || { sed -n 2,13p "$0" >&2; exit 1; }
out=$1; onnx=$2; shift 2
[[ -f $onnx ]] || { echo "error: no model at $onnx" >&2; exit 1; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
probe=$tmp/probe_crosscore
c++ -O2 -march=native -std=c++17 "$here/probe_crosscore.cc" -o "$probe" -lpthread
variants=()
for v in "$@"; do variants+=(--variant "$v"); done
threads=${THREADS:-2}
model=$(basename "$onnx" .onnx)
for ((r = 0; r < ${ROUNDS:-10}; r++)); do
  taskset -c 0-1 "$probe" "${PROBE_S:-3}" > "$out/probe.r$r.txt"
  {
    echo "== round $r $(date -u +%H:%M:%S)"
    # the median of the probe's one-second lines, column by column
    python3 - "$out/probe.r$r.txt" <<'EOF'
import statistics, sys
rows = [l.split()[1:] for l in open(sys.argv[1]) if l.strip() and l.split()[0].endswith("s")
        and l.split()[0][:-1].isdigit()]
cols = list(zip(*[[float(x) for x in r] for r in rows]))
names = ["own", "remote", "halves", "aligned", "memory"]
print("probe GB/s (CPU 1 reads 3.2 MB): " + ", ".join(
    f"{n} {statistics.median(c):.1f}" for n, c in zip(names, cols)))
EOF
  } >> "$out/modes.log"
  taskset -c 0-1 "$root/bench/.venv/bin/python" "$here/interleave.py" --threads "$threads" \
    "${variants[@]}" --blocks "${BLOCKS:-15}" --reuse --tlm "${TLM_BIN:-$root/build/tlm}" \
    --out "$out/art" "$onnx" > "$out/interleave.r$r.txt" 2>&1 || {
    echo "error: interleave.py failed, see $out/interleave.r$r.txt" >&2; exit 1; }
  grep "tlm / ORT" "$out/interleave.r$r.txt" >> "$out/modes.log"
  mv "$out/art/$model.${threads}t.csv" "$out/$model.${threads}t.r$r.csv"
done
