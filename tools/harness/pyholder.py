"""A lease holder on the Python binding (docs/HARNESS.md, "Clients"): a
leased snowmint.Generator issuing flat out, writing what a CLI holder writes
with --on-demand --lease-lines, so check.py reads both the same way: after
each burst, its IDs one per line, then {"lease": ...} (the lease as it stands
once the burst was issued). Before it writes a burst, it appends it to its
record of issued IDs (--issued-log: one line of decimal IDs separated by
spaces, one unbuffered write(2)), as the CLI does: the record holds every ID
issued, written or not. Reads nothing. Exits 1 on any snowmint error (no
free slot, lease lost or expired, clock behind the slot's hwm): the harness's
supervisor restarts it, as it restarts a CLI holder that exits.

Run by the harness's own interpreter (a venv under target/harness with the
binding's wheel installed), in a client host's namespace; under libfaketime
for holder-clock-step, which then steps the binding's clock too."""

import argparse
import json
import os
import sys
import time

import snowmint

from check import Layout  # this script's folder is first on sys.path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lease", required=True, help="the lease URL")
    ap.add_argument("--burst", type=int, default=100, help="IDs per burst")
    ap.add_argument("--issued-log", required=True, help="the record of issued IDs")
    a = ap.parse_args()
    out = sys.stdout.buffer
    record = os.open(a.issued_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        # The CLI holder's options: the same layout, node and clock policy.
        gen = snowmint.Generator(Layout.DESCRIPTOR, lease=a.lease, datacenter=Layout.DATACENTER,
                                 clock_backwards="wait:5")
        while True:
            ids = gen.next_ids(a.burst)
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
        return 1


if __name__ == "__main__":
    sys.exit(main())
