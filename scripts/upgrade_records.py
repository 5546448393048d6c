#!/usr/bin/python3
"""Records format 1 -> 2 (measure/records.h): version-2 lines say which tensor-language version
their sentence is written in ("language"). Version-1 files were written under language 1 or 2,
which differ only in how a decision value above 999 is spelled (language 1: decimal, "1024";
language 2: "/k" or "#i"). So a sentence with no value above 999 means the same program in both
and is upgraded to language 2; one with a decimal value above 999 is language 1: it goes, marked
so, to OUT.language1.jsonl (kept, never lost; tlm refuses it: re-measure those programs).

    /usr/bin/python3 scripts/upgrade_records.py IN.jsonl OUT.jsonl

Prints how many lines were upgraded and how many are language 1."""
import json
import re
import sys

VALUE = re.compile(r"^(-?\d+|/\d+|#\d+)$")


def language_of(sentence):
    toks = sentence.split()
    hw = next((i for i, t in enumerate(toks) if t.startswith("isa=")), None)
    if hw is None:  # an autoscheduler marker: no sentence of ours
        return 2
    in_values = False
    for t in toks[hw + 6:]:
        if t == "->":
            in_values = True
        elif in_values and VALUE.match(t):
            if t.lstrip("-").isdigit() and int(t) > 999:
                return 1
        else:
            in_values = False
    return 2


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    counts = {1: 0, 2: 0}
    out, old = sys.argv[2], sys.argv[2].removesuffix(".jsonl") + ".language1.jsonl"
    with open(sys.argv[1]) as fin, open(out, "w") as fout, open(old, "w") as fold:
        for n, line in enumerate(fin, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                print(f"{sys.argv[1]}:{n}: skipped (not JSON: cut short by a crash?)")
                continue
            if r.get("version") != 1:
                sys.exit(f"{sys.argv[1]}:{n}: records version {r.get('version')}, expected 1")
            r["version"] = 2
            r["language"] = language_of(r["sentence"])
            counts[r["language"]] += 1
            f = fout if r["language"] == 2 else fold
            f.write(json.dumps(r, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n")
    print(f"{out}: {counts[2]} records upgraded to language 2; {old}: {counts[1]} of language 1 "
          f"(a value above 999 spelled in decimal: re-measure those)")


if __name__ == "__main__":
    main()
