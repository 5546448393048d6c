#!/usr/bin/env bash
# End-to-end benchmark: ResNet-50, MobileNet-V2, BERT-base (seq 128) and GPT-2 (seq 128) at batch
# 1, each exported once to ONNX by bench/e2e/models.py, then
#   - tuned by tlm with every strategy at an equal budget (random, evolutionary: TRIALS trials per
#     task; the Halide autoschedulers: one program per task), each run ending with the whole model
#     compiled with its best programs, verified against the interpreter and timed, next to tlm's
#     default schedules (`tlm tune` does all of this itself);
#   - run by PyTorch eager and ONNX Runtime on the same module / ONNX file (bench/e2e/peers.py).
# Results: bench/results/e2e/{onnx/ (not committed), logs/, records/, peers.csv} and, from
# report.py, e2e.csv / e2e.md / e2e.png.
#
#   bench/e2e/run.sh all [TRIALS=16]               both lanes side by side, then peers and report
#   bench/e2e/run.sh lane CPU TRIALS STRATEGY...   these strategies on every model, on core CPU
#   bench/e2e/run.sh peers                         PyTorch eager and ONNX Runtime, then report
#
# Threads: every runtime uses one thread pinned to one core (taskset), so that two strategies
# tune side by side (lane 0: random and the fast autoschedulers; lane 1: evolutionary and
# Adams2019) under the same conditions. Adams2019 runs with its default beam search; strategy
# name halide-adams2019-greedy runs it with HL_BEAM_SIZE=1 instead (logs and records under that
# name). MODELS (env, space-separated) narrows the model list.
# Resumable: records are appended and `tlm tune` continues from them.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/results/e2e
read -r -a models <<< "${MODELS:-resnet50 mobilenet_v2 bert-base gpt2}"
mkdir -p "$out/onnx" "$out/logs" "$out/records"

prepare() {
  bench/setup.sh
  for m in "${models[@]}"; do
    [[ -f "$out/onnx/$m.onnx" ]] || /usr/bin/python3 bench/e2e/models.py --out-dir "$out/onnx" "$m"
  done
}

tune() {  # tune MODEL STRATEGY CPU TRIALS
  local log="$out/logs/$1.$2.log" env=() strategy=$2
  if [[ $2 == halide-adams2019-greedy ]]; then
    env=(env HL_BEAM_SIZE=1)
    strategy=halide-adams2019
  fi
  echo "== $(date +%H:%M:%S) $1 $2 (core $3)"
  "${env[@]}" taskset -c "$3" ./build/tlm tune "$out/onnx/$1.onnx" --strategy "$strategy" --threads 1 \
    --quiet --trials-per-task "$4" --records "$out/records/$1.$2.jsonl" --seed 0 > "$log" 2>&1 ||
    echo "   $1 $2 failed (exit $?): see $log"
  grep -E '^end-to-end|^measurements' "$log" | sed 's/^/   /' || true
}

lane() {  # lane CPU TRIALS STRATEGY...
  local cpu=$1 trials=$2
  shift 2
  for s in "$@"; do
    for m in "${models[@]}"; do tune "$m" "$s" "$cpu" "$trials"; done
  done
}

peers() {
  echo "== $(date +%H:%M:%S) peers"
  (cd bench/e2e && taskset -c 0 ../.venv/bin/python peers.py --onnx-dir ../results/e2e/onnx \
    --threads 1 --csv ../results/e2e/peers.csv "${models[@]}")
  /usr/bin/python3 bench/e2e/report.py
}

case "${1:-all}" in
  all)
    prepare
    trials=${2:-16}
    lane 0 "$trials" random halide-mullapudi2016 halide-li2018 &
    lane 1 "$trials" evolutionary halide-adams2019 &
    wait
    peers
    ;;
  lane)
    prepare
    lane "${@:2}"
    ;;
  peers)
    prepare
    peers
    ;;
  *)
    echo "usage: bench/e2e/run.sh all [TRIALS] | lane CPU TRIALS STRATEGY... | peers" >&2
    exit 1
    ;;
esac
