#!/usr/bin/env bash
# "Where we lose": per task of ResNet-50, MobileNet-V2, BERT-base and GPT-2 (batch 1, the ONNX
# files of bench/e2e/models.py), tlm's best known program next to the time ONNX Runtime spends
# on the same ONNX nodes, sorted by the time lost (bench/lose/lose.py explains the mapping).
#
#   bench/lose/run.sh THREADS TRIALS [STEP...]    steps: maps peak heldout expert tune final
#                                                  ort inmodel pairs table (default: maps peak
#                                                  tune final ort inmodel peak table)
#
#   maps   `tlm extract MODEL --json` -> results/lose/maps/MODEL.json (tasks, instances, nodes)
#   heldout  the held-out driver's records of this machine instead of a tune step: for each set
#          of HELDOUT_SETS (default "tlm10"; e.g. "tlm10 tlm32 evolutionary200") the file
#          HELDOUT/records/MODEL.t<THREADS>.SET.jsonl (or its .gz) of the results directory
#          HELDOUT (bench/heldout/run.sh's RESULTS) -> records/MODEL.<THREADS>t.jsonl (replaced)
#   expert  every expert program of every task (`tlm generate --task all --expert`) measured
#          at THREADS (5 repeats) and appended to records/MODEL.<THREADS>t.jsonl
#   peak   tlm_bench_kernels --peak-only on the same cores, appended to peak_<THREADS>t.txt (run
#          at the start and before the table: the highest counts)
#   tune   tlm tune --strategy evolutionary --trials-per-task TRIALS --threads THREADS, records
#          results/lose/records/MODEL.<THREADS>t.jsonl (resumable: re-run with the same or a
#          larger TRIALS to continue), logs/MODEL.<THREADS>t.tune.log (the per-task table)
#   final  the best three (FINAL_TOP) programs of each task timed again (`tlm measure`, 15 samples; the
#          fastest counts; timed once more when `lose.py drift` finds a fifth of the model's time
#          above 1.3x its records, a slow stretch of the VM) right before
#          ORT's profile, so that both sides are measured in the same minutes ->
#          final/MODEL.<THREADS>t.jsonl (replaced on every run)
#   inmodel  the same best programs inside one whole tlm run (`tlm run --schedules best=final/...
#          --csv`, taking turns with the default schedules) -> inmodel/MODEL.<THREADS>t.csv: each
#          task's in-model time and tlm's whole run, beside ORT's (both sides then in-model)
#   ort    ONNX Runtime with its profiler, intra_op_num_threads THREADS -> ort/MODEL.<THREADS>t.json
#   pairs  ROUNDS (default 6) rounds, each ORT's profile (10 runs) and then one tlm run of the
#          final step's programs (the inmodel step, 10 runs), seconds apart -> ort/MODEL.<THREADS>t.rR.json
#          and inmodel/MODEL.<THREADS>t.rR.csv; the table adds each task's median in-model time
#          lost per round (this VM's fast and slow modes make columns measured minutes apart
#          incomparable; BENCHMARKS.md, "The slow mode"). Old rounds are removed first.
#   table  lose_<THREADS>t.csv, totals_<THREADS>t.json and lose.md (all thread counts present)
#
# Environment: MODELS (space-separated) narrows the models; CPUS pins every step (taskset;
# default 0 for one thread, 0-1 for two); BUILD is the build directory (default build); LOSE_OUT
# the results directory (default bench/results/lose; one per machine: latencies of different
# hardware never share a table). Records of any strategy count (e.g. the held-out driver's tuning
# runs concatenated into LOSE_OUT/records/MODEL.<THREADS>t.jsonl): the best program per task. Two tune
# lanes can share the work: CPUS=0 MODELS="resnet50 mobilenet_v2" ... tune & CPUS=1 MODELS=...
# LAYOUT (default nchw) is tlm's --layout for every step (nchwc: channel-blocked activations,
# docs/layout.md; its records belong to that layout's tasks). Every command run is appended to
# results/lose/commands.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."

main() {  # a function, called in one group with the exit at the end: safe to edit mid-run
  threads=${1:?usage: bench/lose/run.sh THREADS TRIALS [STEP...]}
  trials=${2:?usage: bench/lose/run.sh THREADS TRIALS [STEP...]}
  shift 2
  steps=("$@")
  ((${#steps[@]})) || steps=(maps peak tune final ort inmodel peak table)
  read -r -a models <<< "${MODELS:-resnet50 mobilenet_v2 bert-base gpt2}"
  build=${BUILD:-build}
  cpus=${CPUS:-$( ((threads == 1)) && echo 0 || echo "0-$((threads - 1))")}
  out=${LOSE_OUT:-bench/results/lose}
  export LOSE_OUT=$out
  onnx=bench/results/e2e/onnx
  layout=(--layout "${LAYOUT:-nchw}")
  mkdir -p "$out/maps" "$out/records" "$out/logs" "$out/ort" "$out/final" "$out/inmodel" "$onnx"

  run() {  # logs the command, then runs it
    echo "$*" >> "$out/commands.txt"
    "$@"
  }
  # The two measurements the ort, inmodel and pairs steps share (one place, so they cannot drift).
  ort_profile() {  # MODELS... with ORT_RUNS / ORT_TAG set by the caller ("" = lose.py's defaults)
    run taskset -c "$cpus" bench/.venv/bin/python bench/lose/lose.py ort --threads "$threads" \
      ${ORT_RUNS:+--runs "$ORT_RUNS"} ${ORT_TAG:+--tag "$ORT_TAG"} "$@"
  }
  final_of() {  # MODEL: the final step's records, or exit with a message
    local f=$out/final/$1.${threads}t.jsonl
    [[ -s $f ]] || { echo "$step: no $f (run the final step first)" >&2; exit 1; }
    echo "$f"
  }
  inmodel_run() {  # MODEL REPEAT CSV: one whole tlm run of the final step's programs
    local f
    f=$(final_of "$1")
    run taskset -c "$cpus" "$build/tlm" --threads "$threads" run "$onnx/$1.onnx" "${layout[@]}" \
      --schedules "best=$f" --no-verify --repeat "$2" --csv "$3" | grep -E '^end-to-end'
  }

  for step in "${steps[@]}"; do
    case $step in
      maps)
        bench/setup.sh > /dev/null
        for m in "${models[@]}"; do
          [[ -f $onnx/$m.onnx ]] || run /usr/bin/python3 bench/e2e/models.py --out-dir "$onnx" "$m"
          run "$build/tlm" extract "$onnx/$m.onnx" "${layout[@]}" --json "$out/maps/$m.json" > "$out/maps/$m.txt"
        done
        ;;
      heldout)
        [[ -d ${HELDOUT:-} ]] || { echo "heldout: set HELDOUT to a held-out results directory (bench/heldout/run.sh's RESULTS)" >&2; exit 1; }
        read -r -a sets <<< "${HELDOUT_SETS:-tlm10}"
        for m in "${models[@]}"; do
          dst=$out/records/$m.${threads}t.jsonl
          : > "$dst"
          for set in "${sets[@]}"; do
            src=$HELDOUT/records/$m.t$threads.$set.jsonl
            if [[ -f $src ]]; then cat "$src" >> "$dst"
            elif [[ -f $src.gz ]]; then zcat "$src.gz" >> "$dst"
            else echo "heldout: no $src(.gz)" >&2; exit 1
            fi
          done
          echo "   $m: $(wc -l < "$dst") records from ${sets[*]} of $HELDOUT"
          echo "heldout $HELDOUT ${sets[*]} -> $dst" >> "$out/commands.txt"
        done
        ;;
      expert)
        for m in "${models[@]}"; do
          progs=$out/logs/$m.expert.t$threads.txt
          run taskset -c "$cpus" "$build/tlm" --threads "$threads" generate "$onnx/$m.onnx" "${layout[@]}" \
            --task all --expert -o "$progs"
          run taskset -c "$cpus" "$build/tlm" --threads "$threads" measure "$progs" \
            --records "$out/records/$m.${threads}t.jsonl" --workload "$onnx/$m.onnx" --repeats 5 \
            > "$out/logs/$m.expert.t$threads.measure.log" 2>&1
          tail -1 "$out/logs/$m.expert.t$threads.measure.log" | sed 's/^/   /'
        done
        ;;
      peak)
        run taskset -c "$cpus" "$build/tlm_bench_kernels" --peak-only | tee -a "$out/peak_${threads}t.txt"
        ;;
      tune)
        for m in "${models[@]}"; do
          log=$out/logs/$m.${threads}t.tune.log
          echo "== $(date +%H:%M:%S) tune $m, $threads thread(s), $trials trials per task (cores $cpus)"
          run taskset -c "$cpus" nice -n 10 "$build/tlm" tune "$onnx/$m.onnx" "${layout[@]}" --strategy evolutionary \
            --threads "$threads" --trials-per-task "$trials" --records "$out/records/$m.${threads}t.jsonl" \
            --seed 0 --quiet --no-e2e > "$log" 2>&1 || echo "   tune $m failed (exit $?): see $log"
          grep -E '^sum over tasks|^measurements' "$log" | sed 's/^/   /' || true
        done
        ;;
      final)
        for m in "${models[@]}"; do
          f=$out/final/$m.${threads}t
          /usr/bin/python3 bench/lose/lose.py best "$m" --threads "$threads" --top "${FINAL_TOP:-3}" > "$f.txt"
          # Timed again once when a slow stretch of the VM caught it (lose.py drift: tasks
          # carrying over a fifth of the model's time above 1.3x their records' best).
          for attempt in 1 2; do
            rm -f "$f.jsonl"
            run taskset -c "$cpus" "$build/tlm" --threads "$threads" measure "$f.txt" --records "$f.jsonl" \
              --workload "$onnx/$m.onnx" --strategy final --repeats 15 --run-timeout 300 --quiet | tail -1
            drift=0
            /usr/bin/python3 bench/lose/lose.py drift "$m" --threads "$threads" | sed 's/^/   /' \
              || drift=$?
            [[ $drift == 0 ]] && break
            [[ $drift == 3 ]] || { echo "final: lose.py drift failed for $m" >&2; exit 1; }
            if [[ $attempt == 1 ]]; then echo "   $m: timed again (a slow stretch?)"
            else echo "   warning: $m's final is still far above its records: the table's alone column may be slow" >&2
            fi
          done
        done
        ;;
      ort)
        ort_profile "${models[@]}"
        ;;
      inmodel)
        for m in "${models[@]}"; do
          inmodel_run "$m" 20 "$out/inmodel/$m.${threads}t.csv"
        done
        ;;
      pairs)
        for m in "${models[@]}"; do
          final_of "$m" > /dev/null
          rm -f "$out"/ort/"$m".${threads}t.r*.json "$out"/inmodel/"$m".${threads}t.r*.csv
          for ((r = 0; r < ${ROUNDS:-6}; r++)); do
            ORT_RUNS=10 ORT_TAG=r$r ort_profile "$m" | sed 's/^/   /'
            inmodel_run "$m" 10 "$out/inmodel/$m.${threads}t.r$r.csv" | sed 's/^/   /'
          done
        done
        ;;
      table)
        run /usr/bin/python3 bench/lose/lose.py table --threads "$threads" "${models[@]}"
        run /usr/bin/python3 bench/lose/lose.py md
        ;;
      *)
        echo "unknown step '$step' (steps: maps peak heldout expert tune final ort inmodel pairs table)" >&2
        exit 1
        ;;
    esac
  done
}

{ main "$@"; exit; }  # one group: bash parses it whole before main runs
