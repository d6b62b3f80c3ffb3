"""snowmint's Python package against its peers, measured in one run.

Per-call times are medians over REPEATS timeit repeats (each a loop of many
calls through a bound method, so every peer pays the same loop overhead).
Sustained rates run a generator in a tight loop for about a second per repeat.
Prints a Markdown table; bench/python/run.sh writes it to bench/out/python.md.
"""

import argparse
import datetime
import functools
import platform
import statistics
import sys
import tempfile
import time
import timeit
import uuid

import snowmint
import uuid_utils
from hashids import Hashids
from snowflake import SnowflakeGenerator
from snowflake_id_toolkit import TwitterSnowflakeIDGenerator
from sonyflake import SonyFlake

TWITTER_EPOCH = 1288834974657
TWITTER_RATE = 4_096_000  # 4096 sequence values per millisecond
# An 18-bit sequence (262,144 IDs per ms): neither side of the lease A/B waits
# for the clock. `worker` is leased; the plain generator fixes it.
LEASE_LAYOUT = ('{"epoch_ms":1288834974657,"fields":[["timestamp",41],["datacenter",1],'
                '["worker",3],["sequence",18]]}')


def lease_ab(number, pairs):
    """`next_id()` with a file lease held and without, alternated in `pairs`
    rounds: (median leased ns, median plain ns, median of the per-round ratios)."""
    plain = snowmint.Generator(LEASE_LAYOUT, datacenter=0, worker=0)
    with tempfile.TemporaryDirectory(prefix="snowmint-bench-") as d:
        with snowmint.Generator(LEASE_LAYOUT, datacenter=1, lease=f"file:{d}") as leased:
            rounds = []
            for _ in range(pairs):
                a = per_call_ns(leased.next_id, number, 1)
                b = per_call_ns(plain.next_id, number, 1)
                rounds.append((a, b, a / b))
    med = lambda i: statistics.median(x[i] for x in rounds)
    return med(0), med(1), med(2)


def mask_rows(number, repeats):
    """Public IDs: IdMask.mask/unmask (FF1, AES-128 and AES-256) against the
    hashids package's encode/decode, each per ID of one Twitter ID, and the
    URL round trip (mask + base62, base62 + unmask) against hashids'. Every
    call goes through functools.partial, so each pays the same overhead."""
    tw_id = 1541815603606036480
    hid = Hashids(salt="orders", min_length=11)
    hid_text = hid.encode(tw_id)
    assert hid.decode(hid_text) == (tw_id,)
    rows = []
    for name, key in (("AES-128", bytes(range(16))), ("AES-256", bytes(range(32)))):
        m = snowmint.IdMask("twitter", key, b"orders")
        pub = m.mask(tw_id)
        text = snowmint.to_base62(pub)
        rows.append((f"IdMask.mask(id) {name}", per_call_ns(functools.partial(m.mask, tw_id), number, repeats)))
        rows.append((f"IdMask.unmask(public) {name}", per_call_ns(functools.partial(m.unmask, pub), number, repeats)))
        if name == "AES-128":
            out = lambda i, m=m: snowmint.to_base62(m.mask(i))
            back = lambda t, m=m: m.unmask(snowmint.from_base62(t))
            assert back(out(tw_id)) == tw_id
            rows.append(("to_base62(IdMask.mask(id)) AES-128", per_call_ns(functools.partial(out, tw_id), number, repeats)))
            rows.append(("IdMask.unmask(from_base62(s)) AES-128", per_call_ns(functools.partial(back, text), number, repeats)))
    rows.append(("hashids Hashids.encode(id)", per_call_ns(functools.partial(hid.encode, tw_id), number, repeats)))
    rows.append(("hashids Hashids.decode(s)", per_call_ns(functools.partial(hid.decode, hid_text), number, repeats)))
    return rows


def per_call_ns(f, number, repeats):
    times = timeit.repeat(f, number=number, repeat=repeats)
    return statistics.median(times) / number * 1e9


def rate(f, seconds, repeats, chunk=1000):
    """Calls per second of `f` in a tight loop, median over repeats."""
    rates = []
    for _ in range(repeats):
        n = 0
        start = time.perf_counter()
        end = start + seconds
        while time.perf_counter() < end:
            for _ in range(chunk):
                f()
            n += chunk
        rates.append(n / (time.perf_counter() - start))
    return statistics.median(rates), max(rates)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="fewer calls (a smoke test)")
    ap.add_argument("--mask-only", action="store_true", help="only the public-ID table (IdMask vs hashids)")
    args = ap.parse_args()
    r = args.repeats
    n = 20_000 if args.quick else 200_000
    secs = 0.2 if args.quick else 1.0
    if args.mask_only:
        print(f"Python {platform.python_version()}, {platform.machine()}, "
              f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, median of {r} repeats.")
        mask_table(n, r)
        return

    uncapped = snowmint.Generator("mastodon")  # 16-bit sequence per ms: never waits here
    borrow = snowmint.Generator("twitter", datacenter=2, worker=2, sequence_exhausted="borrow:1000")
    twitter = snowmint.Generator("twitter", datacenter=1, worker=1)
    sf_id = SnowflakeGenerator(1, epoch=TWITTER_EPOCH)
    toolkit = TwitterSnowflakeIDGenerator(node_id=1, epoch=TWITTER_EPOCH)
    sony = SonyFlake(machine_id=lambda: 1)

    rows = []  # (name, what, ns per ID)

    def add(name, what, ns):
        rows.append((name, what, ns))
        print(f"  {name:45s} {ns:10.1f} ns", file=sys.stderr)

    print("per call:", file=sys.stderr)
    add("snowmint Generator('mastodon').next_id()", "uncapped (16-bit sequence)", per_call_ns(uncapped.next_id, n, r))
    add("snowmint twitter, sequence_exhausted='borrow:1000'", "uncapped (borrows ahead)",
        per_call_ns(borrow.next_id, n, r))
    add("uuid_utils.uuid7()", "UUID object", per_call_ns(uuid_utils.uuid7, n, r))
    add("uuid.uuid4()", "UUID object (os.urandom)", per_call_ns(uuid.uuid4, n // 10, r))
    add("snowflake-id next(SnowflakeGenerator)", "twitter-like; returns None when exhausted",
        per_call_ns(sf_id.__next__, n, r))
    add("snowflake-id-toolkit generate_next_id()", "twitter, waits when exhausted",
        per_call_ns(toolkit.generate_next_id, n, r))
    add("sonyflake-py SonyFlake.next_id()", "sonyflake: 256 IDs per 10 ms, sleeps",
        per_call_ns(sony.next_id, 2_000, 3))
    batch = 10_000
    add("snowmint Generator('mastodon').next_ids(10_000)", "per ID", per_call_ns(lambda: uncapped.next_ids(batch), 100, r) / batch)

    print("sustained, twitter layout:", file=sys.stderr)
    sustained = [
        ("snowmint Generator('twitter').next_id()", *rate(twitter.next_id, secs, r)),
        ("snowmint Generator('twitter').next_ids(10_000)",
         *(x * batch for x in rate(lambda: twitter.next_ids(batch), secs, r, chunk=1))),
        ("snowflake-id-toolkit generate_next_id()", *rate(toolkit.generate_next_id, secs, r)),
    ]
    for name, v, best in sustained:
        print(f"  {name:45s} {v:14,.0f} IDs/s (best {best:,.0f})", file=sys.stderr)

    leased_ns, plain_ns, lease_ratio = lease_ab(n, max(r, 5))
    print(f"  lease A/B: leased {leased_ns:.1f} ns, plain {plain_ns:.1f} ns, ratio {lease_ratio:.3f}",
          file=sys.stderr)

    ns = {name: v for name, _, v in rows}
    next_id = ns["snowmint Generator('mastodon').next_id()"]
    uuid7 = ns["uuid_utils.uuid7()"]
    per_id = ns["snowmint Generator('mastodon').next_ids(10_000)"]
    tw, tw_best = sustained[0][1], sustained[0][2]

    out = []
    out.append(f"Python {platform.python_version()}, {platform.machine()}, "
               f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
               f"median of {r} repeats (sustained rates: {r} repeats of ~{secs:g} s).\n")
    out.append("| call | notes | ns per ID | vs uuid_utils.uuid7 |")
    out.append("| --- | --- | ---: | ---: |")
    for name, what, v in rows:
        out.append(f"| `{name}` | {what} | {v:.1f} | {v / uuid7:.2f}x |")
    out.append("")
    out.append("| sustained, Twitter layout (4,096,000 IDs/s max) | IDs/s (median) | of the maximum | best repeat |")
    out.append("| --- | ---: | ---: | ---: |")
    for name, v, best in sustained:
        out.append(f"| `{name}` | {v:,.0f} | {v / TWITTER_RATE:.1%} | {best / TWITTER_RATE:.1%} |")
    out.append("")
    out.append("| target | measured | met |")
    out.append("| --- | --- | --- |")
    out.append(f"| `next_id()` <= 0.5x `uuid_utils.uuid7()` | {next_id / uuid7:.2f}x ({next_id:.1f} vs {uuid7:.1f} ns) "
               f"| {'yes' if next_id <= 0.5 * uuid7 else 'no'} |")
    out.append(f"| `next_ids(10_000)` <= 40 ns/ID | {per_id:.1f} ns/ID | {'yes' if per_id <= 40 else 'no'} |")
    out.append(f"| Twitter tight loop >= 99% of 4,096,000/s | median {tw:,.0f}/s ({tw / TWITTER_RATE:.1%}), "
               f"best {tw_best / TWITTER_RATE:.1%} "
               f"| {'yes' if tw >= 0.99 * TWITTER_RATE else 'no'} |")
    out.append(f"| `next_id()` with a file lease held <= 1.05x without (18-bit sequence, alternated, median ratio) "
               f"| {lease_ratio:.3f}x ({leased_ns:.1f} vs {plain_ns:.1f} ns) | {'yes' if lease_ratio <= 1.05 else 'no'} |")
    print("\n".join(out))

    mask_table(n, r)


def mask_table(n, r):
    print("public IDs:", file=sys.stderr)
    masks = mask_rows(n // 4, r)
    for name, v in masks:
        print(f"  {name:45s} {v:10.1f} ns", file=sys.stderr)
    mv = dict(masks)
    enc = mv["hashids Hashids.encode(id)"]
    dec = mv["hashids Hashids.decode(s)"]
    table = ["", "| public IDs, Twitter layout, tweak 'orders' | ns per ID | vs hashids encode | vs hashids decode |",
             "| --- | ---: | ---: | ---: |"]
    for name, v in masks:
        table.append(f"| `{name}` | {v:.1f} | {v / enc:.2f}x | {v / dec:.2f}x |")
    print("\n".join(table))


if __name__ == "__main__":
    main()
