#!/usr/bin/env bash
# Held-out end-to-end evaluation (issue 11, point 5): the four held-out models (ResNet-50,
# MobileNet-V2, BERT-base, GPT-2 at batch 1, seq 128; the ONNX files of bench/e2e/models.py) tuned
# by the language model at 10 and 32 measurements per task (TLM-10xg, TLM-32xg), by evolutionary
# search at 10, 100 and 200 per task and by Halide's three autoschedulers; then, per model, ONE
# `tlm run` that compiles every resulting schedule set plus TLM-1xg (the language model's
# zero-shot program per task, no measurement) and tlm's default schedules, verifies each against the
# reference interpreter and times them all taking turns; ONNX Runtime and PyTorch eager before
# and after it. bench/heldout/README.md says what is compared and what the targets are.
#
#   bench/heldout/run.sh tune THREADS [CPU...]   tune every model with every job (resumable)
#   bench/heldout/run.sh final THREADS           peers, one `tlm run` per model, peers again
#   bench/heldout/run.sh select THREADS          the tuner's last steps (re-measurement, in-model
#                                                selection) again on finished record sets
#   bench/heldout/run.sh fill THREADS            finished record sets: tune the tasks they have
#                                                no program for (`tlm tune --missing`: tasks a
#                                                change of the graph added), each set's strategy
#                                                and budget per task
#   bench/heldout/run.sh oneproc THREADS         every set's AOT artifact and ONNX Runtime in ONE
#                                                process, taking turns (bench/heldout/oneproc.py)
#   bench/heldout/run.sh report                  bench/heldout/report.py -> heldout.md, heldout.csv
#   bench/heldout/run.sh all THREADS [CPU...]    tune, then final, then report
#
# select: for every MODELS x JOBS record set already tuned (a `.done`; evolutionary100 when
# evolutionary:200 is in JOBS and was cut by derive.py), gunzip it if needed and run its `tlm tune`
# again with the current binary: the budget is spent, so nothing new is searched; what the
# records lack of the tuner's step 4 (re-measuring the best three and, for tlm, the model's first
# program) is measured and step 4b (in-model selection, src/tune/in_model.h) times each task's
# finalists inside the model. For record sets tuned before session 52 (no in-model step), so
# every set is chosen the same way. Appends to the records and the tune logs.
# fill: the same finished sets, each tuned again with `--missing`: only the tasks without a record
# of its strategy (a graph rewrite gives a model new task keys: session 62's strided shortcuts
# gave ResNet-50 two), at the set's strategy and budget per task, then the tuner's steps 4 and 4b
# for them; a set with no task missing measures nothing (an evolutionary100 cut gets its missing
# tasks searched at 100 per task on their own).
# tune: THREADS=1 with CPUs (`tune 1 0 1`): one lane per CPU, pinned there (taskset) with
# --threads 1; the jobs x models are spread over the lanes by a rough cost estimate (largest
# first). THREADS >= 2: one lane, --threads THREADS, not pinned (CPUs are ignored). THREADS=1
# without CPUs: one unpinned lane.
# final: THREADS=1 pins everything (tlm run and the peers) to core FINAL_CPU (default 0).
# oneproc: the final's ratios to ONNX Runtime without the drift between processes: each set (but
# the Halide autoschedulers') compiled ahead of time, TLM-1xg and the default schedules too, and
# timed with ORT in one process -> RESULTS/oneproc/<model>.t<T>.{json,csv,log}; report shows them.
# THREADS=1 pins it to FINAL_CPU, else to cores 0-(THREADS-1). ONEPROC_ART=DIR keeps the
# artifacts there (reused when nothing changed; default: a temporary directory); ONEPROC_BLOCKS=15
# blocks per side (more where the machine is noisy: BERT-base and GPT-2 want 30).
#
# Environment:
#   MODELS="resnet50 mobilenet_v2 bert-base gpt2"   the models (space-separated)
#   JOBS="tlm:10 tlm:32 evolutionary:10 evolutionary:200 halide-mullapudi2016:1 halide-li2018:1
#         halide-adams2019:1"    STRATEGY:TRIALS_PER_TASK; strategies of `tlm tune --help`, plus
#                                halide-adams2019-greedy (Adams2019 with HL_BEAM_SIZE=1)
#   TLM_MODEL=CKPT       checkpoint of the tlm strategies and of TLM-1xg (default: models/tlm.ckpt);
#                        the tlm records remember it: final refuses another one
#   TLM_RANKER=JSON      zero-shot ranker of the tlm strategies' first proposals and of TLM-1xg
#                        (default: models/ranker.json); final and oneproc record its sha and run
#                        again when it changes
#   RESULTS=DIR          results directory (default bench/results/heldout)
#   ONNX_DIR=DIR         the exported models (default bench/results/e2e/onnx, shared with bench/e2e)
#   TUNE_E2E=1           let every `tlm tune` also compile, verify and time its model at the end
#                        (default: --no-e2e; final does that for all sets at once)
#   EVO100_RULE=prefix   how evolutionary100 is cut from evolutionary200 (derive.py): prefix (the
#                        first 100 x tasks search measurements = the run at 100 per task) or per-task
#   REPEAT=30 TURNS=6    `tlm run --repeat/--turns` of final (10 and 2 before session 52);
#                        PEER_REPEATS=10: peers.py --repeats
#   FINAL_CPU=0          the core of final with THREADS=1
#   FINAL_SEPARATE=""    set names timed in a `tlm run` of their own (with the defaults) instead
#                        of the shared one, e.g. "adams" (its autoscheduler re-runs in-process)
#   FINAL_TIMEOUT=10800  seconds one `tlm run` may take before it is stopped
#   REDO=1               final: re-run models whose final results are complete
#   DRY_RUN=1            tune: print how the runs are spread over the lanes, run nothing
#   LAYOUT=auto          tlm's --layout for every tune and final run (auto = nchwc, the default since
#                        session 26; nchw for the records of the earlier runs)
#   TLM_BIN=PATH         the tlm binary (default build/tlm); point it at a copy to keep building
#                        while a long run goes on
#
# Records: RESULTS/records/<model>.t<THREADS>.<strategy><trials>.jsonl (Halide autoschedulers,
# one program per task whatever the budget: <model>.t<THREADS>.<strategy>.jsonl); a finished run
# leaves <records>.done (skipped next time); the tlm runs' checkpoint is in <records>.ckpt.
# Derived: <model>.t<THREADS>.evolutionary100.jsonl, cut from evolutionary200 (derive.py) after a tune
# whose JOBS has evolutionary:200, and not again once cut from the finished search.
# Logs: RESULTS/logs/<model>.t<THREADS>.<tag>.log (appended, one "== date command" header per
# run). Final: RESULTS/final/<model>.t<THREADS>.{log,csv,json}, peers.<model>.t<THREADS>.{a,b}.csv.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
results=$(realpath -m "${RESULTS:-$root/bench/results/heldout}")
onnx_dir=$(realpath -m "${ONNX_DIR:-$root/bench/results/e2e/onnx}")
tlm_model=""
[[ -n "${TLM_MODEL:-}" ]] && tlm_model=$(realpath -m "$TLM_MODEL")
tlm_ranker=""
[[ -n "${TLM_RANKER:-}" ]] && tlm_ranker=$(realpath -m "$TLM_RANKER")
tlm_bin=$(realpath -m "${TLM_BIN:-$root/build/tlm}")
layout=${LAYOUT:-auto}
[[ -x $tlm_bin ]] || { echo "error: no tlm binary at $tlm_bin (build it, or set TLM_BIN)" >&2; exit 1; }
cd "$root"
read -r -a models <<< "${MODELS:-resnet50 mobilenet_v2 bert-base gpt2}"
read -r -a jobs <<< "${JOBS:-tlm:10 tlm:32 evolutionary:10 evolutionary:200 halide-mullapudi2016:1 halide-li2018:1 halide-adams2019:1}"
STRATEGIES=" random evolutionary expert-evolutionary tlm tlm-evolutionary halide-mullapudi2016 halide-li2018 halide-adams2019 halide-adams2019-greedy "

usage() {
  sed -n '11,22p' "$here/run.sh" | sed 's/^# *//' >&2
  exit 1
}

die() {
  echo "error: $*" >&2
  exit 1
}

for j in "${jobs[@]}"; do
  [[ $j =~ ^([a-z0-9-]+):([0-9]+)$ ]] || die "JOBS: '$j' is not STRATEGY:TRIALS"
  [[ $STRATEGIES == *" ${BASH_REMATCH[1]} "* ]] || die "JOBS: unknown strategy '${BASH_REMATCH[1]}'"
  [[ ${BASH_REMATCH[1]} == tlm || ${BASH_REMATCH[2]} -ge 1 ]] || die "JOBS: '$j' needs >= 1 trial"
  [[ ${BASH_REMATCH[2]} -ge 1 ]] || die "JOBS: '$j': TLM-1xg (no measurement) is always in final"
done

tag_of() {  # tag_of STRATEGY TRIALS: the records name of a job
  if [[ $1 == halide-* ]]; then echo "$1"; else echo "$1$2"; fi
}

task_count() {  # rough, for the lane balance only (`tlm extract` prints the exact ones)
  case $1 in
    resnet50) echo 27 ;; mobilenet_v2) echo 32 ;; bert-base) echo 10 ;; gpt2) echo 14 ;; *) echo 20 ;;
  esac
}

slowness() {  # measured throughput differs by model (bench/results/e2e logs: GPT-2's LM head
  # and BERT's big dense tasks are slow to time): cost factor in tenths
  case $1 in
    gpt2) echo 50 ;; bert-base) echo 20 ;; *) echo 10 ;;
  esac
}

cost_of() {  # cost_of MODEL STRATEGY TRIALS: rough seconds of one tuning run
  local n sl
  n=$(task_count "$1")
  sl=$(slowness "$1")
  case $2 in
    halide-mullapudi2016) echo $((n * 4 * sl / 10 + 60)) ;;
    halide-li2018) echo $((n * 6 * sl / 10 + 60)) ;;
    halide-adams2019) echo $((n * 60 * sl / 10 + 60)) ;;
    halide-adams2019-greedy) echo $((n * 5 * sl / 10 + 60)) ;;
    # 0.6 s a measurement (~100/min on ResNet-50), 0.8 s with the model writing, 3 re-measured
    tlm | tlm-evolutionary) echo $((n * ($3 + 3) * 8 * sl / 100 + 60)) ;;
    *) echo $((n * ($3 + 3) * 6 * sl / 100 + 60)) ;;
  esac
}

ckpt_id() {  # the checkpoint of the tlm strategies: "sha256 path"
  local c=${tlm_model:-$root/models/tlm.ckpt}
  [[ -f $c ]] || die "no checkpoint $c (TLM_MODEL)"
  echo "$(sha256sum "$c" | cut -c1-16) $c"
}

prepare() {  # the ONNX files (and bench/.venv for the peers)
  bench/setup.sh
  mkdir -p "$onnx_dir"
  for m in "${models[@]}"; do
    [[ -f "$onnx_dir/$m.onnx" ]] || /usr/bin/python3 bench/e2e/models.py --out-dir "$onnx_dir" "$m"
  done
}

marker_of() {  # what a finished run's .done file says
  local m=$1 s=$2 b=$3 t=$4 extra=""
  [[ $s == tlm || $s == tlm-evolutionary ]] && extra=" ckpt=$(ckpt_id | cut -d' ' -f1)"
  echo "$m $s trials=$b threads=$t$extra"
}

tune_one() {  # tune_one MODEL STRATEGY TRIALS THREADS CPU("" = not pinned) LANE
  local m=$1 s=$2 b=$3 t=$4 cpu=$5 lane=$6 tag rec log
  tag=$(tag_of "$s" "$b")
  rec="$results/records/$m.t$t.$tag.jsonl"
  log="$results/logs/$m.t$t.$tag.log"
  local want
  want=$(marker_of "$m" "$s" "$b" "$t")
  if [[ ${SELECTING:-0} == 1 ]]; then  # select, fill: finished sets only, and they stay finished
    if [[ -e $rec.meta.json || ( -f $rec.done && $(cat "$rec.done") == "$want" ) ]]; then
      [[ -s $rec || ! -e $rec.gz ]] || gunzip -k "$rec.gz"
      [[ -s $rec ]] || { echo "[$lane] $m $tag: no records" >&2; return 1; }
    else
      echo "[$lane] $m $tag: not finished (no .done): skipped"
      return 0
    fi
  elif [[ -f $rec.done && $(cat "$rec.done") == "$want" ]]; then
    echo "[$lane] $m $tag: finished earlier (skipped; delete $rec.done to run it again)"
    return 0
  fi
  local cmd=("$tlm_bin" tune "$onnx_dir/$m.onnx" --strategy "$s" --trials-per-task "$b"
    --records "$rec" --threads "$t" --seed 0 --quiet --layout "$layout") env=() pin=()
  [[ ${TUNE_E2E:-0} == 1 ]] || cmd+=(--no-e2e)
  [[ ${FILLING:-0} == 1 ]] && cmd+=(--missing)
  if [[ $s == halide-adams2019-greedy ]]; then
    env=(env HL_BEAM_SIZE=1)
    cmd[4]=halide-adams2019
  fi
  if [[ $s == tlm || $s == tlm-evolutionary ]]; then
    local id
    id=$(ckpt_id)
    # One records file, one checkpoint: resuming with another would mix two models' programs.
    if [[ -s $rec && -f $rec.ckpt && $(cut -d' ' -f1 < "$rec.ckpt") != "${id%% *}" ]]; then
      echo "[$lane] $m $tag: FAILED: $rec was tuned with checkpoint $(cat "$rec.ckpt"), not" \
        "$id: set TLM_MODEL back or delete the records" >&2
      return 1
    fi
    echo "$id" > "$rec.ckpt"
    [[ -n $tlm_model ]] && cmd+=(--model "$tlm_model")
    [[ -n $tlm_ranker ]] && cmd+=(--ranker "$tlm_ranker")
  fi
  [[ -n $cpu ]] && pin=(taskset -c "$cpu")
  echo "[$lane] $(date +%H:%M:%S) $m $tag (threads $t${cpu:+, core $cpu})"
  local rc=0 t0=$SECONDS
  {
    echo "== $(date '+%F %T') ${env[*]} ${pin[*]} ${cmd[*]}"
    "${env[@]}" "${pin[@]}" "${cmd[@]}" 2>&1 || rc=$?
    echo "== exit $rc after $((SECONDS - t0)) s"  # the whole process: model import included
  } >> "$log"
  if ((rc != 0)); then
    echo "[$lane] $m $tag: FAILED (exit $rc): see $log" >&2
    return 1
  fi
  [[ ${SELECTING:-0} == 1 ]] || echo "$want" > "$rec.done"
  grep -E '^(measurements|in-model)' "$log" | tail -2 | sed "s/^/[$lane]    /" || true
}

lane() {  # lane THREADS CPU LANE_NAME UNIT... (UNIT = MODEL/STRATEGY/TRIALS)
  local t=$1 cpu=$2 name=$3 failed=0 u
  shift 3
  for u in "$@"; do
    IFS=/ read -r m s b <<< "$u"
    tune_one "$m" "$s" "$b" "$t" "$cpu" "$name" || failed=$((failed + 1))
  done
  ((failed == 0)) || echo "[$name] $failed run(s) failed" >&2
  return "$failed"
}

derive() {  # derive THREADS: evolutionary100 from evolutionary200 (when JOBS has evolutionary:200)
  local t=$1 m src dst
  # Only after a tune that ran the 200xg search: a cut that `select` has since completed (its
  # re-measurements and in-model picks appended) must not be cut again by an unrelated tune.
  [[ " ${jobs[*]} " == *" evolutionary:200 "* ]] || return 0
  for m in "${models[@]}"; do
    src="$results/records/$m.t$t.evolutionary200.jsonl"
    dst="$results/records/$m.t$t.evolutionary100.jsonl"
    [[ -s $src ]] || continue
    # Cut after the search finished: the source has not changed since (select appends only to
    # the cut), so the cut stays as it is.
    if [[ -e $dst.meta.json && -e $src.done && $dst.meta.json -nt $src.done ]]; then
      echo "   $m: $dst was cut from the finished search: kept"
      continue
    fi
    # A run of its own at 100 per task (records without derive.py's .meta.json) is kept.
    if [[ -s $dst || -e $dst.gz ]] && [[ ! -e $dst.meta.json ]]; then
      echo "   $m: $dst is a tuning run of its own: kept, not derived"
      continue
    fi
    /usr/bin/python3 bench/heldout/derive.py --src "$src" --log "$results/logs/$m.t$t.evolutionary200.log" \
      --dst "$dst" --trials 100 --rule "${EVO100_RULE:-prefix}" ||
      echo "   $m: evolutionary100 not derived (see above)" >&2
  done
}

tune() {  # tune THREADS [CPU...]
  local t=${1:?usage: tune THREADS [CPU...]}
  shift
  [[ $t =~ ^[1-9][0-9]*$ ]] || die "THREADS must be a positive number, not '$t'"
  local cpus=("$@")
  if ((t >= 2 && ${#cpus[@]} > 0)); then
    echo "note: THREADS=$t: one unpinned lane with --threads $t; CPUs ($*) ignored"
    cpus=()
  fi
  ((${#cpus[@]} > 0)) || cpus=("")
  mkdir -p "$results/records" "$results/logs"
  [[ " ${jobs[*]}" != *" tlm"* ]] || ckpt_id > /dev/null  # a missing checkpoint fails here, once
  # Units (model x job) with their cost, largest first, each to the lane with the least so far.
  local lines=() m j s b c
  for m in "${models[@]}"; do
    for j in "${jobs[@]}"; do
      s=${j%%:*} b=${j##*:}
      c=$(cost_of "$m" "$s" "$b")
      local rec
      rec="$results/records/$m.t$t.$(tag_of "$s" "$b").jsonl"
      [[ -f $rec.done && $(cat "$rec.done") == "$(marker_of "$m" "$s" "$b" "$t")" ]] && c=0
      lines+=("$c $m/$s/$b")
    done
  done
  ((${#lines[@]})) || die "nothing to tune (MODELS, JOBS)"
  local n=${#cpus[@]} i best
  local -a load units
  for ((i = 0; i < n; i++)); do load[i]=0 units[i]=""; done
  while read -r c u; do
    best=0
    for ((i = 1; i < n; i++)); do ((load[i] < load[best])) && best=$i; done
    load[best]=$((load[best] + c))
    units[best]+="$u "
  done < <(printf '%s\n' "${lines[@]}" | sort -s -k1,1 -rn)
  echo "== $(date '+%F %T') tune: threads $t, ${#models[@]} model(s), jobs: ${jobs[*]}"
  local pids=() name
  for ((i = 0; i < n; i++)); do
    name=${cpus[i]:+core ${cpus[i]}}
    name=${name:-lane}
    echo "   $name: ${units[i]:-nothing} (~$((load[i] / 60)) min by the rough estimate)"
    [[ ${DRY_RUN:-0} == 1 ]] && continue
    # shellcheck disable=SC2086
    lane "$t" "${cpus[i]}" "$name" ${units[i]} &
    pids+=($!)
  done
  [[ ${DRY_RUN:-0} == 1 ]] && return 0
  local failed=0 p
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
  derive "$t"
  if ((failed)); then
    echo "== $(date '+%F %T') tune done; some runs failed (see above)"
  else
    echo "== $(date '+%F %T') tune done"
  fi
  return "$failed"
}

final() {  # final THREADS
  local t=${1:?usage: final THREADS}
  [[ $t =~ ^[1-9][0-9]*$ ]] || die "THREADS must be a positive number, not '$t'"
  mkdir -p "$results/final"
  local args=(--results "$results" --onnx-dir "$onnx_dir" --threads "$t"
    --repeat "${REPEAT:-30}" --turns "${TURNS:-6}" --peer-repeats "${PEER_REPEATS:-10}" --timeout "${FINAL_TIMEOUT:-10800}"
    --tlm "$tlm_bin" --layout "$layout")
  ((t == 1)) && args+=(--cpu "${FINAL_CPU:-0}")
  [[ -n $tlm_model ]] && args+=(--tlm-model "$tlm_model")
  [[ -n $tlm_ranker ]] && args+=(--tlm-ranker "$tlm_ranker")
  [[ -n ${FINAL_SEPARATE:-} ]] && args+=(--separate "$FINAL_SEPARATE")
  [[ ${REDO:-0} == 1 ]] && args+=(--redo)
  local m rc=0
  for m in "${models[@]}"; do
    # exit 1: a held-out violation (or another checkpoint than the tlm runs'): stop everything.
    /usr/bin/python3 bench/heldout/final.py "${args[@]}" "$m" || rc=$?
    ((rc == 0)) || { echo "final: stopped at $m (exit $rc)" >&2; return "$rc"; }
  done
}

select_again() {  # select THREADS; with FILLING=1, fill THREADS
  local t=${1:?usage: select THREADS} what=select
  [[ ${FILLING:-0} == 1 ]] && what=fill
  [[ $t =~ ^[1-9][0-9]*$ ]] || die "THREADS must be a positive number, not '$t'"
  local m j s b failed=0
  local -a units=()
  for j in "${jobs[@]}"; do
    units+=("$j")
    [[ $j == evolutionary:200 ]] && units+=("evolutionary:100")
  done
  mkdir -p "$results/logs"
  echo "== $(date '+%F %T') $what: threads $t, ${#models[@]} model(s), jobs: ${units[*]}"
  for m in "${models[@]}"; do
    for j in "${units[@]}"; do
      s=${j%%:*} b=${j##*:}
      SELECTING=1 tune_one "$m" "$s" "$b" "$t" "" "$what" || failed=1
    done
  done
  return "$failed"
}

oneproc() {  # oneproc THREADS
  local t=${1:?usage: oneproc THREADS}
  [[ $t =~ ^[1-9][0-9]*$ ]] || die "THREADS must be a positive number, not '$t'"
  local cpu_list="0-$((t - 1))"
  ((t == 1)) && cpu_list=${FINAL_CPU:-0}
  local args=(--results "$results" --onnx-dir "$onnx_dir" --threads "$t" --cpus "$cpu_list"
    --tlm "$tlm_bin" --layout "$layout")
  [[ -n $tlm_model ]] && args+=(--tlm-model "$tlm_model")
  [[ -n $tlm_ranker ]] && args+=(--tlm-ranker "$tlm_ranker")
  [[ -n ${ONEPROC_ART:-} ]] && args+=(--art-dir "$ONEPROC_ART")
  [[ -n ${ONEPROC_BLOCKS:-} ]] && args+=(--blocks "$ONEPROC_BLOCKS")
  [[ ${REDO:-0} == 1 ]] && args+=(--redo)
  local m rc=0
  for m in "${models[@]}"; do
    /usr/bin/python3 bench/heldout/oneproc.py "${args[@]}" "$m" || rc=1
  done
  return "$rc"
}

report() {
  /usr/bin/python3 bench/heldout/report.py --results "$results"
}

# One function, and its call and the exit in one group, each read whole before it runs: editing
# this file during a long run is safe (bash reads a script as it goes).
main() {
  case "${1:-}" in
    tune)
      (($# >= 2)) || usage
      [[ ${DRY_RUN:-0} == 1 ]] || prepare
      tune "${@:2}"
      ;;
    final)
      (($# == 2)) || usage
      prepare
      final "$2"
      ;;
    select)
      (($# == 2)) || usage
      select_again "$2"
      ;;
    fill)
      (($# == 2)) || usage
      FILLING=1 select_again "$2"
      ;;
    oneproc)
      (($# == 2)) || usage
      prepare
      oneproc "$2"
      ;;
    report)
      report
      ;;
    all)
      (($# >= 2)) || usage
      prepare
      tune "${@:2}" || echo "tune: some runs failed; final goes on with the records there are" >&2
      final "$2"
      report
      ;;
    *)
      usage
      ;;
  esac
}

{ main "$@"; exit $?; }
