#!/bin/bash
# Session 43: the zero-shot candidates of the untiled (Rows) tasks of the transformer training
# workloads -- the model's greedy program, the expert programs and 32 of its samples, as the
# "ranker" mode proposes them -- measured on Intel in one sitting, so the ranker sees the
# samples it ranks (a retrained ranker had picked an 8-row LayerNorm tile that ran 9x slower).
# Run from the repository root: bench/results/zero-shot/intel/s43/rows.sh OUTDIR
cd /work/main
out=${1:-runs/s43}
W2="gpt2:seq=64 gpt2:seq=256 bert-base:seq=64 bert-base:seq=256 bert-large:seq=128 llama_layer:seq=128 gpt2:seq=32 bert-base:seq=32 gpt2:seq=128,hidden=704,heads=11,ff=2816 gpt2:seq=128,hidden=832,heads=13,ff=3328"
lane() {  # THREADS CPUS OUT WORKLOADS...
  local t=$1 c=$2 o=$3; shift 3
  for w in "$@"; do
    f=$out/rows-cand.$t.$c.txt
    { taskset -c $c ./build/tlm --threads $t generate $w --task all --expert 2>/dev/null
      taskset -c $c ./build/tlm --threads $t generate $w --task all --beam 1 -n 1 2>/dev/null
      taskset -c $c ./build/tlm --threads $t generate $w --task all -n 32 --seed 43 2>/dev/null
    } | grep -v ' pack ' | awk '!seen[$0]++' > $f
    echo "$w: $(wc -l < $f) candidates"
    taskset -c $c ./build/tlm --threads $t measure $f --records $o --workload $w --strategy tlm-zero-shot-candidate --quiet | tail -1
  done
}
lane 2 0-1 $out/rows.2t.jsonl $W2
lane 1 0 $out/rows.1ta.jsonl gpt2:seq=64 bert-base:seq=64 llama_layer:seq=128 bert-base:seq=32 "gpt2:seq=128,hidden=832,heads=13,ff=3328" > $out/rows1a.log 2>&1 &
lane 1 1 $out/rows.1tb.jsonl gpt2:seq=256 bert-base:seq=256 bert-large:seq=128 gpt2:seq=32 "gpt2:seq=128,hidden=704,heads=11,ff=2816" > $out/rows1b.log 2>&1 &
wait
echo ROWS_DONE
