#!/bin/bash
# Session 44: the zero-shot candidates of every task of the four HELD-OUT models -- the expert
# programs, the language model's greedy program and, for untiled tasks, 32 of its samples, as the
# "ranker" mode proposes them -- measured on Intel in one sitting at T threads (default 2). An
# evaluation set for rankers (`tlm ranker eval --records`), never training data: the file is not
# an expert-train* archive and `tlm ranker train` leaves held-out tasks out by key anyway.
# Run from the repository root: bench/results/zero-shot/intel/s44/hocand.sh OUT.jsonl
# (MODELS="..." narrows the models; LISTS=DIR keeps the candidate lists there, default runs/s44.)
cd /work/main
out=$1; t=${THREADS:-2}
cpus=$( ((t == 1)) && echo 0 || echo "0-$((t - 1))")
for m in ${MODELS:-resnet50 mobilenet_v2 bert-base gpt2}; do
  w=bench/results/e2e/onnx/$m.onnx
  mkdir -p ${LISTS:-runs/s44}
  f=${LISTS:-runs/s44}/hocand.$m.txt
  { taskset -c $cpus ./build/tlm --threads $t generate $w --task all --expert 2>/dev/null
    taskset -c $cpus ./build/tlm --threads $t generate $w --task all --beam 1 -n 1 2>/dev/null
    taskset -c $cpus ./build/tlm --threads $t generate $w --task all -n 32 --seed 44 2>/dev/null | grep -v ' pack '
  } | awk '!seen[$0]++' > $f
  echo "$m: $(wc -l < $f) candidates"
  taskset -c $cpus ./build/tlm --threads $t measure $f --records $out --workload $w --strategy tlm-zero-shot-candidate --quiet | tail -1
done
echo HOCAND_DONE
