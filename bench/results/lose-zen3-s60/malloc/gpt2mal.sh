cd /work/main
R=bench/results/lose-zen3-s60/final/gpt2.1t.jsonl
for r in 1 2 3; do for v in plain tun; do
 if [ $v = tun ]; then export GLIBC_TUNABLES=glibc.malloc.mmap_threshold=1073741824:glibc.malloc.trim_threshold=1073741824; else unset GLIBC_TUNABLES; fi
 taskset -c 0 ./build/tlm --threads 1 run bench/results/e2e/onnx/gpt2.onnx --schedules a=$R --no-verify --repeat 10 --csv /tmp/s60/g-$v-$r.csv > /tmp/s60/g-$v-$r.out 2>&1
done; done
