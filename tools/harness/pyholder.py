"""A lease holder on the Python binding (docs/HARNESS.md, "Clients"): a
leased snowmint.Generator issuing flat out, writing what a CLI holder writes
with --on-demand --lease-lines, so check.py reads both the same way: after
each burst, its IDs one per line, then {"lease": ...} (the lease as it stands
once the burst was issued). Before it writes a burst, it appends it to its
record of issued IDs (--issued-log: one line of decimal IDs separated by
spaces, one unbuffered write(2)), as the CLI does: the record holds every ID
issued, written or not. Reads nothing.

Refusals it can wait out, it waits out with the same generator, as an
application would (nodeholder.mjs does the same): `lease_fenced` (the slot's
previous holder reserved past the clock) for the time the error names, and
`lease_expired` while renewals fail (the store unreachable, or this process
stopped), until a renewal is confirmed, for at most the lease's TTL (the
URL's ttl_ms): past it the slot may be another holder's, and a store this
URL no longer reaches as it was (a primary demoted to a replica after a
promotion) may never confirm one; each wait is logged with the
refusal's message (check.py reads `no ID before T ms` there). Any other
snowmint error (no free slot, the lease lost): it closes the generator
(releasing its slot) and exits 1, and the harness's supervisor restarts it,
as it restarts a CLI holder that exits. An earlier version exited on every
refusal without closing: a restarted holder was fenced by its predecessor's
unreleased reservation, exited again, and so on.

Run by the harness's own interpreter (a venv under target/harness with the
binding's wheel installed), in a client host's namespace; under libfaketime
for holder-clock-step, which then steps the binding's clock too."""

import argparse
import json
import os
import re
import sys
import time

import snowmint

from check import Layout  # this script's folder is first on sys.path


def ttl_s(url):
    """The lease URL's ttl_ms in seconds (the lease's default, 30 s, without it)."""
    m = re.search(r"[?&]ttl_ms=(\d+)", url)
    return int(m.group(1)) / 1000 if m else 30.0


def wait_for(e, expired_for, ttl):
    """Seconds to wait before asking again after the refusal `e`, or None
    for one that ends this generator (see the module's docstring);
    `expired_for`: how long the lease has been expired (seconds)."""
    if e.code == "lease_fenced":
        left = re.search(r"\((?:now \d+ ms, )?(\d+) ms to go\)", str(e))
        return (min(int(left.group(1)) if left else 100, 30_000) + 1) / 1000
    if (e.code == "lease_expired" and str(e).startswith("lease expired:")
            and expired_for < ttl):
        return 0.1
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lease", required=True, help="the lease URL")
    ap.add_argument("--burst", type=int, default=100, help="IDs per burst")
    ap.add_argument("--issued-log", required=True, help="the record of issued IDs")
    a = ap.parse_args()
    out = sys.stdout.buffer
    record = os.open(a.issued_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    gen = None
    try:
        # The CLI holder's options: the same layout, node and clock policy.
        gen = snowmint.Generator(Layout.DESCRIPTOR, lease=a.lease, datacenter=Layout.DATACENTER,
                                 clock_backwards="wait:5")
        waiting = None  # the code of the refusal being waited out
        since = None  # when that refusal was first seen (monotonic)
        ttl = ttl_s(a.lease)
        while True:
            try:
                ids = gen.next_ids(a.burst)
            except snowmint.SnowmintError as e:
                now = time.monotonic()
                if waiting != e.code:
                    since = now
                s = wait_for(e, now - since, ttl)
                if s is None:
                    raise
                # A fence is logged each time (its time moves); expiry once per spell.
                if e.code == "lease_fenced" or waiting != e.code:
                    print(f"pyholder: {e.code}: {e}; waiting", file=sys.stderr, flush=True)
                waiting = e.code
                time.sleep(s)
                continue
            if waiting is not None:
                print(f"pyholder: issuing again after {waiting}", file=sys.stderr, flush=True)
            waiting = None
            line = b" ".join(b"%d" % i for i in ids) + b"\n"
            # A regular file: one write(2) writes it all, else it is an error.
            if os.write(record, line) != len(line):
                raise OSError(f"a short write to {a.issued_log}")
            out.write(b"".join(b"%d\n" % i for i in ids))
            # Read after the burst: the confirmation it shows (renewals,
            # confirmed_at_ms) is the one in force at the burst's IDs or a
            # later one, which bounds them for check.py.
            out.write(json.dumps({"lease": gen.lease}, separators=(",", ":")).encode() + b"\n")
            out.flush()
            # The CLI holder's feeder's pace: a burst every 10 ms at most.
            time.sleep(0.01)
    except snowmint.SnowmintError as e:
        print(f"pyholder: {e}", file=sys.stderr, flush=True)
        if gen is not None:
            try:
                gen.close()
            except snowmint.SnowmintError as c:
                print(f"pyholder: close: {c}", file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
