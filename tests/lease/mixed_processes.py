"""40 processes, Python and Node mixed, lease one 5-bit field from one directory.

Run by scripts/test-interop with the Python package and the Node package as
their parts installed them (the wheel in a venv, the npm tarball in a consumer
project):

    python tests/lease/mixed_processes.py --node-project DIR

Each process builds `Generator('twitter', datacenter=3, lease='file:DIR')`,
reports its worker value and 1,000 IDs (or its error code) as one JSON line,
and holds its lease until every process has reported. Checks: exactly 32 hold
distinct workers, the other 8 fail with `lease_unavailable`, every ID is
distinct and carries its holder's node values; then a second round (one Python
and one Node process per freed slot's successor) issues IDs above every ID the
earlier holders of its slot issued, whatever language they were in.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

PY = r"""
import json, sys, snowmint
url, n = sys.argv[1], int(sys.argv[2])
try:
    g = snowmint.Generator("twitter", datacenter=3, lease=url)
except snowmint.SnowmintError as e:
    print(json.dumps({"lang": "python", "ok": False, "code": e.code, "message": str(e)}), flush=True)
    sys.exit(0)
ids = g.next_ids(n)
print(json.dumps({"lang": "python", "ok": True, "worker": g.nodes["worker"],
                  "lease": g.lease, "ids": [str(i) for i in ids]}), flush=True)
sys.stdin.read()  # hold the lease until the driver closes stdin
g.close()
"""

NODE = r"""
const { Generator } = require('snowmint')
const [url, n] = process.argv.slice(1)
let g
try {
  g = new Generator('twitter', { datacenter: 3 }, { lease: url })
} catch (e) {
  console.log(JSON.stringify({ lang: 'node', ok: false, code: e.code, message: e.message }))
  process.exit(0)
}
const ids = Array.from(g.nextIds(Number(n)), String)
console.log(JSON.stringify({ lang: 'node', ok: true, worker: g.nodes.worker, lease: g.lease, ids }))
process.stdin.resume()
process.stdin.on('end', () => { g.close(); process.exit(0) })
"""

TWITTER_EPOCH_BITS = (22, 17, 12)  # shifts of timestamp, datacenter, worker


def decode(i):
    return (i >> 22, (i >> 17) & 31, (i >> 12) & 31)


def spawn(lang, url, n, node_project):
    if lang == "python":
        cmd = [sys.executable, "-c", PY, url, str(n)]
        cwd = None
    else:
        cmd = ["node", "-e", NODE, url, str(n)]
        cwd = node_project
    return subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def run_round(langs, url, n, node_project, deadline_s=60):
    procs = [spawn(lang, url, n, node_project) for lang in langs]
    reports = []
    end = time.monotonic() + deadline_s
    for p in procs:
        line = p.stdout.readline()
        if not line:
            p.wait(timeout=max(1, end - time.monotonic()))
            raise AssertionError(f"a process reported nothing (exit {p.returncode}): {p.stderr.read()}")
        reports.append(json.loads(line))
        if time.monotonic() > end:
            raise AssertionError("the round took longer than its deadline")
    # Every process has reported while the winners still hold their leases.
    for p in procs:
        p.stdin.close()
    for p in procs:
        rc = p.wait(timeout=max(1, end - time.monotonic()))
        err = p.stderr.read()
        assert rc == 0, f"exit {rc}: {err}"
    return reports


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--node-project", required=True, help="a directory whose node_modules has snowmint")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="snowmint-mixed-") as d:
        url = f"file:{d}?namespace=mixed"
        langs = ["python", "node"] * 20
        t = time.monotonic()
        reports = run_round(langs, url, 1000, args.node_project)
        winners = [r for r in reports if r["ok"]]
        losers = [r for r in reports if not r["ok"]]
        workers = sorted(r["worker"] for r in winners)
        assert workers == list(range(32)), f"32 distinct workers, got {workers}"
        assert len(losers) == 8, losers
        for r in losers:
            assert r["code"] == "lease_unavailable", r
            assert "slots are held" in r["message"], r
        by_lang = {lang: sum(1 for r in winners if r["lang"] == lang) for lang in ("python", "node")}
        seen = set()
        last_of_slot = {}
        for r in winners:
            assert r["lease"]["field"] == "worker" and r["lease"]["slot"] == r["worker"], r["lease"]
            ids = [int(i) for i in r["ids"]]
            assert ids == sorted(ids) and len(set(ids)) == len(ids)
            for i in ids:
                assert decode(i)[1:] == (3, r["worker"]), (i, r["worker"])
            seen.update(ids)
            last_of_slot[r["worker"]] = max(ids)
        assert len(seen) == 32 * 1000, "an ID was issued twice"
        print(f"round 1: 40 processes ({by_lang} winners by language), 32 workers, "
              f"8 lease_unavailable, {len(seen)} distinct IDs in {time.monotonic() - t:.1f} s")

        # Round 2: the slots are free again; new holders in either language
        # issue above every ID of their slot's earlier holders.
        reports = run_round(["node", "python"] * 16, url, 100, args.node_project)
        assert all(r["ok"] for r in reports), [r for r in reports if not r["ok"]]
        assert sorted(r["worker"] for r in reports) == list(range(32))
        for r in reports:
            ids = [int(i) for i in r["ids"]]
            assert min(ids) > last_of_slot[r["worker"]], (r["lang"], r["worker"])
            assert not seen.intersection(ids)
        print("round 2: 32 new holders (Node and Python) each issued above their slot's earlier IDs")


if __name__ == "__main__":
    main()
