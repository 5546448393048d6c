"""Pointwise convolutions 2-D against over the flattened pixels, from measured expert records:
for each 1x1 ConvNchwc task (its output map more than one pixel) measured in both forms on the
same machine key, the best expert's time of each, and the geomean of 2-D / flattened. The
forms are told apart by the subgraph (a flattened task's maps are [N, C/B, 1, H*W, B]); tasks
are matched by their weights, output shape (H*W) and epilogue ops. Records of the two forms
are usually measured at different times (the training workloads' expert records: 2-D in
sessions 33-36, flattened in session 37), so a single pair says little; the geomean over many
says more.

    python3 bench/flat/records_cmp.py HARDWARE_SUBSTRING RECORDS.jsonl[.gz]...
    e.g. python3 bench/flat/records_cmp.py cores=2, bench/results/zero-shot/expert-train-zen3.jsonl.gz
"""
import collections
import gzip
import json
import math
import re
import sys

hw = sys.argv[1]
best = collections.defaultdict(dict)


def form_and_key(sentence):
    sub = sentence[:sentence.index("isa=")]
    if "ConvNchwc" not in sub or not re.search(r"w0 \d+ \d+ 1 1 \d+ \d+ ", sub):
        return None, None
    flat = re.search(r"-> 1 \d+ 1 (\d+) \d+ ", sub)
    two_d = re.search(r"-> 1 \d+ (\d+) (\d+) \d+ ", sub)
    if flat and int(flat.group(1)) > 1:
        form, pixels = "flat", int(flat.group(1))
    elif two_d and int(two_d.group(1)) > 1:
        form, pixels = "2d", int(two_d.group(1)) * int(two_d.group(2))
    else:
        return None, None
    ops = " ".join(re.findall(r"\b(ConvNchwc|Relu|Add|Clip|Mul|HardSwish)\b", sub))
    weights = re.search(r"w0 ([\d ]+?) w1", sub)
    strides = re.search(r"strides (\d \d)", sub).group(1)
    return form, f"w0 {weights.group(1) if weights else '?'} strides {strides} pixels {pixels} {ops}"


for path in sys.argv[2:]:
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        for line in f:
            r = json.loads(line)
            if r.get("error") or hw not in r["hardware"] or r.get("strategy") != "expert":
                continue
            form, key = form_and_key(r["sentence"])
            if form is None:
                continue
            cur = best[key].get(form)
            if cur is None or r["median_s"] < cur:
                best[key][form] = r["median_s"]

rows = sorted((d["2d"] / d["flat"], k, d) for k, d in best.items() if "2d" in d and "flat" in d)
if not rows:
    sys.exit("no task measured in both forms")
geo = math.exp(sum(math.log(x[0]) for x in rows) / len(rows))
print(f"{len(rows)} pointwise convolutions measured in both forms ({hw}): 2-D / flattened geomean "
      f"{geo:.3f}, flattened faster in {sum(1 for x in rows if x[0] > 1)}")
by_pixels = collections.defaultdict(list)
for ratio, key, _ in rows:
    by_pixels[int(re.search(r"pixels (\d+)", key).group(1))].append(ratio)
for p, rs in sorted(by_pixels.items()):
    g = math.exp(sum(math.log(x) for x in rs) / len(rs))
    print(f"  {p} pixels: {len(rs)} convolutions, 2-D / flattened geomean {g:.3f}")
for ratio, key, d in rows:
    print(f"  {ratio:.2f}  {d['2d'] * 1e3:.3f} -> {d['flat'] * 1e3:.3f} ms  {key}")
