#!/usr/bin/env python3
"""Writes the text seed corpora (layout, id, policy) from the shared vectors.

    python3 fuzz/make_seeds.py

Each seed file is named after a hash of its content, as libFuzzer names
corpus files. The value and c_abi targets read structured (arbitrary) input:
their seeds are a handful of inputs found by fuzzing, kept by hand.
"""
import hashlib
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"


def load(name):
    return json.loads((ROOT / "vectors" / name).read_text())


def write(target, texts, limit):
    out = CORPUS / target
    out.mkdir(parents=True, exist_ok=True)
    seen = []
    for t in texts:
        if t not in seen:
            seen.append(t)
    for t in seen[:limit]:
        data = t.encode()
        (out / hashlib.sha1(data).hexdigest()).write_bytes(data)


layouts = [c["layout"] for c in load("layouts.json")["cases"]]
# A few presets, the accepted descriptors, then the refused ones (each a
# different reason), so the corpus stays small.
write("layout", layouts[:3] + layouts[10:16] + layouts[18:30:2] + layouts[-4:], 24)

strings = load("strings.json")
ids = [p["input"] for p in strings["parse"]]
ids += [e[f] for e in strings["encode"][-3:] for f in ("decimal", "base32", "base62")]
write("id", ids, 30)

policies = set()
for case in load("generate.json")["cases"]:
    for k, v in (case.get("options") or {}).items():
        if k in ("clock_backwards", "sequence_exhausted", "sequence_start"):
            policies.add(v)
write("policy", sorted(policies) + ["cycle:0", "wait:007", "borrow:18446744073709551616"], 24)
