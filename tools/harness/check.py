"""The checker over every ID a run issued.

- Uniqueness: every ID from every holder (CLI holders and the IDs each
  server answered) goes to one file, sorted by GNU sort (bounded memory);
  equal neighbours are duplicates, reported with the holders that issued them.
- Reservations: a CLI holder writes, after each batch, its lease (slot, claim,
  confirmed reservation) as it stood once the batch was written; each ID of
  the batch must carry that slot in the leased field, the fixed node values,
  and a time no later than that reservation. A server's IDs are checked the
  same way against the first /v1/generators sample the client took after the
  answer came back, for the same slot (none in that incarnation: counted as
  unconfirmed, not checked).
- Readiness: no server answer both sent after a /readyz sample said 503 and
  returned before the next sample, which also said 503.
"""

import glob
import json
import os
import subprocess
from bisect import bisect_left


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
        self.unconfirmed = {}  # holder -> IDs with no lease line after them
        self.violations = []  # (holder, text), first 20 kept
        self.n_violations = 0
        self.unready_answers = 0
        self.duplicates = 0
        self.dup_examples = []

    def bad(self, holder, text):
        self.n_violations += 1
        if len(self.violations) < 20:
            self.violations.append(f"{holder}: {text}")


def _check_id(res, holder, i, slot, until):
    t, dc, worker = Layout.parts(i)
    if dc != Layout.DATACENTER or worker != slot:
        res.bad(holder, f"ID {i} has datacenter {dc} worker {worker}, lease slot {slot}")
    elif until is not None and t > until:
        res.bad(holder, f"ID {i} at {t} ms is past the confirmed reservation {until}")


def _until(lease):
    """The confirmed reservation, or None once the lease was lost or closed
    (it then reads before the epoch: the bound in force at issue is unknown)."""
    until = lease.get("reserved_until_ms")
    if until is None or until < Layout.EPOCH or lease.get("lost"):
        return None
    return until


def check_holder_file(res, path, holder, out):
    """A CLI holder's stdout: ID lines, and a {"lease":..} line after each batch."""
    pending, last_slot, n = [], None, 0
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] != b"":
        lines = lines[:-1]  # a line cut by SIGKILL
    for line in lines:
        if not line:
            continue
        if line.startswith(b"{"):
            lease = json.loads(line)["lease"]
            slot, until = lease["slot"], _until(lease)
            if until is None:
                res.unconfirmed[holder] = res.unconfirmed.get(holder, 0) + len(pending)
            for i in pending:
                _check_id(res, holder, i, slot, until)
            n += len(pending)
            pending, last_slot = [], slot
        else:
            i = int(line)
            pending.append(i)
            out.write(f"{i}\t{holder}\n")
    if pending:
        # Written, but the process ended before it wrote the lease line.
        res.unconfirmed[holder] = res.unconfirmed.get(holder, 0) + len(pending)
        if last_slot is not None:
            for i in pending:
                _check_id(res, holder, i, last_slot, None)
        n += len(pending)
    res.counts[holder] = res.counts.get(holder, 0) + n


def check_load_file(res, path, out):
    answers, leases, ready = {}, {}, {}
    with open(path) as f:
        for line in f:
            if not line.endswith("\n"):
                break
            r = json.loads(line)
            s = r["srv"]
            if r["k"] == "ids":
                answers.setdefault(s, []).append(r)
            elif r["k"] == "lease":
                leases.setdefault(s, []).append(r)
            elif r["k"] == "ready":
                ready.setdefault(s, []).append(r)
    for s, ans in answers.items():
        holder = f"server-{s}"
        ls = sorted(leases.get(s, []), key=lambda r: r["t0"])
        lt = [r["t0"] for r in ls]
        rs = sorted(ready.get(s, []), key=lambda r: r["t0"])
        rt = [r["t0"] for r in rs]
        n = 0
        for a in ans:
            # Readiness: the samples just before and just after the call.
            k = bisect_left(rt, a["t0"])
            if 0 < k < len(rs):
                before, after = rs[k - 1], rs[k]
                if (not before["ok"] and not after["ok"] and before["t1"] <= a["t0"]
                        and a["t1"] <= after["t0"]):
                    res.unready_answers += 1
                    res.bad(holder, f"answered {len(a['ids'])} IDs at {a['t0']}-{a['t1']} "
                                    "between two 503s of /readyz")
            j = bisect_left(lt, a["t1"])
            for i in a["ids"]:
                out.write(f"{i}\t{holder}\n")
                slot = Layout.parts(i)[2]
                m = j
                while m < len(ls) and ls[m]["lease"]["slot"] != slot and m < j + 3:
                    m += 1
                until = _until(ls[m]["lease"]) if m < len(ls) else None
                if until is not None and ls[m]["lease"]["slot"] == slot:
                    _check_id(res, holder, i, slot, until)
                else:
                    res.unconfirmed[holder] = res.unconfirmed.get(holder, 0) + 1
                n += 1
        res.counts[holder] = res.counts.get(holder, 0) + n


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
