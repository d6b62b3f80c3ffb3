"""40 processes, Python, Node and the CLI mixed, lease one 5-bit field of one store.

Run by cargo xtask test interop with the Python package and the Node package as
their parts installed them (the wheel in a venv, the npm tarball in a consumer
project) and the CLI binary, once per store (a directory, then PostgreSQL,
MariaDB, Redis and etcd):

    python tests/lease/mixed_processes.py --node-project DIR --cli PATH [--store URL]...

Each process builds `Generator('twitter', datacenter=3, lease=URL)` (the CLI:
`snowmint generate --lease URL --print-lease --on-demand`), reports its worker
value and 1,000 IDs (or its error code), and holds its lease until every
process has reported. Checks: exactly 32 hold distinct workers, the other 8
fail with `lease_unavailable`, every ID is distinct and carries its holder's
node values; then a second round (new processes in every language, one per
freed slot) issues IDs above every ID the earlier holders of its slot issued,
whatever language they were in. Each store URL gets a namespace of this run's
own.
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


class Process:
    """One holder: Python and Node print one JSON line; the CLI prints its
    lease (or its error) on stderr, then IDs on request."""

    def __init__(self, lang, url, n, node_project, cli):
        self.lang, self.n = lang, n
        if lang == "python":
            cmd, cwd = [sys.executable, "-c", PY, url, str(n)], None
        elif lang == "node":
            cmd, cwd = ["node", "-e", NODE, url, str(n)], node_project
        else:
            cmd = [cli, "generate", "--preset", "twitter", "--node", "datacenter=3",
                   "--lease", url, "--print-lease", "--on-demand"]
            cwd = None
        self.p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)

    def report(self):
        if self.lang != "cli":
            line = self.p.stdout.readline()
            if not line:
                self.p.wait(timeout=30)
                raise AssertionError(f"{self.lang} reported nothing (exit {self.p.returncode}): "
                                     f"{self.p.stderr.read()}")
            return json.loads(line)
        line = self.p.stderr.readline()
        if line.startswith("snowmint: error: "):
            code = line.rstrip().rsplit("[", 1)[1].rstrip("]")
            assert self.p.wait(timeout=30) == 1
            self.p.stdin.close()
            return {"lang": "cli", "ok": False, "code": code, "message": line}
        info = json.loads(line)
        self.p.stdin.write(f"{self.n}\n")
        self.p.stdin.flush()
        ids = [self.p.stdout.readline().strip() for _ in range(self.n)]
        return {"lang": "cli", "ok": True, "worker": info["nodes"]["worker"],
                "lease": info["lease"], "ids": ids}

    def finish(self, timeout):
        if not self.p.stdin.closed:
            self.p.stdin.close()
        rc = self.p.wait(timeout=timeout)
        err = self.p.stderr.read()
        # A CLI that could not lease exited 1 with its error line (already read).
        assert rc == 0 or (self.lang == "cli" and rc == 1), f"{self.lang}: exit {rc}: {err}"


def run_round(langs, url, n, node_project, cli, deadline_s=60):
    procs = [Process(lang, url, n, node_project, cli) for lang in langs]
    reports = []
    end = time.monotonic() + deadline_s
    for p in procs:
        reports.append(p.report())
        if time.monotonic() > end:
            raise AssertionError("the round took longer than its deadline")
    # Every process has reported while the winners still hold their leases.
    for p in procs:
        if not p.p.stdin.closed:
            p.p.stdin.close()
    for p in procs:
        p.finish(max(1, end - time.monotonic()))
    return reports


LANGS = ("python", "node", "cli")


def check_store(url, node_project, cli):
    t = time.monotonic()
    langs = [LANGS[i % 3] for i in range(40)]
    reports = run_round(langs, url, 1000, node_project, cli)
    winners = [r for r in reports if r["ok"]]
    losers = [r for r in reports if not r["ok"]]
    workers = sorted(r["worker"] for r in winners)
    assert workers == list(range(32)), (
        f"32 distinct workers, got {workers}; the others: "
        f"{sorted(set((r['code'], r['message'].strip()) for r in losers))}")
    assert len(losers) == 8, losers
    for r in losers:
        assert r["code"] == "lease_unavailable", r
        assert "slots are held" in r["message"], r
    by_lang = {lang: sum(1 for r in winners if r["lang"] == lang) for lang in LANGS}
    seen = set()
    last_of_slot = {}
    for r in winners:
        assert r["lease"]["field"] == "worker" and r["lease"]["slot"] == r["worker"], r["lease"]
        ids = [int(i) for i in r["ids"]]
        assert len(ids) == 1000 and ids == sorted(ids) and len(set(ids)) == len(ids)
        for i in ids:
            assert decode(i)[1:] == (3, r["worker"]), (i, r["worker"])
        seen.update(ids)
        last_of_slot[r["worker"]] = max(ids)
    assert len(seen) == 32 * 1000, "an ID was issued twice"
    print(f"  round 1: 40 processes ({by_lang} winners by language), 32 workers, "
          f"8 lease_unavailable, {len(seen)} distinct IDs in {time.monotonic() - t:.1f} s")

    # Round 2: the slots are free again; new holders in any language issue
    # above every ID of their slot's earlier holders.
    reports = run_round([LANGS[i % 3] for i in range(1, 33)], url, 100, node_project, cli)
    assert all(r["ok"] for r in reports), [r for r in reports if not r["ok"]]
    assert sorted(r["worker"] for r in reports) == list(range(32))
    for r in reports:
        ids = [int(i) for i in r["ids"]]
        assert min(ids) > last_of_slot[r["worker"]], (r["lang"], r["worker"])
        assert not seen.intersection(ids)
    print("  round 2: 32 new holders (Python, Node, CLI) each issued above their slot's earlier IDs")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--node-project", required=True, help="a directory whose node_modules has snowmint")
    ap.add_argument("--cli", required=True, help="the snowmint CLI binary")
    ap.add_argument("--store", action="append", default=[],
                    help="a store URL without a query (repeat); a temporary directory always")
    args = ap.parse_args()
    namespace = f"mixed-{os.getpid()}-{int(time.time())}"
    with tempfile.TemporaryDirectory(prefix="snowmint-mixed-") as d:
        for store in [f"file:{d}"] + args.store:
            assert "?" not in store, store
            print(f"store {store.split('@')[-1]}")
            check_store(f"{store}?namespace={namespace}", args.node_project, args.cli)


if __name__ == "__main__":
    main()
