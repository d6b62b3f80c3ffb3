"""The fault harness (docs/HARNESS.md): ./scripts/harness [--short | --minutes N]
[--store NAME ...] [--seed S] [--replay schedule.json] [--cleanup]
[--table RUN_DIR ...].

For each store: the real configuration, then its control runs (which must
be caught: duplicates, for the reservation control IDs past a confirmed
reservation, for the starved control too few IDs and nothing else) on the
same schedule. Exits 0 only if every real run passed and every control run
failed."""

import argparse
import glob
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))

import hosts  # noqa: E402
import phases  # noqa: E402
import run  # noqa: E402
import stores  # noqa: E402
import table  # noqa: E402

CLIENT_FAULTS = {
    "file": ("holder-kill", "holder-stop", "holder-clock-step", "server-kill", "server-stop"),
    "etcd": ("holder-kill", "holder-stop", "server-kill", "server-stop"),
    "redis": ("holder-kill", "holder-stop", "server-kill", "server-stop"),
    # holder-clock-step: a CLI holder restarted 8 s back (within its max_skew_ms, 10 s),
    # the fault the successor-fence control needs.
    "zookeeper": ("holder-kill", "holder-stop", "holder-clock-step", "server-kill",
                  "server-stop"),
}
CLIENT_FAULTS["postgres"] = CLIENT_FAULTS["redis"]
CLIENT_FAULTS["mysql"] = CLIENT_FAULTS["redis"]

# The faults each store's control runs need to be caught.
REQUIRED = {"file": ("holder-clock-step",), "redis": ("failover",)}
# ZooKeeper: the control's clock step as the first fault (while every
# member and holder is up: after two leader kills on a loaded machine the
# ensemble may not serve for half a minute, 20261129-005502-zookeeper-control-2),
# and a leader fault in every schedule.
REQUIRED["zookeeper"] = ("holder-clock-step", "kill-leader")
# The stores whose required faults start at the schedule's first event (the
# others' at its second).
REQUIRED_FIRST = ("zookeeper",)
REQUIRED["postgres"] = ("promotion",)
# MariaDB: an outage longer than the window, so that holders run to the edge
# of their reservation (where the reservation control issues past it).
# And crash-primary (a holder's claim, then a SIGKILL and a restart at once),
# which the non-durable control loses.
REQUIRED["mysql"] = ("kill-primary", "crash-primary")
# etcd: the cluster replaced by one restored from a snapshot of a few seconds
# before (etcd_restore.py).
REQUIRED["etcd"] = ("restore",)

# store -> [(configuration, control?, which build: the normal one, or the
# control the control build runs with)]
CONFIGS = {
    "file": [("file store, one host", False, "release"),
             ("file store, successor fence removed", True, "no-successor-fence"),
             ("file store, holders starved", True, "starved")],
    "etcd": [("etcd, 3 members", False, "release"),
             ("etcd restored from an older snapshot, fence removed", True, "no-etcd-fence")],
    "redis": [("redis primary/replica, failover", False, "release"),
              ("redis failover, fence removed", True, "no-redis-fence")],
    "zookeeper": [("zookeeper, 3 members", False, "release"),
                  ("zookeeper, successor fence removed", True, "no-successor-fence")],
}
# The asynchronous pair is a configuration of its own (stores.VARIANTS).
CONFIGS["postgres"] = [
    ("postgres primary/replica, synchronous replication", False, "release"),
    ("postgres primary/replica, asynchronous replication", True, "no-sql-fence")]
# The reservation control: its holders issue one millisecond past their
# confirmed reservation, which shows when renewals fail for longer than the
# window (every MariaDB fault but the clients' does that).
CONFIGS["mysql"] = [("mariadb, one server", False, "release"),
                    ("mariadb, issuing past the confirmed reservation", True,
                     "past-reservation"),
                    # The normal build on a server whose commits are not
                    # durable (stores.VARIANTS): crash-primary loses claims.
                    ("mariadb, non-durable commits", True, "non-durable")]
# The no-vacuous-pass control (phases.py): the normal build, every holder
# and the load client stopped for the phase after the first fault (run.py,
# Run.starve); it must fail by that rule alone, in that phase, for all of them.
NORMAL = ("release", "starved", "non-durable")
# What a control run must show (the others: duplicates).
EXPECT = {"past-reservation": "reservation_violations", "starved": "vacuous"}
# Runs of a build shorter than the run length (its schedule is a prefix of
# the real run's, its required kinds placed anew): the reservation control
# needs one outage, which its two kill-primary faults bring within 30 s.
LENGTH = {"past-reservation": 0.5, "starved": 0.5}


def main():
    ap = argparse.ArgumentParser(prog="scripts/harness")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--short", action="store_true", help="about 1 minute per run")
    g.add_argument("--minutes", type=float, help="minutes per run")
    ap.add_argument("--store", action="append", choices=sorted(CONFIGS))
    ap.add_argument("--seed", type=int)
    ap.add_argument("--kind", choices=("real", "control"),
                    help="only the real runs, or only the controls")
    ap.add_argument("--controls", type=int, metavar="N",
                    help="run N of the stores' controls (all by default), taking turns by the "
                         "seed: N consecutive ones of CONFIGS' order from seed %% their number")
    ap.add_argument("--builds", action="store_true",
                    help="print the controls these arguments need the control build for, one per "
                         "line, and run nothing (no root; scripts/harness builds it when any)")
    ap.add_argument("--replay", metavar="SCHEDULE_JSON")
    ap.add_argument("--cleanup", action="store_true",
                    help="remove namespaces, bridges and veths left by earlier runs")
    ap.add_argument("--out", default="target/harness")
    ap.add_argument("--bin", default="target/ci")
    ap.add_argument("--control-bin", default="target/harness/bin",
                    help="where the control build is (snowmint-lease's harness-controls: "
                         "SNOWMINT_HARNESS_CONTROL names the protection removed)")
    ap.add_argument("--python", default="target/harness/venv/bin/python",
                    help="the interpreter of the Python holder, with the binding installed "
                         "(scripts/harness builds and installs it)")
    ap.add_argument("--node", default="target/harness/node",
                    help="the Node holder's project, with the packed npm package installed "
                         "(scripts/harness packs and installs it)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="stores run side by side, each group in a harness process of "
                         "its own (own bridge, namespaces and store clusters)")
    ap.add_argument("--stamp", help=argparse.SUPPRESS)  # a --jobs child's: its parent's
    ap.add_argument("--first-run", type=int, default=0, help=argparse.SUPPRESS)
    # A --jobs child's: the controls its parent chose (STORE:BUILD,...).
    ap.add_argument("--control-set", help=argparse.SUPPRESS)
    ap.add_argument("--redis-control", action="store_true",
                    help="(no effect: the Redis control now runs by default)")
    ap.add_argument("--table", nargs="+", metavar="RUN_DIR",
                    help="print the results table (docs/HARNESS.md) of these run folders, "
                         "or of every run in a folder of them, and run nothing (no root)")
    ap.add_argument("--recheck", nargs="+", metavar="RUN_DIR",
                    help="judge real runs again by the current no-vacuous-pass rule "
                         "(phases.py), rewriting their result.json (the verdict at the run "
                         "kept as verdict_at_run), and run nothing (no root)")
    a = ap.parse_args()
    if a.table:
        print(table.table(a.table))
        return 0
    if a.recheck:
        return recheck(a.recheck)
    replay = None
    if a.replay:
        with open(a.replay) as f:
            replay = json.load(f)
    store_list = [replay["store"]] if replay else (
        a.store or ["file", "etcd", "redis", "postgres", "mysql", "zookeeper"])
    seed = replay["seed"] if replay else (a.seed if a.seed is not None else int(time.time()))
    wanted = chosen(a, store_list, seed, replay)
    if a.builds:
        for build in sorted({b for _, _, _, b in wanted if b not in NORMAL}):
            print(build)
        return 0
    if os.geteuid() != 0:
        sys.exit("harness: needs root (network namespaces, nftables)")
    if a.cleanup:
        hosts.cleanup("smh")
        return 0

    if replay:
        seconds = replay["seconds"]
    else:
        seconds = 60 * (a.minutes if a.minutes else 1.0 if a.short else 5.0)
    python = os.path.abspath(a.python)
    if not os.path.exists(python) or subprocess.run(
            [python, "-c", "import snowmint"], capture_output=True, timeout=60).returncode:
        sys.exit(f"harness: {python} cannot import snowmint (the Python holder's binding): "
                 "./scripts/harness builds and installs it")
    node = os.path.abspath(a.node)
    if subprocess.run(["node", "-e", "require(process.argv[1])", os.path.join(
            node, "node_modules", "snowmint")], capture_output=True, timeout=60).returncode:
        sys.exit(f"harness: node cannot require snowmint from {node} (the Node holder's "
                 "package): ./scripts/harness packs and installs it")
    clients = {"python": python, "node": node}  # the Python and Node holders'
    stamp = a.stamp or time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    if a.jobs > 1 and not replay and len(store_list) > 1:
        return side_by_side(a, store_list, seed, stamp)
    if a.controls is not None and a.control_set is None:
        print("harness: controls this run: " + (", ".join(
            f"{st} {b}" for st, _, c, b in wanted if c) or "none"), flush=True)
    results = []
    n = a.first_run
    for store in store_list:
        for configuration, control, build in CONFIGS[store]:
            if (store, configuration, control, build) not in wanted:
                continue
            tries = []
            # A control not caught runs again on the same schedule (the real
            # run's), repeated: try k runs it k + 1 times back to back, at
            # most CONTROL_TRIES tries, each recorded. Whether a missing
            # protection shows within a minute depends on
            # timing (on a loaded machine, ZooKeeper answering late, the
            # slot a stepped holder takes may be another than its
            # predecessor's); another seed would be another schedule.
            # A real run that failed only the no-vacuous-pass check (a
            # participant starved on a loaded machine: nothing wrong was
            # issued) runs once more on the same schedule, also recorded;
            # a duplicate or a violation is never tried again. Not a long run
            # (over RETRY_MAX_S): its retry would double it.
            tries_max = (1 if replay else CONTROL_TRIES if control
                         else REAL_TRIES if seconds <= RETRY_MAX_S else 1)
            for k in range(tries_max):
                n += 1
                length = seconds if replay else seconds * LENGTH.get(build, 1.0)
                r = one(a, store, configuration, control, build, seed, length, replay,
                        stamp, clients, n, repeat=k + 1 if control else 1)
                if r is None:
                    return 130
                tries.append(r)
                if r["ok"] or (not control and r.get("fail_reasons") != ["vacuous"]):
                    break
            settle(tries)
            results += tries
    bad = [r for r in results if not r["ok"]]
    print(f"harness: {configs_ok(results)} of {len(configurations(results))} "
          "configurations as required" + not_as_required(bad))
    return 1 if bad else 0


CONTROL_TRIES = 3
REAL_TRIES = 2
RETRY_MAX_S = 300  # the default schedule's length: longer real runs are not retried


def chosen(a, store_list, seed, replay):
    """The (store, configuration, control?, build) runs these arguments
    ask for: a replay's one configuration, else every configuration of the
    stores (of ``--kind``), with only ``--controls N`` of their controls,
    N consecutive ones in CONFIGS' order from seed % their number (so that
    successive seeds take turns: CI runs a few per run)."""
    runs = [(store, *c) for store in store_list for c in CONFIGS[store]
            if not replay or c[0] == replay["configuration"]]
    runs = [r for r in runs if not a.kind or a.kind == ("control" if r[2] else "real")]
    controls = [r for r in runs if r[2]]
    if a.control_set is not None:
        keep = set(a.control_set.split(",")) - {""}
        return [r for r in runs if not r[2] or f"{r[0]}:{r[3]}" in keep]
    if replay or a.controls is None or a.controls >= len(controls):
        return runs
    first = seed % len(controls)
    keep = {controls[(first + i) % len(controls)] for i in range(max(a.controls, 0))}
    return [r for r in runs if not r[2] or r in keep]


def settle(tries):
    """A control caught, or a real run passed, on a later try: the tries
    before it are marked as retried (``ok``, their verdict says so), in their
    result.json too."""
    if len(tries) < 2 or not tries[-1]["ok"]:
        return
    for r in tries[:-1]:
        r["verdict"] = (f"control-missed-caught-on-retry (the schedule {len(tries)} times, "
                        f"try {len(tries)})" if r["kind"] == "control" else
                        f"vacuous-passed-on-retry (the same schedule, try {len(tries)})")
        r["ok"] = True
        path = r.get("result_path")
        if path:
            with open(path, "w") as f:
                json.dump(r, f, indent=1)


def recheck(paths):
    """``--recheck``: each real run's no-vacuous-pass check again, from its
    folder (timeline.json, the holders' output and logs, the load record);
    the other checks' findings (duplicates, violations) stay as they were."""
    for d in table.run_dirs(paths):
        path = os.path.join(d, "result.json")
        with open(path) as f:
            r = json.load(f)
        vac = phases.check(d)
        if (r.get("kind") != "real" or vac is None or r.get("verdict") == "ERROR"
                or r.get("verdict", "").startswith("vacuous-passed-on-retry")):
            print(f"harness: {d}: not rechecked (a control, an error, a try its retry "
                  "settled, or no timeline.json)")
            continue
        reasons = [x for x in r.get("fail_reasons", []) if x != "vacuous"]
        reasons += ["vacuous"] if vac["short"] else []
        verdict = run.real_verdict(reasons)
        r.setdefault("verdict_at_run", r["verdict"])
        r.update(run.vacuous_fields(vac), fail_reasons=reasons, verdict=verdict, ok=not reasons)
        with open(path, "w") as f:
            json.dump(r, f, indent=1)
        print(f"harness: {d}: {verdict} (at the run: {r['verdict_at_run']}); "
              f"IDs per phase: {phases.summary(r)}")
    return 0


def not_as_required(bad):
    """The summary's tail: each run not as required, its verdict and what
    fell short (the last lines CI shows)."""
    if not bad:
        return ""
    lines = []
    for r in bad:
        why = r.get("error") or "; ".join((r.get("too_few_ids") or [])[:3])
        lines.append(f"\n  {r['configuration']} ({r['kind']}, seed {r['seed']}): {r['verdict']}"
                     + (f": {why}" if why else "") + f"; {r.get('result_path', '')}")
    return "; not:" + "".join(lines)


def configurations(results):
    return {(r["store"], r["configuration"]) for r in results}


def configs_ok(results):
    """How many configurations had every run as required."""
    bad = {(r["store"], r["configuration"]) for r in results if not r["ok"]}
    return len(configurations(results) - bad)


def one(a, store, configuration, control, build, seed, seconds, replay, stamp, clients, n,
        repeat=1):
    """One run of a configuration, its schedule ``repeat`` times back to
    back; its result dict (None: interrupted)."""
    sk = stores.STORES[store].fault_kinds
    schedule = replay["schedule"] if replay else run.make_schedule(
        seed, seconds, sk, CLIENT_FAULTS[store], REQUIRED.get(store, ()),
        first=0 if store in REQUIRED_FIRST else 1)
    schedule = [dict(e, at=round(e["at"] + k * seconds, 1))
                for k in range(repeat) for e in schedule]
    seconds *= repeat
    name = f"{stamp}-{store}-{'control' if control else 'real'}-{n}"
    bindir = a.bin if build in NORMAL else a.control_bin
    cfg = {
        "name": name, "dir": os.path.abspath(os.path.join(a.out, name)),
        "store": store, "configuration": configuration, "control": control,
        "seed": seed, "seconds": seconds, "schedule": schedule,
        "cli": os.path.abspath(os.path.join(bindir, "snowmint")),
        "server": os.path.abspath(os.path.join(bindir, "snowmint-server")),
        # The control build removes the protection this names, and starts
        # only when it names one (snowmint_lease::control_build_refusal).
        "control_build": "" if build in NORMAL else build,
        # The Python and Node holders: the normal packages in every run,
        # controls too, but for the SQL control: a holder of the normal build
        # reads the server's real identity where the control's build reads a
        # constant one, and each would fence the other (two more CLI holders
        # instead).
        **clients,
        "python_holder": build != "no-sql-fence",
        "expect": EXPECT.get(build, "duplicates"),
        "starve": build == "starved",
        "prefix": f"smh{os.getpid() % 100000}",
        "subnet": f"10.77.{(os.getpid() + n) % 200 + 20}",
        "namespace": f"smh-{os.getpid()}-{n}",
        # IDs per CLI burst and per server call: fewer on long runs,
        # whose IDs the checker keeps and sorts.
        "burst": 100 if seconds <= 600 else 10,
    }
    os.makedirs(cfg["dir"])
    print(f"harness: {name}: {configuration} ({'control' if control else 'real'}), "
          f"seed {seed}, {seconds:.0f} s", flush=True)
    try:
        r = run.run_one(cfg)
    except (run.Interrupted, KeyboardInterrupt):
        print("harness: interrupted; everything it started is stopped", flush=True)
        return None
    except Exception as e:  # noqa: BLE001 - the run failed to run: say so, go on
        r = {"store": store, "configuration": configuration,
             "kind": "control" if control else "real", "seed": seed,
             "verdict": "ERROR", "error": f"{type(e).__name__}: {e}", "ok": False,
             "ids_checked": 0, "duplicates": 0, "reservation_violations": 0,
             "duplicates_found": 0, "faults_injected": 0}
        with open(os.path.join(cfg["dir"], "result.json"), "w") as f:
            json.dump(r, f, indent=1)
    r["result_path"] = os.path.join(cfg["dir"], "result.json")
    print(f"harness: {name}: {r['verdict']}: {r['ids_checked']} IDs, "
          f"{r['duplicates_found']} duplicates, "
          f"{r.get('reservation_violations', 0)} reservation violations, "
          f"{r['faults_injected']} faults; "
          f"record: {cfg['dir']}/record.txt", flush=True)
    if "ids_per_phase" in r:
        print(f"harness: {name}: IDs per phase: {phases.summary(r)}", flush=True)
    return r


def side_by_side(a, store_list, seed, stamp):
    """Runs the stores in ``a.jobs`` groups at once, each group a harness
    process of its own with the same seed (so the same schedule per store) and
    the same arguments; the verdict is every run's, read back from the
    result.json files the groups wrote."""
    groups = [store_list[i::a.jobs] for i in range(a.jobs)]
    groups = [g for g in groups if g]
    base = [sys.executable, os.path.abspath(__file__), "--seed", str(seed), "--stamp", stamp,
            "--out", a.out, "--bin", a.bin, "--control-bin", a.control_bin,
            "--python", a.python, "--node", a.node]
    if a.short:
        base.append("--short")
    elif a.minutes:
        base += ["--minutes", str(a.minutes)]
    if a.kind:
        base += ["--kind", a.kind]
    wanted = chosen(a, store_list, seed, None)
    base += ["--control-set", ",".join(f"{st}:{b}" for st, _, c, b in wanted if c)]
    print("harness: controls this run: " + (", ".join(
        f"{st} {b}" for st, _, c, b in wanted if c) or "none"), flush=True)
    children = []
    for i, g in enumerate(groups):
        argv = base + ["--first-run", str(100 * i)]
        for store in g:
            argv += ["--store", store]
        children.append(subprocess.Popen(argv))
    print(f"harness: {len(groups)} groups side by side: "
          + "; ".join(", ".join(g) for g in groups), flush=True)

    def forward(signum, frame):
        for c in children:
            if c.poll() is None:
                c.send_signal(signum)
    old = signal.signal(signal.SIGTERM, forward)
    old_int = signal.signal(signal.SIGINT, forward)
    try:
        codes = [c.wait() for c in children]
    finally:
        signal.signal(signal.SIGTERM, old)
        signal.signal(signal.SIGINT, old_int)
    if any(c in (130, -signal.SIGTERM, -signal.SIGINT) for c in codes):
        print("harness: interrupted; everything it started is stopped", flush=True)
        return 130
    results = []
    for path in sorted(glob.glob(os.path.join(a.out, f"{stamp}-*", "result.json"))):
        with open(path) as f:
            results.append(dict(json.load(f), result_path=path))
    bad = [r for r in results if not r["ok"]]
    expected = len(wanted)
    print(f"harness: all groups: {configs_ok(results)} of {expected} configurations as required"
          + not_as_required(bad))
    return 1 if bad or len(configurations(results)) != expected or any(codes) else 0


if __name__ == "__main__":
    sys.exit(main())
