"""The no-vacuous-pass check (docs/HARNESS.md, "The checker"): a run passes
only if it exercised what it claims to, every holder and server issuing in
every quiet phase, and IDs issued during the faults that leave service up.

Phases: the stretches between one fault's end and the next fault's start,
before the first and after the last (run.py's timeline.json: the loop's and
each fault's start and end, this machine's clock). A holder's IDs are placed
in time by when the harness saw them written (holders/progress.tsv: each
output file's size, sampled every loop turn, so a stepped clock does not
move them); a server's by when the load client received its answer.

The minimum: MIN_RATE bursts (a CLI burst or a server call: `burst` IDs) per
second of the phase, at least one burst. A healthy CLI holder issues about
100 bursts a second, a server more: the minimum is a fraction of a percent
of it, and only a participant that issued (almost) nothing falls short.

Exceptions, each needing evidence from the run:
  * Fenced. A store's fence lets a new claim issue no ID before a time T:
    Redis after a start or a failover, the SQL identity fence after a
    promotion (about 11 s here), a successor's floor (the slot's previous
    holder's reservation). A holder says so (`no ID before T ms (now N ms`,
    in its incarnation's part of its log, in its own clock: a clock step's
    offset is added back), a server's lease shows an hwm_ms above its
    reservation and its clock. Until T + FENCE_SLACK_MS it owes nothing:
    its minimum is for the rest of the phase (none under MIN_PHASE_S).
    A server refusing connections (down, or starting: it listens once its
    lease is claimed) counts as fenced from the first refusal to the last
    of a run of them at most REFUSED_GAP_MS apart.
  * No slot. Six participants share four slots (run.py), so two at a time
    have none: in a phase, two participants may fall short if they show they had
    no slot there: a holder restarted in the phase or not running for part
    of it (one without a slot exits, `all 4 slots are held`), a server
    restarted in it or whose /readyz said 503 in it. Only two per phase.
  * After a store fault (STORE_OUTAGE: the store, or its leader, unreachable
    or gone for every client), every lease may have lapsed and its old
    claims must expire (ttl 3 s) before anyone claims again; ZooKeeper's
    election can take seconds more. After a holder-clock-step (UNSETTLED):
    the step kills the holders without a slot (down 6 s), pauses the
    servers without one, and may SIGKILL its holder. In the phase after one, any number of
    participants may fall short with that same evidence (restarted, not
    running, or 503), but not all of them, unless within FENCING_S of a
    failover's, promotion's, restore's or store clock step's end: their fence (the
    step's refusals) holds every claim off, and a
    fault right after one can hide it from the clients.
  * The store serving nobody: ZooKeeper without a leader and a majority
    (timeline.json's store_unserving, run.py's probe of `srvr` about every
    second): every participant counts as fenced then; and for RECOVERY_MS
    after a store fault ends (a renewal that failed in it is retried, a
    reservation that ran out waits for it).
  * Phases shorter than MIN_PHASE_S (a run's end right after a heal) are
    not required; they are still counted.
Fault windows: the participants the fault did not target must together
issue the minimum during every fault that leaves the store serving
(SERVING: a holder's or server's kill or stop, a member's
partition, loss or kill, delays), for the longest stretch one of them not
fenced or shown without a slot could issue in; the others are counted
only."""

import glob
import json
import os
import re
from bisect import bisect_left, bisect_right

SLOTS = 4  # the layout's worker field: 2 bits
MIN_RATE = 1.0  # bursts per second of a phase
MIN_PHASE_S = 1.0
# After a fence's "no ID before" time: a holder's restart and claim.
FENCE_SLACK_MS = 1000
# After a store fault, every participant's lease may be recovering (a
# renewal retried, a claim again): not counted for this long.
RECOVERY_MS = 3000
# Refused connections (a server not listening) this close together are one
# stretch of it down or starting.
REFUSED_GAP_MS = 1000
# A fenced holder's error (CLI and binding alike), its times in ms.
FENCED = re.compile(rb"no ID before (\d+) ms \(now (\d+) ms")
# Faults after which the store may have been out for every client.
STORE_OUTAGE = ("partition-leader", "partition-primary", "drop-replies-primary",
                "kill-leader", "kill-primary", "restart-primary", "crash-primary", "failover",
                "promotion", "restore", "store-clock-step", "store-delay", "partition-member",
                "drop-replies-member", "kill-member")
# Faults after which any number may be without a slot (with evidence): the
# store faults, and a holder clock step, which kills the holders without a
# slot and keeps them down 6 s, pauses the servers without one, and may
# SIGKILL its holder (its slot held until the claim expires).
UNSETTLED = STORE_OUTAGE + ("holder-clock-step",)
# Faults after which the store fences every new claim (Redis's failover
# fence, the SQL identity fence, etcd's fence of a restored cluster): no ID
# before a time 10-12 s on here. A fault right after one can keep clients
# from even hearing of it.
# A store clock step of +-30 s (beyond max_skew_ms) refuses every renewal
# and claim while it lasts, so every reservation runs out and everyone
# claims again after it.
FENCING = ("failover", "promotion", "restore", "store-clock-step")
FENCING_S = 15.0
# After a store fault (UNSETTLED), for this long: the leases it lapsed are
# claimed again (an expired lease waited out for its TTL, 3 s, a restart, a
# claim: ZooKeeper's several quorum writes at up to timeout_ms each), so
# later phases in it get the same exception as the one right after it.
SETTLE_S = 10.0
# Faults during which the store serves the participants they did not target.
# Not a holder-clock-step: it kills the holders and pauses the servers
# without a slot, and lasts until its holder issues (ZooKeeper: the others
# may be between claims throughout).
SERVING = ("holder-kill", "holder-stop", "server-kill", "server-stop",
           "store-delay", "partition-member", "drop-replies-member", "kill-member")


def ended_within(faults, kinds, t, seconds):
    """Whether one of ``faults`` of ``kinds`` ended at or before ``t``, less
    than ``seconds`` before it."""
    return any(f["kind"] in kinds and "end" in f and 0 <= t - f["end"] < seconds * 1000
               for f in faults)


def minimum(burst, ms):
    return max(burst, int(burst * MIN_RATE * ms / 1000))


def phases(tl):
    """[(name, start ms, end ms, the fault before it or None)]."""
    out, a, before = [], tl["start"], None
    for i, f in enumerate(tl["faults"]):
        out.append((f"phase {i}", a, f["start"], before))
        a, before = f.get("end", f["start"]), f
    out.append((f"phase {len(tl['faults'])}", a, tl["end"], before))
    return out


class Tally:
    """IDs per participant, placed in time: ``add(who, ms, n)``; events
    (``restart``: an incarnation started, ``down``: [from, to) none ran,
    ``unready``: a /readyz 503) for the exceptions' evidence."""

    def __init__(self):
        self.ids = {}  # who -> ([ms], [n]) sorted at seal()
        self.restarts, self.down, self.unready = {}, {}, {}
        # who -> [(from, to)]: a holder incarnation that issued no ID in its
        # life (it never had a slot: a claim refused, or still claiming)
        self.idle = {}
        self.fenced = {}  # who -> [(from, to)]: the store let it issue no ID then

    def fence(self, who, start, until):
        self.fenced.setdefault(who, []).append((start, until + FENCE_SLACK_MS))

    def fenced_ms(self, who, a, b):
        """How much of (a, b] ``who`` was fenced."""
        total, end = 0, a
        for x, y in sorted(self.fenced.get(who, [])):
            x, y = max(x, end), min(y, b)
            if y > x:
                total += y - x
                end = y
        return total

    def add(self, who, ms, n):
        self.ids.setdefault(who, ([], []))
        self.ids[who][0].append(ms)
        self.ids[who][1].append(n)

    def seal(self):
        for who, (ts, ns) in list(self.ids.items()):
            pairs = sorted(zip(ts, ns))
            cum, total = [], 0
            for _, n in pairs:
                total += n
                cum.append(total)
            self.ids[who] = ([t for t, _ in pairs], cum)
        for d in (self.restarts, self.unready):
            for v in d.values():
                v.sort()

    def count(self, who, a, b):
        """IDs placed in (a, b]: the harness samples the holders' output
        just before it stamps a fault's start or end, so a sample at a
        boundary counts for the stretch it closes."""
        ts, cum = self.ids.get(who, ([], []))
        i, j = bisect_right(ts, a), bisect_right(ts, b)
        return (cum[j - 1] if j else 0) - (cum[i - 1] if i else 0)

    def no_slot(self, who, a, b):
        """The evidence that ``who`` had no slot for part of [a, b)."""
        for d in (self.restarts, self.unready):
            ts = d.get(who, [])
            i = bisect_left(ts, a)
            if i < len(ts) and ts[i] < b:
                return True
        return any(x < b and y > a for x, y in self.down.get(who, []) + self.idle.get(who, []))


def read_holders(run_dir, tally):
    """Each holder incarnation's IDs, placed at the first sample that saw
    them written; its starts and the stretches no incarnation ran."""
    seen = {}  # file -> ([size], [ms])
    spans = {}  # holder -> [(start, end)]
    logpos, behind = {}, {}  # holder -> [(log offset, incarnation)]; incarnation -> ms
    started, ended = {}, {}  # incarnation -> its start, its end
    with open(os.path.join(run_dir, "holders", "progress.tsv")) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3:
                continue  # a line cut by the end of the run
            name, ms, what = parts[0], int(parts[1]), parts[2]
            who = name.rsplit(".", 2)[0]
            if what == "start":
                started[name] = ms
                tally.restarts.setdefault(who, []).append(ms)
                spans.setdefault(who, []).append([ms, None])
            elif what == "end":
                ended[name] = ms
                if spans.get(who) and spans[who][-1][1] is None:
                    spans[who][-1][1] = ms
            elif what == "log":
                logpos.setdefault(who, []).append((ms, name))
            elif what == "behind":
                behind[name] = ms
            else:
                sizes, times = seen.setdefault(name, ([], []))
                sizes.append(int(what))
                times.append(ms)
    for who, parts in logpos.items():
        # Fenced: refused by the successor or a store's fence until a time,
        # each incarnation's messages (from its offset in the log on) in its
        # own clock, which a clock step put behind by a known amount.
        log = os.path.join(run_dir, f"{who}.log")
        if not os.path.exists(log):
            continue
        with open(log, "rb") as f:
            data = f.read()
        for (pos, name), (nxt, _) in zip(parts, parts[1:] + [(len(data), None)]):
            off = behind.get(name, 0)
            # A stepped incarnation's fence is its clock's: it ends for the
            # holder when an unstepped incarnation of it starts.
            until = min((t for n, t in started.items() if n.rsplit(".", 2)[0] == who
                         and t > started.get(name, t) and not behind.get(n)),
                        default=float("inf")) if off else float("inf")
            for m in FENCED.finditer(data, pos, nxt):
                start, end = int(m.group(2)) + off, int(m.group(1)) + off
                if start < until:
                    tally.fence(who, start, min(end, until - FENCE_SLACK_MS))
    for who, ss in spans.items():
        # A holder's first start is the run's; later ones are restarts.
        tally.restarts[who] = tally.restarts[who][1:]
        gaps = [(x[1], y[0]) for x, y in zip(ss, ss[1:]) if x[1] is not None]
        if ss[-1][1] is not None:
            gaps.append((ss[-1][1], float("inf")))  # ended, not started again
        tally.down[who] = gaps
    issued = set()  # the incarnations that wrote an ID
    for path in glob.glob(os.path.join(run_dir, "holders", "*.out")):
        name = os.path.basename(path)
        with open(path, "rb") as f:
            data = f.read()
        if b"\n" in data and not data.startswith(b"{"):  # its first line an ID
            issued.add(name)
        sizes, times = seen.get(name, ([], []))
        if not sizes:
            continue
        who = name.rsplit(".", 2)[0]
        pos, n_at = 0, {}
        for line in data.split(b"\n")[:-1]:
            pos += len(line) + 1
            if line and not line.startswith(b"{"):
                k = bisect_left(sizes, pos)
                if k < len(sizes):
                    n_at[times[k]] = n_at.get(times[k], 0) + 1
        for ms, n in n_at.items():
            tally.add(who, ms, n)
    for name, t in started.items():
        if name not in issued:
            tally.idle.setdefault(name.rsplit(".", 2)[0], []).append(
                (t, ended.get(name, float("inf"))))


def read_servers(run_dir, tally):
    refused = {}
    for path in glob.glob(os.path.join(run_dir, "load-*.jsonl")):
        with open(path) as f:
            for line in f:
                if not line.endswith("\n"):
                    break
                r = json.loads(line)
                who = f"server-{r['srv']}"
                if r["k"] == "ids":
                    tally.add(who, r["t1"], len(r["ids"]))
                elif r["k"] == "ready" and not r["ok"]:
                    tally.unready.setdefault(who, []).append(r["t0"])
                elif r["k"] == "err" and "Connection refused" in r.get("e", ""):
                    refused.setdefault(who, []).append(r["t0"])
                elif r["k"] == "lease":
                    # A claim's floor above its reservation and its clock:
                    # fenced until then (the lease's hwm_ms).
                    hwm, until = r["lease"].get("hwm_ms"), r["lease"].get("reserved_until_ms")
                    if hwm and until is not None and hwm > until and hwm > r["t1"]:
                        tally.fence(who, r["t1"], hwm)
    for who, ts in refused.items():
        ts.sort()
        first = ts[0]
        for prev, t in zip(ts, ts[1:] + [None]):
            if t is None or t - prev > REFUSED_GAP_MS:
                tally.fence(who, first, prev)
                first = t
    starts = os.path.join(run_dir, "servers.tsv")
    if os.path.exists(starts):
        with open(starts) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2:
                    tally.restarts.setdefault(parts[0], []).append(int(parts[1]))
        for who in tally.restarts:
            if who.startswith("server-"):
                tally.restarts[who] = sorted(tally.restarts[who])[1:]


def judge(tl, tally):
    """The check over a sealed tally; a dict for result.json: the minimum
    rule, per-phase and per-fault counts, and the shortfalls (each a line)."""
    who_all, burst = tl["participants"], tl["burst"]
    per_phase, per_fault, short = [], [], []
    faults = tl["faults"]
    for name, a, b, before in phases(tl):
        counts = {w: tally.count(w, a, b) for w in who_all}
        fenced = {w: tally.fenced_ms(w, a, b) for w in who_all}
        # A participant's minimum is for the part of the phase it was not fenced.
        need = {w: minimum(burst, b - a - fenced[w]) for w in who_all}
        required = (b - a) >= MIN_PHASE_S * 1000
        low = [w for w in who_all if counts[w] < need[w]
               and b - a - fenced[w] >= MIN_PHASE_S * 1000]
        excused = [w for w in low if tally.no_slot(w, a, b)]
        after_outage = ((before is not None and before["kind"] in UNSETTLED)
                        or ended_within(faults, UNSETTLED, a, SETTLE_S))
        cap = (len(who_all) if ended_within(faults, FENCING, a, FENCING_S)
               else len(who_all) - 1 if after_outage
               else max(0, len(who_all) - SLOTS))
        # The excused beyond the cap (the first ones by name) fall short too.
        failing = [w for w in low if w not in excused] + excused[cap:]
        after = f" after {before['kind']}" if before else ""
        per_phase.append({"phase": name, "after": before["kind"] if before else None,
                          "seconds": round((b - a) / 1000, 1), "minimum": minimum(burst, b - a),
                          "required": required, "ids": counts, "excused": excused[:cap],
                          "fenced_s": {w: round(v / 1000, 1) for w, v in fenced.items() if v},
                          "short": failing if required else []})
        if required and failing:
            short.append(f"{name}{after} ({(b - a) / 1000:.1f} s): "
                         + ", ".join(f"{w} issued {counts[w]}, minimum {need[w]}"
                                     for w in failing))
    for i, f in enumerate(tl["faults"]):
        a, b = f["start"], f.get("end", tl["end"])
        # Within FENCING_S of a fencing fault's end, a fault window is
        # counted only, as the phases there may all fall short: the fence
        # holds every claim off, and the fault can keep clients from even
        # hearing of it (a store-delay, a stopped server's clients).
        # A store fault (a delay, a member's loss) right on another's heels
        # (within SETTLE_S): the leases the first lapsed are being claimed
        # again, each claim now slowed too; counted only.
        counted_only = (ended_within(faults[:i], FENCING, a, FENCING_S)
                        or f["kind"] in STORE_OUTAGE
                        and ended_within(faults[:i], STORE_OUTAGE, a, SETTLE_S))
        counts = {w: tally.count(w, a, b) for w in who_all}
        others = [w for w in who_all if w != f.get("target")]
        # Required of those not fenced throughout and not shown without a
        # slot (unless they issued some: they had one).
        free = max((b - a - tally.fenced_ms(w, a, b) for w in others
                    if counts[w] or not tally.no_slot(w, a, b)), default=0)
        need = minimum(burst, free)
        required = f["kind"] in SERVING and free >= MIN_PHASE_S * 1000 and not counted_only
        per_fault.append({"fault": i, "kind": f["kind"], "target": f.get("target"),
                          "seconds": round((b - a) / 1000, 1), "ids": counts,
                          "required": required, "minimum": need if required else None})
        total = sum(counts[w] for w in others)
        if required and total < need:
            short.append(f"fault {i} {f['kind']} ({(b - a) / 1000:.1f} s): the participants "
                         f"it left serving issued {total}, minimum {need}")
    return {"rule": f"{MIN_RATE:g} burst(s) of {burst} IDs per second of a phase, at least "
                    f"{burst}, per holder and server, for the part of it not fenced; one "
                    "without a slot excused per phase (any after a store fault or a holder clock "
                    f"step, not all but within {FENCING_S:g} s of a failover or promotion); "
                    "during a fault that leaves the store serving, from those it did not hit "
                    f"(not within {FENCING_S:g} s of a failover or promotion)",
            "per_phase": per_phase, "per_fault": per_fault, "short": short}


def check(run_dir):
    """The check of a run folder (None: a run from before timeline.json)."""
    path = os.path.join(run_dir, "timeline.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        tl = json.load(f)
    tally = Tally()
    read_holders(run_dir, tally)
    read_servers(run_dir, tally)
    store_down(tl, tally)
    tally.seal()
    return judge(tl, tally)


def store_down(tl, tally):
    """While the store served no client (ZooKeeper without a leader and a
    majority: an election, a lost quorum; run.py's probe), every participant
    counts as fenced; and for RECOVERY_MS after a store fault (STORE_OUTAGE)
    ends: a renewal that timed out in it is retried a quarter of renew_ms
    later and takes up to timeout_ms (ZooKeeper's 2 s: several quorum
    writes), a reservation that ran out waits for it."""
    for x, y in tl.get("store_unserving", []):
        for w in tl["participants"]:
            tally.fence(w, x, y if y is not None else tl["end"])
    for f in tl["faults"]:
        if f["kind"] in STORE_OUTAGE and "end" in f:
            for w in tl["participants"]:
                tally.fence(w, f["end"], f["end"] + RECOVERY_MS - FENCE_SLACK_MS)


def record_lines(result):
    """record.txt's lines: the minimum, each phase's and fault's IDs per
    participant, what fell short."""
    per_phase = result.get("ids_per_phase")
    if per_phase is None:
        return ["", "no vacuous pass: not checked (no timeline.json)"]
    lines = ["", f"no vacuous pass: minimum {result['ids_minimum']}",
             "IDs per phase (between faults) and per fault, by when they were issued:"]
    for p in per_phase:
        note = "" if p["required"] else ", not required"
        after = f" after {p['after']}" if p["after"] else ""
        lines.append(f"  {p['phase']:9}{after} ({p['seconds']} s, minimum {p['minimum']}{note}): "
                     + ", ".join(f"{w} {n}" for w, n in p["ids"].items())
                     + (f"; excused (no slot): {', '.join(p['excused'])}" if p["excused"] else "")
                     + ("; fenced: " + ", ".join(f"{w} {v} s" for w, v in p["fenced_s"].items())
                        if p.get("fenced_s") else ""))
    for f in result["ids_per_fault"]:
        need = f"minimum {f['minimum']} from the others" if f["required"] else "not required"
        lines.append(f"  fault {f['fault']:<3} {f['kind']} {f['target'] or ''} "
                     f"({f['seconds']} s, {need}): "
                     + ", ".join(f"{w} {n}" for w, n in f["ids"].items()))
    lines.append(f"too few IDs: {len(result['too_few_ids'])}")
    lines += [f"  {s}" for s in result["too_few_ids"]]
    return lines


def summary(result):
    """One line for the run's printed summary: the phases, the fewest IDs a
    participant issued in a required phase against its minimum, and what
    fell short."""
    per_phase = result.get("ids_per_phase")
    if per_phase is None:
        return "phases not checked"
    req = [p for p in per_phase if p["required"]]
    low = min(((n, w, p) for p in req for w, n in p["ids"].items() if w not in p["excused"]
               and p["seconds"] - p.get("fenced_s", {}).get(w, 0) >= MIN_PHASE_S),
              default=None, key=lambda x: x[0])
    text = (f"minimum {result['ids_minimum'].split(';')[0]}; "
            f"{len(req)} phases of {len(per_phase)} required")
    if low:
        n, w, p = low
        text += f", fewest {n} ({w}, {p['phase']}, minimum {p['minimum']})"
    faults = [f for f in result["ids_per_fault"] if f["required"]]
    text += f"; {len(faults)} fault windows required"
    short = result["too_few_ids"]
    return text + (f"; TOO FEW IDS: {'; '.join(short)}" if short else "; none short")


def starved_caught(vac, starved):
    """The starved control (main.py) is caught when the phase it starved fell
    short for every holder and server it stopped but the one excused without
    a slot (the fifth, which may have been down already), so at least SLOTS
    of them; run.run_one also requires that nothing else failed."""
    if not vac or not starved:
        return False
    ph = vac["per_phase"][starved["phase"]]
    return (ph["required"] and len(ph["short"]) >= SLOTS
            and set(starved["participants"]) <= set(ph["short"]) | set(ph["excused"]))


def self_test():
    """The rule's cases on a made-up timeline (ms): a healthy run passes, the
    slotless participant is excused once per phase (any number after a store
    fault, never all), a starved phase fails for everyone in it; and the
    placing of a holder's IDs by its output's growth."""
    import tempfile

    who = ["cli1", "cli2", "py1", "server-srv1", "server-srv2"]
    tl = {"start": 0, "end": 30000, "burst": 100, "participants": who, "faults": [
        {"kind": "holder-stop", "target": "cli1", "start": 6000, "end": 9000},
        {"kind": "kill-leader", "target": None, "start": 12000, "end": 15000},
        {"kind": "partition-primary", "target": None, "start": 20000, "end": 25000},
        {"kind": "server-kill", "target": "server-srv1", "start": 29500, "end": 29800}]}
    assert [p[1:3] for p in phases(tl)] == [(0, 6000), (9000, 12000), (15000, 20000),
                                            (25000, 29500), (29800, 30000)]
    assert minimum(100, 3000) == 300 and minimum(100, 200) == 100

    def run(silent=(), slotless=(), more=(), on=None):
        """Every participant issues a burst every 100 ms but ``silent`` ones
        in the given (who, from, to); ``slotless`` (who, at) restarts; judged
        on the timeline ``on`` (else ``tl``)."""
        t = Tally()
        for w in who:
            for ms in range(0, 30000, 100):
                if not any(w == s and a < ms <= b for s, a, b in silent):
                    t.add(w, ms, 100)
        for w, ms in slotless:
            t.restarts.setdefault(w, []).append(ms)
        for w, ms in more:
            t.unready.setdefault(w, []).append(ms)
        t.seal()
        return judge(on or tl, t)

    ok = run()
    assert ok["short"] == [], ok["short"]
    assert ok["per_phase"][1]["ids"]["cli1"] == 3000 and ok["per_phase"][1]["minimum"] == 300
    assert ok["per_fault"][0]["required"] and not ok["per_fault"][2]["required"]
    assert ok["per_fault"][0]["ids"]["cli2"] == 3000
    # One without a slot (restarted in the phase), after a client fault: excused.
    one = run(silent=[("py1", 9000, 12000)], slotless=[("py1", 10000)])
    assert one["short"] == [] and one["per_phase"][1]["excused"] == ["py1"], one
    # Without the evidence (no restart): short.
    r = run(silent=[("py1", 9000, 12000)])
    assert r["per_phase"][1]["short"] == ["py1"] and len(r["short"]) == 1, r["short"]
    # Two without a slot after a client fault: one too many.
    r = run(silent=[("py1", 9000, 12000), ("server-srv2", 9000, 12000)],
            slotless=[("py1", 10000)], more=[("server-srv2", 9500)])
    assert r["per_phase"][1]["short"] == ["server-srv2"], r["short"]
    # After a store fault any number may be churning, not all.
    four = [(w, 15000, 20000) for w in who[:4]]
    r = run(silent=four, slotless=[(w, 16000) for w in who[:3]], more=[("server-srv1", 15500)])
    assert r["short"] == [] and len(r["per_phase"][2]["excused"]) == 4, r
    r = run(silent=[(w, 15000, 20000) for w in who], slotless=[(w, 16000) for w in who[:3]],
            more=[(w, 15500) for w in who[3:]])
    assert len(r["per_phase"][2]["short"]) == 1, r["short"]
    # Starved: nothing issued in phase 1, no evidence: every participant short.
    starved = {"phase": 1, "participants": who}
    r = run(silent=[(w, 9000, 12000) for w in who])
    assert r["per_phase"][1]["short"] == who and len(r["short"]) == 1, r["short"]
    assert starved_caught(r, starved) and not starved_caught(ok, starved)
    # What the run prints and record.txt says.
    def result(v):
        return {"ids_minimum": v["rule"], "ids_per_phase": v["per_phase"],
                "ids_per_fault": v["per_fault"], "too_few_ids": v["short"]}
    assert summary(result(ok)).endswith("none short"), summary(result(ok))
    assert "TOO FEW IDS: phase 1 after holder-stop" in summary(result(r)), summary(result(r))
    assert record_lines(result(r))[-1].startswith("  phase 1 after holder-stop (3.0 s): cli1 "
                                                  "issued 0, minimum 300"), record_lines(result(r))
    # The fifth without a slot, excused, all the others short: caught.
    r = run(silent=[(w, 9000, 12000) for w in who], slotless=[("py1", 10000)])
    assert r["per_phase"][1]["excused"] == ["py1"] and starved_caught(r, starved), r
    # Two issuing in the starved phase: not.
    r = run(silent=[(w, 9000, 12000) for w in who[:3]], slotless=[("py1", 10000)])
    assert not starved_caught(r, starved), r
    assert not starved_caught(run(silent=[("py1", 9000, 12000)]), starved)
    # A fault that leaves others serving needs their IDs; an outage does not.
    r = run(silent=[(w, 6000, 9000) for w in who[1:]] + [(w, 20000, 25000) for w in who])
    assert len(r["short"]) == 1 and r["short"][0].startswith("fault 0 holder-stop"), r["short"]
    # Fenced (the store refused IDs until a time): required only for the rest.
    def fenced(silent, fences):
        t = Tally()
        for w in who:
            for ms in range(0, 30000, 100):
                if not any(w == s and a < ms <= b for s, a, b in silent):
                    t.add(w, ms, 100)
        for w, a, b in fences:
            t.fence(w, a, b)
        t.seal()
        return judge(tl, t)
    # Everyone fenced through phase 2 (until 19000, +1 s to claim): not short.
    r = fenced([(w, 15000, 20000) for w in who], [(w, 14000, 19000) for w in who])
    assert r["short"] == [] and r["per_phase"][2]["fenced_s"]["cli1"] == 5.0, r
    # Fenced until 17000 (+1 s): 2 s left, nothing issued in them: short.
    r = fenced([(w, 15000, 20000) for w in who], [(w, 14000, 17000) for w in who])
    assert r["short"] == ["phase 2 after kill-leader (5.0 s): " + ", ".join(
        f"{w} issued 0, minimum 200" for w in who)], r["short"]
    # Within FENCING_S of a failover's end all may be out (with evidence).
    tl["faults"][1]["kind"] = "failover"
    r = run(silent=[(w, 15000, 20000) for w in who], slotless=[(w, 16000) for w in who[:3]],
            more=[(w, 15500) for w in who[3:]])
    assert r["short"] == [] and len(r["per_phase"][2]["excused"]) == 5, r["short"]
    r = run(silent=[(w, 15000, 20000) for w in who])  # but not without evidence
    assert len(r["per_phase"][2]["short"]) == 5, r["short"]
    tl["faults"][1]["kind"] = "kill-leader"
    # The store serving nobody (ZooKeeper's election) from 14000 on: all fenced.
    t = Tally()
    store_down(dict(tl, store_unserving=[[14000, None]]), t)
    assert t.fenced_ms("py1", 15000, 20000) == 5000 and t.fenced_ms("cli1", 0, 14000) == 0
    # A fault whose others were all fenced throughout: not required.
    r = fenced([(w, 6000, 9000) for w in who[1:]], [(w, 5000, 9000) for w in who[1:]])
    assert r["short"] == [] and not r["per_fault"][0]["required"], r
    # A fault window within FENCING_S of a failover's end: counted only.
    tl2 = {"start": 0, "end": 20000, "burst": 100, "participants": who, "faults": [
        {"kind": "failover", "target": None, "start": 2000, "end": 5000},
        {"kind": "holder-stop", "target": "cli1", "start": 12000, "end": 16000}]}
    quiet = [(w, 12000, 16000) for w in who]
    r = run(silent=quiet, on=tl2)
    assert r["short"] == [] and not r["per_fault"][1]["required"], r["short"]
    tl2["faults"][0]["kind"] = "kill-leader"  # not a fence: the window is required
    r = run(silent=quiet, on=tl2)
    assert r["short"] == ["fault 1 holder-stop (4.0 s): the participants it left serving "
                          "issued 0, minimum 400"], r["short"]
    tl2["faults"][0]["kind"] = "failover"
    tl2["faults"][1].update(start=21000, end=25000)  # 16 s after it: required
    tl2["end"] = 30000
    assert run(on=tl2)["per_fault"][1]["required"]
    # Within SETTLE_S of a store fault, a later phase too may have any number
    # short with evidence (never all); a store fault's window then is counted
    # only, a client fault's is not.
    tl3 = {"start": 0, "end": 30000, "burst": 100, "participants": who, "faults": [
        {"kind": "kill-leader", "target": None, "start": 2000, "end": 4000},
        {"kind": "holder-kill", "target": "cli1", "start": 5000, "end": 6000},
        {"kind": "store-delay", "target": None, "start": 9000, "end": 11000},
        {"kind": "holder-stop", "target": "cli2", "start": 20000, "end": 22000}]}

    def settle_run(silent, slotless):
        return run(silent=silent, slotless=slotless, on=tl3)
    four = who[:4]
    r = settle_run([(w, 6000, 9000) for w in four], [(w, 7000) for w in four])
    assert r["short"] == [] and len(r["per_phase"][2]["excused"]) == 4, r["short"]
    r = settle_run([(w, 6000, 9000) for w in who], [(w, 7000) for w in who])
    assert len(r["per_phase"][2]["short"]) == 1, r["short"]  # never all
    r = settle_run([(w, 9000, 11000) for w in who] + [(w, 5000, 6000) for w in who], [])
    assert not r["per_fault"][2]["required"] and r["per_fault"][1]["required"], r
    assert r["short"] == ["fault 1 holder-kill (1.0 s): the participants it left serving "
                          "issued 0, minimum 100"], r["short"]
    r = settle_run([(w, 22000, 30000) for w in four], [(w, 23000) for w in four])
    assert len(r["per_phase"][4]["short"]) == 3, r["short"]  # 18 s after it: one excused
    # The last phase (0.2 s) is not required.
    r = run(silent=[(w, 29800, 30000) for w in who])
    assert r["short"] == [] and not r["per_phase"][4]["required"]
    # Placing: each ID at the first sample that saw its line written.
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "holders"))
        with open(os.path.join(d, "holders", "cli1.1.out"), "w") as f:
            f.write("11\n12\n{\"lease\":{}}\n13\n14\n15\n{\"lease\":{}}\n16\n")
        with open(os.path.join(d, "holders", "progress.tsv"), "w") as f:
            f.write("cli1.1.out\t100\tstart\ncli1.1.out\t200\t6\ncli1.1.out\t400\t28\n"
                    "cli1.1.out\t600\tend\ncli1.2.out\t900\tstart\ncli1.1.out\t1000\t44\n"
                    "cli1.2.out\t1200\tend\ncli1.2.out\t11")
        fence = ("snowmint: error: lease fenced: ...; no ID before 5000 ms (now 3000 ms, "
                 "2000 ms to go) [lease_fenced]\n")
        with open(os.path.join(d, "cli1.log"), "w") as f:
            f.write(fence + fence)  # incarnation 1's, then 2's (its clock 20 s behind)
        with open(os.path.join(d, "holders", "progress.tsv"), "a") as f:
            f.write(f"\ncli1.1.out\t0\tlog\ncli1.2.out\t{len(fence)}\tlog\n"
                    "cli1.2.out\t20000\tbehind\n")
        t = Tally()
        read_holders(d, t)
        assert t.fenced["cli1"] == [(3000, 6000), (23000, 26000)], t.fenced
        assert t.fenced_ms("cli1", 2000, 4000) == 1000
        t.seal()
        assert t.ids["cli1"] == ([200, 400, 1000], [2, 5, 6]), t.ids
        assert t.restarts["cli1"] == [900], t.restarts
        assert t.down["cli1"] == [(600, 900), (1200, float("inf"))], t.down
        assert t.no_slot("cli1", 700, 800) and not t.no_slot("cli1", 0, 500)
        assert t.no_slot("cli1", 5000, 6000)  # ended, never started again
        # A stepped incarnation's fence ends when an unstepped one starts.
        with open(os.path.join(d, "holders", "progress.tsv"), "a") as f:
            f.write("cli1.3.out\t24000\tstart\n")
        t = Tally()
        read_holders(d, t)
        assert t.fenced["cli1"] == [(3000, 6000), (23000, 24000)], t.fenced
        # An incarnation that issued nothing in its life (claiming, or its
        # claim refused) is evidence of no slot while it ran; one that did is not.
        assert t.idle["cli1"] == [(900, 1200), (24000, float("inf"))], t.idle
        assert t.no_slot("cli1", 25000, 26000) and not t.no_slot("cli1", 300, 500)
        # A server refusing connections (starting after a kill): fenced while
        # it does; two runs of refusals 2 s apart are two stretches.
        with open(os.path.join(d, "load-c4.jsonl"), "w") as f:
            for ms in list(range(10000, 12001, 100)) + [14000, 14100]:
                f.write(json.dumps({"k": "err", "srv": "srv1", "t0": ms, "t1": ms + 1,
                                    "e": "<urlopen error [Errno 111] Connection refused>"}) + "\n")
            f.write(json.dumps({"k": "err", "srv": "srv2", "t0": 10000, "t1": 11000,
                                "e": "timed out"}) + "\n")
        t = Tally()
        read_servers(d, t)
        assert t.fenced == {"server-srv1": [(10000, 13000), (14000, 15100)]}, t.fenced
    print("phases: self-test passed")
