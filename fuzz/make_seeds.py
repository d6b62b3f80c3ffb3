#!/usr/bin/env python3
"""Writes the text seed corpora (layout, id, policy) from the shared vectors.

    python3 fuzz/make_seeds.py

Each seed file is named after a hash of its content, as libFuzzer names
corpus files; the thrift target's seeds are framed binary-protocol calls
built here. The value and c_abi targets read structured (arbitrary) input:
their seeds are a handful of inputs found by fuzzing, kept by hand.
"""
import hashlib
import json
import pathlib
import struct

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


def thrift_frame(body):
    return struct.pack(">i", len(body)) + body


def thrift_call(name, seqid, args=b"", kind=1):
    n = name.encode()
    head = struct.pack(">Ii", 0x80010000 | kind, len(n)) + n + struct.pack(">i", seqid)
    return thrift_frame(head + args + b"\x00")


def thrift_string_field(fid, value):
    return struct.pack(">bhi", 11, fid, len(value)) + value


# The thrift target reads bytes: calls of each method (strict binary protocol,
# framed), skipped arguments of every type, refused headers and lengths.
thrift = [
    thrift_call("get_id", 1, thrift_string_field(1, b"web-1")),
    thrift_call("get_worker_id", 2),
    thrift_call("get_datacenter_id", 3),
    thrift_call("get_timestamp", 4),
    thrift_call("get_ids", 5),
    thrift_call("get_id", 6, kind=2),
    thrift_call("get_id", 7, struct.pack(">bhq", 10, 2, -1) + thrift_string_field(1, b"a")),
    thrift_call(
        "get_timestamp",
        8,
        struct.pack(">bh", 12, 1) + struct.pack(">bhb", 2, 1, 1) + b"\x00"
        + struct.pack(">bhbbi", 13, 2, 8, 11, 1) + struct.pack(">i", 7) + struct.pack(">i", 0)
        + struct.pack(">bhbi", 15, 3, 4, 1) + struct.pack(">d", 1.5),
    ),
    thrift_call("get_id", 9, thrift_string_field(1, b"1bad")),
    struct.pack(">I", 0x7FFFFFFF),
    b"GET / HTTP/1.1\r\n\r\n",
    thrift_call("get_id", 10) + thrift_call("get_timestamp", 11),
]
out = CORPUS / "thrift"
out.mkdir(parents=True, exist_ok=True)
for data in thrift:
    (out / hashlib.sha1(data).hexdigest()).write_bytes(data)
# The ID service. server_query: one byte choosing max_count (0: 1, 1: 7,
# 2: 10000, 3: 2^32-1), then a query string.
queries = [
    "count=3", "count=10000", "count=10001", "count=0", "count=-1", "count=abc", "count=",
    "count=18446744073709551616", "count=%31%30", "generator=orders&count=2", "generator=nope",
    "generator=users&id=1234567890123", "layout=leaf&snowflakeId=1577836800000",
    "layout=twitter&id=1541815603606036480", "snowflakeId=", "snowflakeId=-5",
    "layout=%7B%22epoch_ms%22%3A0%2C%22fields%22%3A%5B%5B%22timestamp%22%2C41%5D%2C%5B%22worker%22%2C10%5D%2C%5B%22sequence%22%2C12%5D%5D%7D&id=42",
    'layout={"epoch_ms":0,"fields":[["timestamp",37],["server",20],["sequence",16]]}',
    "layout=nope&generator=orders", "id=18446744073709551615&layout=tsid", "count=1&count=2",
]
write("server_query", [chr(i % 4) + q for i, q in enumerate(queries)], 40)

# server_config: the first line is the flags, the rest the TOML text;
# TOKENS stands for a token file the target writes.
configs = [
    "\n",
    "--preset leaf --lease file:/var/lib/snowmint?namespace=orders\n",
    "--preset twitter --node datacenter=1 --node worker=3 --max-count 5\n",
    "--listen 0.0.0.0:7610\n",
    "--listen 0.0.0.0:7610 TOKENS\n",
    "--listen [::]:80 --insecure --log-format json\n",
    '--layout {"epoch_ms":0,"fields":[["timestamp",41],["worker",10],["sequence",12]]}\n',
    "--node worker\n",
    "\nlisten = \"127.0.0.1:7610\"\nmax_count = 10000\ntoken_file = \"TOKENS\"\n\n"
    "[generators.orders]\nlayout = \"leaf\"\nlease = \"postgres://ids:s3cret-pw@db/ids?namespace=orders\"\n\n"
    "[generators.users]\nlayout = \"twitter\"\nnodes = { datacenter = 1, worker = 7 }\n",
    "\n[generators.a]\nlayout = '{\"epoch_ms\":1288834974657,\"fields\":[[\"timestamp\",41],[\"worker\",10],[\"sequence\",12]]}'\n",
    "\n[generators.\"bad name\"]\nlayout = \"leaf\"\n",
    "\n[generators.b]\nnodes = { worker = 1 }\n",
    "\nmax_count = 0\n",
    "\nmax_count = \"redis://:s3cret-pw@127.0.0.1/\"\n",
    "\n[generators.c]\nlayout = \"leaf\"\nlease = \"mysql://root:s3cret-pw@127.0.0.1/test\"\nlaeyout = 1\n",
    "--name default --preset leaf\n[generators.default]\nlayout = \"leaf\"\n",
    "\nlog_format = \"yaml\"\n",
    "\nlisten = \"localhost:80\"\n",
    "\n[generators.d]\nlayout = \"sonyflake\"\nnodes = { machine = 65536 }\n",
    "--max-count 4294967296\n",
]
write("server_config", configs, 40)
