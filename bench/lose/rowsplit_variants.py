"""Row-split variants of the best program of every channel-blocked convolution task.

The question (BENCHMARKS.md, "Huge pages ..."): inside ResNet-50 at two threads the 1x1
convolutions that read a large activation run up to 2x their time alone, and in the VM's slow
mode far more than ONNX Runtime's. The long search's programs split the output's channel blocks
(d3) between the two threads, so each thread reads the half of its input the other core wrote.
A program whose S0 channel-block tile is 1 (all channel blocks inside) and whose parallel loop
fuses >= 2 S0 loops splits rows instead; if producer and consumer both split rows, each core
reads mostly what it wrote. These are points of the existing space (no language change).

    python3 bench/lose/rowsplit_variants.py RECORDS OUT.txt     # one sentence per varied task
    taskset -c 0-1 build/tlm measure OUT.txt --records VAR.jsonl --threads 2 --strategy rowsplit
    # then a records set per task: the variant where chosen, else the best of RECORDS, timed with
    # bench/lose/interleave.py against the best of RECORDS and ONNX Runtime in one process.
"""
import json
import re
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, out = sys.argv[1], sys.argv[2]
    best = {}
    for line in open(src):
        r = json.loads(line)
        if r.get("error"):
            continue
        k = r["task_key"]
        if k not in best or r["median_s"] < best[k]["median_s"]:
            best[k] = r
    n = 0
    with open(out, "w") as f:
        for r in best.values():
            s = r["sentence"]
            if not r["task_kind"].startswith("conv2d_nchwc"):
                continue
            m = re.search(r"tile (f\d+_convnchwc)\.d3 (\d+) -> (\d+) (\d+) (\d+)", s)
            if not m:
                continue
            stage, extent, b, c = m.group(1), int(m.group(2)), int(m.group(4)), int(m.group(5))
            if extent % (b * c):
                continue
            pad = re.search(r"pad %s\.d3 -> (\d+)" % stage, s)
            if pad and pad.group(1) != "1":
                s = s.replace(pad.group(0), "pad %s.d3 -> 1" % stage)
            s = s.replace(m.group(0), "tile %s.d3 %d -> %d %d %d" % (stage, extent, extent // (b * c), b, c))
            par = re.search(r"parallel (\S+) -> (\d+)", s)
            if par and int(par.group(2)) == 1:  # d3's S0 loop alone is now extent 1
                s = s.replace(par.group(0), "parallel %s -> 2" % par.group(1))
            if s != r["sentence"]:
                f.write(s + "\n")
                n += 1
    print(f"{n} variants written to {out}")


if __name__ == "__main__":
    main()
