#!/bin/bash
# hz1.sh NAME [RANKER]: hz.sh at one thread (compile and measure with --threads 1 on CPU 0),
# ResNet-50 and MobileNet-V2 unless MODELS="..." names others: runs/hz/NAME.<model>.jsonl for
# `THREADS=1 bench/lose/modes.sh`.
THREADS=1 MODELS=${MODELS:-resnet50 mobilenet_v2} exec "$(dirname "$0")/hz.sh" "$@"
