"""The results table of docs/HARNESS.md ("Results"): one markdown row per run,
read from the result.json each run writes (run.run_one, main.one). Needs no
root and starts nothing.

    python3 tools/harness/table.py target/harness/RUN ...  # these run folders
    python3 tools/harness/table.py target/harness          # every run folder in it
    ./scripts/harness --table target/harness/RUN ...       # the same, through main.py
    python3 tools/harness/table.py --self-test

Columns: the run (its folder's name), the store (the run's configuration,
which begins with the store's name), the schedule (seed and length), the
faults (how many, and of which kinds), the IDs checked (all; the CLI and
Python holders' / the servers'), the duplicates found and the verdict. A
field its result.json lacks (an ERROR run's has no faults or length) is
"-"."""

import argparse
import collections
import glob
import json
import os
import sys
import tempfile

HEADER = ("| Run | Store | Schedule | Faults | IDs checked (holders / servers) | Duplicates "
          "| Verdict |\n|-----|-------|----------|--------|---------------------------------|"
          "------------|---------|")


def run_dirs(paths):
    """The run folders ``paths`` name: each one holding a result.json, or
    each folder of runs (target/harness) for the runs in it, by name."""
    dirs = []
    for p in paths:
        if os.path.isfile(os.path.join(p, "result.json")):
            dirs.append(p)
        else:
            found = sorted(glob.glob(os.path.join(p, "*", "result.json")))
            if not found:
                raise SystemExit(f"table: no result.json in {p} or in its folders")
            dirs += [os.path.dirname(f) for f in found]
    return dirs


def number(v):
    return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else "-"


def schedule(r):
    parts = []
    if r.get("seed") is not None:
        parts.append(f"seed {r['seed']}")
    s = r.get("seconds")
    if isinstance(s, (int, float)):
        parts.append(f"{s / 60:g} min" if s % 60 == 0 else f"{s:g} s")
    return ", ".join(parts) or "-"


def faults(r):
    """"7 (2 failover, partition-primary, ...)": each record line is
    "fault: KIND ..." (or "fault: failover: ..."); a kind once has no count."""
    n = r.get("faults_injected")
    if not isinstance(n, int):
        return "-"
    kinds = collections.Counter(
        t.split(" ", 2)[1].rstrip(":") for t in r.get("faults") or []
        if t.startswith("fault: ") and len(t.split(" ")) > 1)
    if not kinds:
        return str(n)
    each = sorted(kinds.items(), key=lambda kc: (-kc[1], kc[0]))
    return f"{n} ({', '.join(k if c == 1 else f'{c} {k}' for k, c in each)})"


def ids(r):
    total = number(r.get("ids_checked"))
    per = r.get("ids_per_holder")
    if total == "-" or not isinstance(per, dict) or not per:
        return total
    servers = sum(v for h, v in per.items() if h.startswith("server-"))
    holders = sum(v for h, v in per.items() if not h.startswith("server-"))
    return f"{total} ({holders:,} / {servers:,})"


def duplicates(r):
    """The duplicates, and IDs past a confirmed reservation when there were
    any (the reservation control's finding), and the phases or faults with
    too few IDs (the no-vacuous-pass check's, the starved control's)."""
    past = r.get("reservation_violations")
    more = f" ({past:,} past a reservation)" if isinstance(past, int) and past else ""
    short = r.get("too_few_ids")
    if isinstance(short, list) and short:
        n, s = len(short), "s" if len(short) > 1 else ""
        more += f" (too few IDs in {n} phase{s} or fault{s})"
    return f"{number(r.get('duplicates_found'))}{more}"


def verdict(r):
    """The verdict, and the one at the run when ``--recheck`` changed it."""
    v, then = r.get("verdict") or "-", r.get("verdict_at_run")
    return f"{v} (rechecked; at the run: {then})" if then and then != v else v


def row(name, r):
    cells = [f"`{name}`", r.get("configuration") or r.get("store") or "-", schedule(r),
             faults(r), ids(r), duplicates(r), verdict(r)]
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def table(paths):
    lines = [HEADER]
    for d in run_dirs(paths):
        with open(os.path.join(d, "result.json")) as f:
            r = json.load(f)
        lines.append(row(os.path.basename(os.path.normpath(d)), r))
    return "\n".join(lines)


def self_test():
    """Two fake runs in a temporary folder: a real run's result.json as
    run.run_one writes it, and an ERROR run's as main.one writes it."""
    real = {
        "store": "redis", "configuration": "redis primary/replica, failover", "kind": "real",
        "seed": 4, "seconds": 60.0, "faults_injected": 3,
        "faults": ["fault: failover: replication s2<-s1 cut for 3 s, cli1 restarted",
                   "fault: failover: replication s1<-s2 cut for 3 s, cli2 restarted",
                   "fault: holder-stop py1 (SIGSTOP)"],
        "ids_checked": 1234567, "ids_per_holder": {"cli1": 1000, "cli2": 2000, "py1": 567,
                                                   "server-srv1": 1231000},
        "unconfirmed_per_holder": {}, "duplicates_found": 0,
        "reservation_or_node_violations": 0, "answers_while_unready": 0,
        "verdict": "pass", "ok": True}
    starved = dict(real, configuration="file store, holders starved", kind="control",
                   seconds=30.0, faults_injected=1, faults=["fault: holder-kill cli1 (SIGKILL)"],
                   too_few_ids=["phase 1 after holder-kill (3.0 s, minimum 300 each): ..."],
                   verdict="control-failed-as-expected")
    error = {"store": "etcd", "configuration": "etcd, 3 members", "kind": "real", "seed": 5,
             "verdict": "ERROR", "error": "RuntimeError: timed out", "ok": False,
             "ids_checked": 0, "duplicates_found": 0, "faults_injected": 0}
    with tempfile.TemporaryDirectory() as tmp:
        for name, r in (("20260101-000000-redis-real-1", real),
                        ("20260101-000000-etcd-real-2", error),
                        ("20260101-000000-file-control-3", starved)):
            os.makedirs(os.path.join(tmp, name))
            with open(os.path.join(tmp, name, "result.json"), "w") as f:
                json.dump(r, f)
        os.makedirs(os.path.join(tmp, "not-a-run"))
        out = table([tmp])
        one = table([os.path.join(tmp, "20260101-000000-redis-real-1")])
    print(out)
    want = [
        HEADER,
        "| `20260101-000000-etcd-real-2` | etcd, 3 members | seed 5 | 0 | 0 | 0 | ERROR |",
        "| `20260101-000000-file-control-3` | file store, holders starved | seed 4, 30 s "
        "| 1 (holder-kill) | 1,234,567 (3,567 / 1,231,000) | 0 (too few IDs in 1 phase or fault) "
        "| control-failed-as-expected |",
        "| `20260101-000000-redis-real-1` | redis primary/replica, failover | seed 4, 1 min "
        "| 3 (2 failover, holder-stop) | 1,234,567 (3,567 / 1,231,000) | 0 | pass |",
    ]
    assert out == "\n".join(want), out
    assert one == "\n".join([HEADER, want[3]]), one
    assert verdict({"verdict": "pass", "verdict_at_run": "FAIL (vacuous)"}) == \
        "pass (rechecked; at the run: FAIL (vacuous))"
    assert verdict({"verdict": "pass", "verdict_at_run": "pass"}) == "pass"
    print("table: self-test passed")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="tools/harness/table.py", description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="*", metavar="RUN_DIR",
                    help="a run folder (with result.json), or a folder of them")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args(argv)
    if a.self_test:
        return self_test()
    if not a.runs:
        ap.error("name run folders (or target/harness)")
    print(table(a.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
