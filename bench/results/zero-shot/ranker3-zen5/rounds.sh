#!/bin/bash
# rounds.sh N OUT SETS...: N rounds over the three training CNNs; each SET is NAME (runs/rk/zs/NAME.<model>.jsonl) or base
cd /work/main
n=$1; out=$2; shift 2
for i in $(seq $n); do
  for m in resnet50:image=192 resnet18:image=224 mobilenet_v2:image=192; do
    tag=$(echo "$m" | tr ':=,@' '____')
    case $tag in resnet50_image_192) b=r192;; *) b=$tag;; esac
    sets=""
    for s in "$@"; do
      if [ $s = base ]; then f=bench/results/zero-shot/rows-zen5/$b.p45.jsonl.gz; else f=runs/rk/zs/$s.$tag.jsonl; fi
      sets="$sets${sets:+,}$s=$f"
    done
    echo "$(date +%H:%M:%S) $(taskset -c 0-1 build/tlm --threads 2 run $m --schedules $sets --no-verify --repeat 15 2>&1 | grep 'end-to-end:')" >> $out
  done
done
