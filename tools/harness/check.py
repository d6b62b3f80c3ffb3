"""The checker over every ID a run issued.

- Uniqueness: every ID from every holder (CLI holders, the Python holder and
  the IDs each server answered) goes to one file, sorted by GNU sort (bounded
  memory); equal neighbours are duplicates, reported with their holders.
- Node values: every ID carries the fixed datacenter, and a holder's IDs the
  slot its lease lines name.
- Reservations, strict: an ID issued at time t (its timestamp) must be
  covered by a reservation its holder had confirmed before issuing it:
  t <= the largest reserved_until_ms among the holder's confirmations made
  at or before t. A lease reports each confirmation (the claim is number 0,
  then `renewals` counts them) with `confirmed_at_ms`, the holder's clock read
  after the store's answer arrived and before the generator's limit was
  raised to it. A holder writes its lease after every burst (the CLI's
  --lease-lines, pyholder.py); the load client samples each server's
  /v1/generators every 100 ms.
- Readiness: no server answer both sent after a /readyz sample said 503 and
  returned before the next sample, which also said 503, the two samples at
  most READY_GAP_MS apart (they are 100 ms apart, but for a server paused or
  unreachable: across a longer gap it may have become ready, answered and
  lost its reservation again, which a renewal confirmed in it would cover
  for a second at least).

Why the reservation check cannot fail a healthy holder:
  * One clock. An ID's time and `confirmed_at_ms` are both read from the
    holder process's own clock (the generator's, which the lease driver
    reads too), and each holder incarnation is a file of its own (a server's
    a (server, slot, claim) of its own), so a holder-clock-step fault, which
    restarts a holder with its clock offset, never mixes two clocks. The
    harness steps a holder's clock only at a restart; within a process it
    is monotonic (libfaketime keeps a fixed offset).
  * Causality. The generator issues an ID only after its limit was raised,
    and at a time unit no earlier than its clock then reads (`wait:5` waits
    for a clock behind its last ID, it never issues behind the clock), so
    an ID issued under confirmation k has t >= confirmed_at_ms of k: k is
    among those "at or before t". A later confirmation counted too (an ID
    ahead of its clock, a successor fence) only loosens the bound.
  * Order. A holder's lease line follows its burst, so the confirmation in
    force at each ID of it is one the line reports or an earlier one; a
    server sample sent after the answer came back bounds it the same way.
    Confirmations nobody reported (two between two lines, a renewal a
    sample missed) are allowed for: one that may lie between two reported
    ones covers t up to the later one's reservation (the driver's limit,
    min(hwm, sent + window + max_skew), never shrinks: `hwm` only grows and
    sends are in order), and these IDs count as checked. One that may lie
    after the last report (a holder killed before its next line, a lease
    line saying lost or closed, which shows no reservation) has no known
    bound: those IDs count as unconfirmed, not as violations.
  * A server's ID is checked only when a sample of the same (slot, claim,
    renewals never going down) was answered before the call was sent and
    another sent after it returned (within the next four samples): the same
    process, holding that claim, issued it. Otherwise it is unconfirmed.
  What is left is an ID past every reservation that may have been in force
  when it was issued, or issued before its lease's first confirmation: the
  generator cannot issue either (a reservation violation).
"""

import glob
import json
import os
import subprocess
from bisect import bisect_left, bisect_right


class Layout:
    """The harness's layout: timestamp 41, datacenter 8 (fixed), worker 2 (leased), sequence 12."""

    EPOCH = 1288834974657
    DESCRIPTOR = json.dumps({
        "epoch_ms": EPOCH, "time_unit_ms": 1,
        "fields": [["timestamp", 41], ["datacenter", 8], ["worker", 2], ["sequence", 12]]})
    DATACENTER = 1

    @classmethod
    def parts(cls, i):
        return ((i >> 22) + cls.EPOCH, (i >> 14) & 0xFF, (i >> 12) & 0x3)


class Result:
    def __init__(self):
        self.counts = {}  # holder -> IDs checked
        self.unconfirmed = {}  # holder -> IDs no reported reservation bounds
        self.loose = {}  # holder -> IDs checked against a reservation reported after theirs
        self.violations = []  # (holder, text), first 20 kept
        self.n_violations = 0
        self.reservation_violations = 0
        self.node_violations = 0
        self.unready_answers = 0
        self.duplicates = 0
        self.dup_examples = []

    def bad(self, holder, text):
        self.n_violations += 1
        if len(self.violations) < 20:
            self.violations.append(f"{holder}: {text}")

    def add(self, table, holder, n=1):
        table[holder] = table.get(holder, 0) + n


def _until(lease):
    """The confirmed reservation, or None once the lease was lost or closed
    (it then reads before the epoch: the bound in force at issue is unknown)."""
    until = lease.get("reserved_until_ms")
    if until is None or until < Layout.EPOCH or lease.get("lost"):
        return None
    return until


OK, LOOSE, UNCONFIRMED, VIOLATION = range(4)


class Confirmations:
    """One lease's confirmations as its reports showed them: the n-th
    (`renewals`; 0 the claim), confirmed at local time c
    (`confirmed_at_ms`), reserving up to r (`reserved_until_ms`)."""

    def __init__(self):
        self.n, self.c, self.r, self.maxr = [], [], [], []
        self.ordered = True  # c never went down (a monotonic clock)

    def report(self, lease):
        """Takes one report; returns its confirmation number (None: a report
        without one)."""
        n, c, r = lease.get("renewals"), lease.get("confirmed_at_ms"), _until(lease)
        if n is None or c is None:
            return None
        if r is not None and (not self.n or n > self.n[-1]):
            if self.c and c < self.c[-1]:
                self.ordered = False
            self.n.append(n)
            self.c.append(c)
            self.r.append(r)
            self.maxr.append(max(r, self.maxr[-1]) if self.maxr else r)
        return n

    def verdict(self, t, k, n_max):
        """ID time t, issued before the report that showed the first k
        confirmations and confirmation number n_max (None: no report after
        it)."""
        if self.ordered:
            j = bisect_right(self.c, t, 0, k)
            if j and t <= self.maxr[j - 1]:
                return OK
        elif any(self.c[i] <= t <= self.r[i] for i in range(k)):
            return OK
        if k == 0:
            return UNCONFIRMED  # no reservation reported before the lease ended
        n, c, r = self.n, self.c, self.r
        # Confirmations no report showed: before the first reported one, or
        # between two reported ones (reservations never shrink).
        if n[0] > 0 and t <= r[0]:
            return LOOSE
        for i in range(k - 1):
            if n[i + 1] - n[i] > 1 and c[i] <= t <= r[i + 1]:
                return LOOSE
        # After the last one reported: a reservation not known.
        if (n_max is None or n_max > n[k - 1]) and c[k - 1] <= t:
            return UNCONFIRMED
        return VIOLATION


def _check_id(res, holder, i, slot, log, k, n_max):
    t, dc, worker = Layout.parts(i)
    if dc != Layout.DATACENTER or (slot is not None and worker != slot):
        res.node_violations += 1
        res.bad(holder, f"ID {i} has datacenter {dc} worker {worker}, lease slot {slot}")
        return
    v = UNCONFIRMED if log is None else log.verdict(t, k, n_max)
    if v == LOOSE:
        res.add(res.loose, holder)
    elif v == UNCONFIRMED:
        res.add(res.unconfirmed, holder)
    elif v == VIOLATION:
        res.reservation_violations += 1
        j = bisect_right(log.c, t, 0, k) if log.ordered else k
        bound = (f"the largest reservation confirmed by then, {log.maxr[j - 1]}"
                 if j else f"no confirmation at or before it (first at {log.c[0]})")
        res.bad(holder, f"ID {i} at {t} ms is past {bound}")


def check_holder_file(res, path, holder, out):
    """A holder's stdout (one incarnation): ID lines, and a {"lease":..}
    line after each burst."""
    pending, n = [], 0
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] != b"":
        lines = lines[:-1]  # a line cut by SIGKILL
    log, slot = Confirmations(), None
    for line in lines:
        if not line:
            continue
        if line.startswith(b"{"):
            lease = json.loads(line)["lease"]
            slot = lease["slot"]
            n_max = log.report(lease)
            for i in pending:
                _check_id(res, holder, i, slot, log if n_max is not None else None,
                          len(log.n), n_max)
            n += len(pending)
            pending = []
        else:
            i = int(line)
            pending.append(i)
            out.write(f"{i}\t{holder}\n")
    # Written, but the process ended before it wrote the lease line.
    for i in pending:
        if slot is None:
            res.add(res.unconfirmed, holder)
        else:
            _check_id(res, holder, i, slot, log, len(log.n), None)
    n += len(pending)
    res.add(res.counts, holder, n)


def check_load_file(res, path, out):
    answers, samples, ready = {}, {}, {}
    with open(path) as f:
        for line in f:
            if not line.endswith("\n"):
                break
            r = json.loads(line)
            s = r["srv"]
            if r["k"] == "ids":
                answers.setdefault(s, []).append(r)
            elif r["k"] == "lease":
                samples.setdefault(s, []).append(r)
            elif r["k"] == "ready":
                ready.setdefault(s, []).append(r)
    for s, ans in answers.items():
        holder = f"server-{s}"
        # One prober thread per server: samples in order, t0 and t1 both.
        ls = sorted(samples.get(s, []), key=lambda r: r["t0"])
        lt0 = [r["t0"] for r in ls]
        lt1 = [r["t1"] for r in ls]
        # Each sample's lease log, and how many confirmations it had shown.
        logs, seg, shown, nmax = {}, [], [], []
        for r in ls:
            lease = r["lease"]
            key = (lease["slot"], lease["claim"])
            log = logs.get(key)
            if log is not None and lease.get("renewals", 0) < log[1]:
                log = None  # renewals went down: another process, same claim
            if log is None:
                log = [Confirmations(), 0]
                logs[key] = log
            log[1] = lease.get("renewals", 0)
            nmax.append(log[0].report(lease))
            seg.append(log)
            shown.append(len(log[0].n))
        rs = sorted(ready.get(s, []), key=lambda r: r["t0"])
        rt = [r["t0"] for r in rs]
        n = 0
        for a in ans:
            # Readiness: the samples just before and just after the call.
            k = bisect_left(rt, a["t0"])
            if 0 < k < len(rs):
                before, after = rs[k - 1], rs[k]
                if unready_answer(before, after, a):
                    res.unready_answers += 1
                    res.bad(holder, f"answered {len(a['ids'])} IDs at {a['t0']}-{a['t1']} "
                                    "between two 503s of /readyz")
            j = bisect_left(lt0, a["t1"])  # the first sample sent after the answer
            p = bisect_right(lt1, a["t0"]) - 1  # the last one answered before the call
            for i in a["ids"]:
                out.write(f"{i}\t{holder}\n")
                slot = Layout.parts(i)[2]
                m = j
                while m < len(ls) and ls[m]["lease"]["slot"] != slot and m < j + 3:
                    m += 1
                q = p
                while q >= 0 and ls[q]["lease"]["slot"] != slot and q > p - 3:
                    q -= 1
                if m < len(ls) and q >= 0 and seg[m] is seg[q] and nmax[m] is not None:
                    _check_id(res, holder, i, slot, seg[m][0], shown[m], nmax[m])
                else:
                    _check_id(res, holder, i, slot, None, 0, None)
                n += 1
        res.add(res.counts, holder, n)


# Two /readyz samples further apart than this may have a ready spell between
# them: a confirmed renewal reserves window_ms (2000) ahead of the store's
# clock, a call takes timeout_ms (1000) at most, so a server made ready by one
# stays so for a second at least.
READY_GAP_MS = 1000


def unready_answer(before, after, a):
    """Whether answer ``a`` came while the server said 503 throughout: sent
    after sample ``before`` (503) returned, returned before ``after`` (503)
    was sent, the samples at most READY_GAP_MS apart."""
    return (not before["ok"] and not after["ok"] and before["t1"] <= a["t0"]
            and a["t1"] <= after["t0"] and after["t0"] - before["t1"] <= READY_GAP_MS)


def check_run(run_dir):
    res = Result()
    ids_path = os.path.join(run_dir, "ids.tsv")
    with open(ids_path, "w") as out:
        for path in sorted(glob.glob(os.path.join(run_dir, "holders", "*.out"))):
            holder = os.path.basename(path).rsplit(".", 2)[0]
            check_holder_file(res, path, holder, out)
        for path in sorted(glob.glob(os.path.join(run_dir, "load-*.jsonl"))):
            check_load_file(res, path, out)
    sorted_path = ids_path + ".sorted"
    subprocess.run(["sort", "-n", "-k1,1", "-S", "200M", "-T", run_dir, "-o", sorted_path,
                    ids_path], check=True, timeout=600, env={**os.environ, "LC_ALL": "C"})
    prev_id, prev_holders = None, []
    with open(sorted_path) as f:
        for line in f:
            i, h = line.rstrip("\n").split("\t")
            if i == prev_id:
                res.duplicates += 1
                prev_holders.append(h)
                if len(res.dup_examples) < 10:
                    t, _, w = Layout.parts(int(i))
                    res.dup_examples.append(
                        f"ID {i} (time {t}, worker {w}) issued by {', '.join(prev_holders)}")
            else:
                prev_id, prev_holders = i, [h]
    os.remove(ids_path)
    os.remove(sorted_path)
    return res


def self_test():
    # Readiness: an answer between two 503 samples 100 ms apart is one; across
    # a 4 s pause (the server stopped: it may have been ready between) not.
    no = {"ok": False}
    a = {"t0": 1050, "t1": 1060}
    assert unready_answer(dict(no, t0=1000, t1=1001), dict(no, t0=1100, t1=1101), a)
    assert not unready_answer(dict(no, t0=1000, t1=1001), dict(no, t0=5100, t1=5101), a)
    assert not unready_answer(dict(no, t0=1000, t1=1001, ok=True), dict(no, t0=1100), a)
    """The reservation check's cases, on made-up lease reports (EPOCH-relative
    times): what a healthy holder can show passes, what the generator cannot
    issue is a violation."""
    e = Layout.EPOCH

    def lease(n, c, r, lost=None):
        return {"slot": 1, "renewals": n, "confirmed_at_ms": e + c,
                "reserved_until_ms": e + r if r is not None else 0, "lost": lost}

    log = Confirmations()
    for rep in (lease(0, 100, 2100), lease(0, 100, 2100), lease(1, 1100, 3100),
                lease(3, 3500, 5500)):
        log.report(rep)
    k, n = len(log.n), 3
    cases = [
        (100, OK), (2100, OK), (1100, OK), (3100, OK), (5500, OK),
        (99, VIOLATION),  # before the claim was confirmed
        (1099, OK),  # under the claim's reservation
        (5501, VIOLATION),  # past the last reservation, confirmations all shown
        # 2 was never shown: confirmed after 1 (1100), covering at most 3's 5500.
        (3200, LOOSE), (3100, OK),
    ]
    for t, want in cases:
        got = log.verdict(e + t, k, n)
        assert got == want, (t, got, want)
    # After the last report (a killed holder), or before a report of loss:
    assert log.verdict(e + 5501, k, None) == UNCONFIRMED
    assert log.verdict(e + 5501, k, 4) == UNCONFIRMED
    assert log.verdict(e + 99, k, None) == VIOLATION
    # A report of loss shows no reservation; the confirmations before it stand.
    assert log.report(lease(3, 3500, None, lost="taken")) == 3
    assert len(log.n) == k and log.verdict(e + 5501, k, 3) == VIOLATION
    # The first report after a missed claim (and renewal 1).
    log2 = Confirmations()
    log2.report(lease(2, 2100, 4100))
    assert log2.verdict(e + 2000, 1, 2) == LOOSE  # before it: the claim or renewal 1
    assert log2.verdict(e + 4101, 1, 2) == VIOLATION
    assert Confirmations().verdict(e + 1, 0, None) == UNCONFIRMED
    print("check: self-test passed")
    import phases  # the no-vacuous-pass check's cases
    phases.self_test()


if __name__ == "__main__":
    import sys
    if sys.argv[1:] == ["--self-test"]:
        self_test()
    else:
        sys.exit("usage: python3 tools/harness/check.py --self-test")
