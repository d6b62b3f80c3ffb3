"""The checker over every ID a run issued.

- What is checked: every ID a holder or server issued, delivered or not.
  Each CLI holder, Python and Node holder and server appends each batch to
  its record of issued IDs (issued/NAME.K, one per incarnation: the CLI's
  and the server's --issued-log) with one write(2) before it hands the
  batch out, so an ID written by a holder killed before its output was
  flushed, or in an answer that reached the load client after its timeout
  (a SIGSTOP, a kill), is still in a record. The delivered IDs (a holder's
  output, the servers' answers in the load client's file) are checked too:
  each must be in its issuer's record (else a failure), and a holder's
  output lists its record's IDs in the record's order.
- Uniqueness: every issued ID, and every delivered ID missing from its
  record, goes to a file of its range of IDs (65.5 s of ID time), each
  sorted by GNU sort in turn (bounded memory and disk: no sorted copy of a
  30-minute run's IDs); two copies of an ID are a duplicate, reported with
  their holders.
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
- IDs issued, never delivered: a holder's follow everything it wrote, so
  they are checked as IDs written after its last lease line; a server's are
  checked for their datacenter, and are unconfirmed (no answer brackets
  them with lease samples).

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
        # The issuing side's records (docs/HARNESS.md, "The checker").
        self.issued = {}  # holder -> IDs in its records
        self.delivered = {}  # holder -> IDs its output or its answers carried
        self.undelivered = {}  # holder -> issued, never delivered
        self.unrecorded = {}  # holder -> delivered, missing from its record

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


def _check_ids(res, holder, ids, slot, log, k, n_max):
    """_check_id for each of ``ids``, IDs issued under one lease state (a
    burst, an answer), at once in the usual case: every ID with the run's
    datacenter and the lease's slot, and the same confirmation the latest at
    or before both the earliest and the latest of their times, covering the
    latest (then it is the latest for every time between, and covers each)."""
    if ids and slot is not None and log is not None and log.ordered and k:
        want = (Layout.DATACENTER << 2) | slot
        if all((i >> 12) & 0x3FF == want for i in ids):
            t_lo = (min(ids) >> 22) + Layout.EPOCH
            t_hi = (max(ids) >> 22) + Layout.EPOCH
            j = bisect_right(log.c, t_lo, 0, k)
            if j and bisect_right(log.c, t_hi, 0, k) == j and t_hi <= log.maxr[j - 1]:
                return
    for i in ids:
        _check_id(res, holder, i, slot, log, k, n_max)


def record_batches(path, server=False):
    """The batches of an issuing-side record, in order: one line per batch,
    the IDs in decimal separated by spaces (a server's after its generator's
    name). A last line without its newline was cut while written: its IDs
    were never handed out. A missing record has none."""
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        return
    with f:
        for line in f:
            if not line.endswith(b"\n"):
                return
            words = line.split()
            yield [int(w) for w in (words[1:] if server else words)]


def record_ids(path, server=False):
    """The IDs of an issuing-side record, in order (record_batches)."""
    for ids in record_batches(path, server):
        yield from ids


def check_holder_file(res, path, holder, out, record=None):
    """A holder's stdout (one incarnation): ID lines, and a {"lease":..}
    line after each burst; and its issuing-side record (``record``, None:
    records ignored), which lists the same IDs in the same order (a holder
    records each burst, then writes it), perhaps followed by IDs it issued
    and never wrote (killed or stopped before its output was written)."""
    pending = []
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] != b"":
        lines = lines[:-1]  # a line cut by SIGKILL
    rec = record_ids(record) if record else None
    aligned = True
    log, slot = Confirmations(), None
    for line in lines:
        if not line:
            continue
        if line.startswith(b"{"):
            lease = json.loads(line)["lease"]
            slot = lease["slot"]
            n_max = log.report(lease)
            _check_ids(res, holder, pending, slot, log if n_max is not None else None,
                       len(log.n), n_max)
            pending = []
        else:
            i = int(line)
            pending.append(i)
            r = next(rec, None) if rec is not None and aligned else None
            if r == i:
                out.put(i, holder, "b")  # both issued and delivered
                continue
            out.put(i, holder, "d")
            if rec is not None and aligned:
                # (A record that ends first: the IDs past it are delivered,
                # not recorded, in the sorted pass.)
                aligned = False
                if r is not None:
                    out.put(r, holder, "i")
                    res.bad(holder, f"{os.path.basename(path)}: ID {i} written where "
                                    f"its record has {r}: not the record's order")
    # Issued, not written: after everything written, so the confirmation in
    # force is the last one reported or a later one, as for IDs written
    # after the last lease line.
    if rec is not None:
        for r in rec:
            out.put(r, holder, "i")
            if aligned:
                pending.append(r)
            else:
                res.add(res.unconfirmed, holder)
    if slot is None:
        if pending:
            res.add(res.unconfirmed, holder, len(pending))
    else:
        _check_ids(res, holder, pending, slot, log, len(log.n), None)


def record_server_file(path, holder, out):
    """A server incarnation's record: every ID it issued (its answers are
    read from the load client's file)."""
    for ids in record_batches(path, server=True):
        out.put_many(ids, holder, "i")


def _load_lines(path, answers):
    """The load client's records, whole lines only (a last one without its
    newline was cut): its answers (``answers`` True) or the rest. An answer
    in load.py's form is known by its first bytes (the rest are few and
    parsed in both passes)."""
    with open(path, "rb") as f:
        for line in f:
            if not line.endswith(b"\n"):
                return
            if line.startswith(b'{"k":"ids",'):
                if answers:
                    yield json.loads(line)
                continue
            r = json.loads(line)
            if (r["k"] == "ids") == answers:
                yield r


def check_load_file(res, path, out):
    """The servers' answers, read in a second pass (a 30-minute run's are
    hundreds of millions of IDs), against each server's lease samples and
    /readyz samples from the first."""
    samples, ready = {}, {}
    for r in _load_lines(path, answers=False):
        if r["k"] == "lease":
            samples.setdefault(r["srv"], []).append(r)
        elif r["k"] == "ready":
            ready.setdefault(r["srv"], []).append(r)
    servers = {}
    for s in set(samples) | set(ready):
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
        servers[s] = (ls, lt0, lt1, seg, shown, nmax, rs, rt)
    none = ([], [], [], [], [], [], [], [])
    for a in _load_lines(path, answers=True):
        s = a["srv"]
        holder = f"server-{s}"
        ls, lt0, lt1, seg, shown, nmax, rs, rt = servers.get(s, none)
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
        ids = a["ids"]
        out.put_many(ids, holder, "d")
        # An answer's IDs come from one generator: one slot, checked at
        # once (else each ID with its own slot, as the ID names it).
        slots = {(i >> 12) & 0x3 for i in ids}
        groups = ([(slots.pop(), ids)] if len(slots) == 1
                  else [(Layout.parts(i)[2], [i]) for i in ids])
        for slot, of_slot in groups:
            m = j
            while m < len(ls) and ls[m]["lease"]["slot"] != slot and m < j + 3:
                m += 1
            q = p
            while q >= 0 and ls[q]["lease"]["slot"] != slot and q > p - 3:
                q -= 1
            if m < len(ls) and q >= 0 and seg[m] is seg[q] and nmax[m] is not None:
                _check_ids(res, holder, of_slot, slot, seg[m][0], shown[m], nmax[m])
            else:
                _check_ids(res, holder, of_slot, slot, None, 0, None)


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


class Ranges:
    """The checker's lines ("ID<tab>holder<tab>kind", the ID zero-padded to
    19 digits, so that lines sorted as bytes are in the IDs' order), one
    file per range of 2**38 IDs (65.5 s of ID time, the IDs' first bits):
    the ranges sorted one after another are all the lines sorted, and each
    is small enough to sort in memory."""

    SHIFT = 38

    def __init__(self, stem):
        self.stem, self.files = stem, {}

    def path(self, key):
        return f"{self.stem}.{key}"

    def _file(self, key):
        f = self.files.get(key)
        if f is None:
            f = self.files[key] = open(self.path(key), "w")
        return f

    def put(self, i, holder, kind):
        f = self.files.get(i >> self.SHIFT) or self._file(i >> self.SHIFT)
        f.write(f"{i:019d}\t{holder}\t{kind}\n")

    def put_many(self, ids, holder, kind):
        if ids and min(ids) >> self.SHIFT == max(ids) >> self.SHIFT:
            self._file(ids[0] >> self.SHIFT).write(
                "".join(f"{i:019d}\t{holder}\t{kind}\n" for i in ids))
        else:
            for i in ids:
                self.put(i, holder, kind)

    def close(self):
        for f in self.files.values():
            f.close()

    def sorted_ranges(self, tmp):
        """Each range's lines sorted by GNU sort, one range after another
        (every line, in the IDs' order): a file to read to its end, removed
        once read."""
        for key in sorted(self.files):
            path = self.path(key)
            sort = subprocess.Popen(
                ["sort", "-S", "1G", "-T", tmp, path], stdout=subprocess.PIPE,
                text=True, bufsize=1 << 20, env={**os.environ, "LC_ALL": "C"})
            with sort.stdout:
                yield sort.stdout
            if sort.wait(timeout=600):
                raise RuntimeError(f"sort {path} exited {sort.returncode}")
            os.remove(path)


def check_run(run_dir, records=True):
    """Checks a run's IDs: every ID its holders' and servers' records list
    (issued), and every ID a holder wrote or a server's answer carried
    (delivered). ``records`` False ignores the records (the delivered IDs
    alone, as if nothing else had been issued): the self-test's control."""
    res = Result()
    issued_dir = os.path.join(run_dir, "issued")
    out = Ranges(os.path.join(run_dir, "ids.tsv"))
    try:
        for path in sorted(glob.glob(os.path.join(run_dir, "holders", "*.out"))):
            holder = os.path.basename(path).rsplit(".", 2)[0]
            record = os.path.join(issued_dir, os.path.basename(path)[:-len(".out")])
            check_holder_file(res, path, holder, out, record if records else None)
        for path in sorted(glob.glob(os.path.join(run_dir, "load-*.jsonl"))):
            check_load_file(res, path, out)
        if records:
            for path in sorted(glob.glob(os.path.join(issued_dir, "srv*"))):
                name = os.path.basename(path).rsplit(".", 1)[0]
                record_server_file(path, f"server-{name}", out)
    finally:
        out.close()
    # An ID issued and delivered once (a holder's "b"; a server's "d" and "i")
    # only counts for its holder: tallied here, the rest through _one_id.
    once = {}
    prev, entries = None, []
    for lines in out.sorted_ranges(run_dir):
        for line in lines:
            i, h, kind = line[:19], line[20:-3], line[-2]
            if i != prev:
                if ((len(entries) == 1 and entries[0][1] == "b")
                        or (len(entries) == 2 and entries[0][0] == entries[1][0]
                            and entries[0][1] + entries[1][1] in ("di", "id"))):
                    once[entries[0][0]] = once.get(entries[0][0], 0) + 1
                elif prev is not None:
                    _one_id(res, int(prev), entries, records)
                prev, entries = i, []
            entries.append((h, kind))
    if prev is not None:
        _one_id(res, int(prev), entries, records)
    for h, n in once.items():
        for table in (res.delivered, res.issued, res.counts):
            res.add(table, h, n)
    return res


def _one_id(res, i, entries, records):
    """One ID's entries (holder, "i" issued, "d" delivered or "b" both, a
    holder's output matched with its record): each delivered entry is
    matched with an issued one of its holder; the ID's copies are its issued
    entries and the delivered ones without a match (with records ignored:
    every delivered one); more than one copy is a duplicate."""
    issued = [h for h, k in entries if k != "d"]
    left = [h for h, k in entries if k == "i"]  # issued, no delivered one matched
    extra = []  # delivered entries without an issued one
    for h, k in entries:
        if k == "i":
            continue
        res.add(res.delivered, h)
        if k == "b":
            continue
        if h in left:
            left.remove(h)
            continue
        extra.append(h)
        if records:
            res.add(res.unrecorded, h)
            res.bad(h, f"ID {i} was delivered but is not in its issuer's record")
    for h in issued:
        res.add(res.issued, h)
    for h in left:
        res.add(res.undelivered, h)
        if h.startswith("server-"):
            # No answer brackets it with lease samples: its datacenter is
            # checked, its reservation not (a holder's is: check_holder_file).
            _check_id(res, h, i, None, None, 0, None)
    copies = issued + extra
    for h in copies:
        res.add(res.counts, h)
    if len(copies) > 1:
        res.duplicates += len(copies) - 1
        if len(res.dup_examples) < 10:
            t, _, w = Layout.parts(i)
            shown = []
            for h in issued:
                if h in left:
                    left.remove(h)
                    h += " (never delivered)"
                shown.append(h)
            res.dup_examples.append(
                f"ID {i} (time {t}, worker {w}) issued by {', '.join(shown + extra)}")


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
    # A burst at once (_check_ids): covered whole, nothing to report; one ID
    # 1 ms past the last reservation, or on another slot, is still caught.
    def ident(t, slot=1, dc=Layout.DATACENTER):
        return (t << 22) | (dc << 14) | (slot << 12)
    for burst, want in (([3600, 5500], (0, 0)), ([3600, 5501], (1, 0)),
                        ([3600, 3601], (0, 0)), ([99, 100], (1, 0))):
        res = Result()
        _check_ids(res, "h", [ident(t) for t in burst], 1, log, k, 3)
        assert (res.reservation_violations, res.node_violations) == want, (burst, res.violations)
    res = Result()
    _check_ids(res, "h", [ident(3600), ident(3601, slot=2), ident(3602, dc=2)], 1, log, k, 3)
    assert res.node_violations == 2 and res.reservation_violations == 0, res.violations
    records_self_test()
    print("check: self-test passed")
    import phases  # the no-vacuous-pass check's cases
    phases.self_test()


def records_self_test():
    """The issuing side's records, on a made-up run folder: cli1 issued X
    and was killed before writing it; cli2 issued X too and wrote it. Only
    cli1's record shows the duplicate. cli2's second incarnation wrote Y,
    which no record lists; srv1 recorded s2, whose answer never arrived."""
    import tempfile
    e = Layout.EPOCH
    t0 = e + 10_000

    def ident(slot, seq, dt=100):
        return ((t0 + dt - e) << 22) | (Layout.DATACENTER << 14) | (slot << 12) | seq

    def lease(slot):
        return json.dumps({"lease": {"slot": slot, "renewals": 0, "confirmed_at_ms": t0,
                                     "reserved_until_ms": t0 + 2000}})
    a, b, x, y = ident(1, 0), ident(1, 1), ident(1, 7), ident(1, 8)
    s1, s2 = ident(3, 0), ident(3, 1)
    files = {
        "holders/cli1.1.out": f"{a}\n{b}\n{lease(1)}\n",
        "issued/cli1.1": f"{a} {b}\n{x}\n",  # x issued, never written
        # cli2 on cli1's slot after it (a successor fence missing).
        "holders/cli2.1.out": f"{x}\n{lease(1)}\n",
        "issued/cli2.1": f"{x}\n",
        "holders/cli2.2.out": f"{y}\n{lease(1)}\n",  # no record
        "load-c2.jsonl": json.dumps({"k": "ids", "srv": "srv1", "t0": 1, "t1": 2,
                                     "ids": [s1]}) + "\n",
        "issued/srv1.1": f"default {s1} {s2}\n",  # s2's answer came too late
    }
    with tempfile.TemporaryDirectory() as d:
        for name, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(d, name)), exist_ok=True)
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        res = check_run(d)
        assert res.duplicates == 1, (res.duplicates, res.dup_examples)
        assert "cli1 (never delivered), cli2" in res.dup_examples[0], res.dup_examples
        assert res.issued == {"cli1": 3, "cli2": 1, "server-srv1": 2}, res.issued
        assert res.delivered == {"cli1": 2, "cli2": 2, "server-srv1": 1}, res.delivered
        assert res.undelivered == {"cli1": 1, "server-srv1": 1}, res.undelivered
        assert res.unrecorded == {"cli2": 1}, res.unrecorded
        assert res.reservation_violations == 0 and res.node_violations == 0, res.violations
        assert sum(res.counts.values()) == 7, res.counts
        # Without the records, only delivered IDs: the duplicate is missed.
        blind = check_run(d, records=False)
        assert blind.duplicates == 0 and not blind.unrecorded, blind.dup_examples

    # The lines of three ranges of IDs (a 30-minute run has about thirty),
    # put in no order, an answer across two ranges among them: read back in
    # the IDs' order, every line once.
    with tempfile.TemporaryDirectory() as d:
        out = Ranges(os.path.join(d, "ids.tsv"))
        span = 1 << Ranges.SHIFT
        ids = [3 * span - 1, span, 2 * span + 5, span - 1, 2 * span + 5, 0]
        for n, i in enumerate(ids):
            out.put(i, f"h{n}", "i")
        out.put_many([2 * span - 1, 2 * span], "srv", "d")
        out.close()
        got = [(int(line[:19]), line[20:-3]) for f in out.sorted_ranges(d) for line in f]
        want = sorted([(i, f"h{n}") for n, i in enumerate(ids)]
                      + [(2 * span - 1, "srv"), (2 * span, "srv")])
        assert got == want, got
        assert len(out.files) == 3 and os.listdir(d) == [], os.listdir(d)


if __name__ == "__main__":
    import sys
    if sys.argv[1:] == ["--self-test"]:
        self_test()
    else:
        sys.exit("usage: python3 tools/harness/check.py --self-test")
