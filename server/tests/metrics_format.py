"""The live server's /metrics against Prometheus' own parsers and naming rules.

Usage: python metrics_format.py BASE TOKEN, with prometheus_client installed
(`cargo xtask test server` installs it into .venv). The page is read twice: as
OpenMetrics (the default) with prometheus_client's OpenMetrics parser, and
with `Accept: text/plain` (Prometheus' text format 0.0.4) with its classic
parser; both must parse and hold the same series, of the same types. Then the rules:

- every family is `snowmint_*` and has a HELP text;
- a counter's samples are `NAME_total`; no gauge is named `_total`;
- no name has a unit other than a base one (`_ms`, `_milliseconds`, ...);
- a histogram is `_seconds`, its finite buckets in seconds (under 60, the
  smallest under 0.01);
- the per-request HTTP metrics (`snowmint_http_requests_total`,
  `snowmint_http_request_duration_seconds`) carry `route` on every sample;
- `snowmint_build_info` is one sample at 1 with a `version` label;
- every generator (/v1/generators) has `snowmint_lease_state` with each of
  held, expired, lost and none, exactly one of them at 1 (`none` for one
  without a lease), and a leased one `snowmint_lease_reclaims_total`.

Before the live page passes, broken copies of it must fail (a counter sample
without `_total`, a malformed line, millisecond buckets, a route label gone,
the build info at 0): a check that cannot fail is no check.
"""

import json
import re
import sys
import urllib.request

from prometheus_client import parser as classic
from prometheus_client.openmetrics import parser as openmetrics

base, token = sys.argv[1:]
AUTH = {"Authorization": "Bearer " + token}
BAD_UNITS = re.compile(r"_(ms|milliseconds|us|microseconds|ns|nanoseconds|minutes|hours|days|kb|mb|percent)(_|$)")
STATES = {"held", "expired", "lost", "none"}


def get(path, accept=None):
    headers = dict(AUTH)
    if accept:
        headers["Accept"] = accept
    req = urllib.request.Request(base + path, headers=headers)
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.headers["Content-Type"], r.read().decode()


def series(families):
    """Each sample's name, labels and its family's type (the values of two
    scrapes differ: the time left in a reservation, the scrapes counted)."""
    return {(s.name, tuple(sorted(s.labels.items())), f.type) for f in families for s in f.samples}


def problems(om_text, text004, generators):
    """What is wrong with the two pages; empty: nothing."""
    try:
        om = list(openmetrics.text_string_to_metric_families(om_text))
    except Exception as e:  # the parser's own message says what and where
        return [f"OpenMetrics parser: {type(e).__name__}: {e}"]
    try:
        old = list(classic.text_string_to_metric_families(text004))
    except Exception as e:
        return [f"text format 0.0.4 parser: {type(e).__name__}: {e}"]
    out = []
    # Counters by their sample names in both formats: the classic parser keys
    # a counter family by `_total`; a gauge's sample has the family's name.
    if series(om) != series(old):
        only_om = series(om) - series(old)
        only_old = series(old) - series(om)
        out.append(f"the two formats differ: OpenMetrics only {sorted(only_om)[:3]}, 0.0.4 only {sorted(only_old)[:3]}")
    for f in old:
        if f.type == "unknown":
            out.append(f"{f.name}: no TYPE in the 0.0.4 page (a counter's TYPE must name its _total samples)")
    by_name = {f.name: f for f in om}
    for f in om:
        if not f.name.startswith("snowmint_"):
            out.append(f"{f.name}: not snowmint_*")
        if not f.documentation:
            out.append(f"{f.name}: no HELP")
        if BAD_UNITS.search(f.name):
            out.append(f"{f.name}: not a base unit (seconds, bytes)")
        if f.type == "counter":
            for s in f.samples:
                if s.name != f.name + "_total":
                    out.append(f"{s.name}: a counter's sample must be {f.name}_total")
        if f.type == "gauge" and f.name.endswith("_total"):
            out.append(f"{f.name}: a gauge named _total")
        if f.type == "histogram":
            if not f.name.endswith("_seconds"):
                out.append(f"{f.name}: a histogram of durations must be _seconds")
            bounds = sorted({float(s.labels["le"]) for s in f.samples if s.name.endswith("_bucket")} - {float("inf")})
            if not bounds or bounds[-1] >= 60 or bounds[0] >= 0.01:
                out.append(f"{f.name}: buckets {bounds[:2]}..{bounds[-1:]} are not seconds")
        if f.name.startswith("snowmint_http_request"):
            for s in f.samples:
                if "route" not in s.labels:
                    out.append(f"{s.name}{s.labels}: no route label")
    info = by_name.get("snowmint_build_info")
    if info is None or info.type != "gauge" or len(info.samples) != 1:
        out.append("snowmint_build_info: not one gauge sample")
    else:
        s = info.samples[0]
        if s.value != 1 or not re.fullmatch(r"\d+\.\d+\.\d+\S*", s.labels.get("version", "")):
            out.append(f"snowmint_build_info: {s.labels} {s.value}, not 1 with a version")
    state = by_name.get("snowmint_lease_state")
    reclaims = by_name.get("snowmint_lease_reclaims")
    for g in generators:
        name = g["name"]
        rows = {s.labels["state"]: s.value for s in state.samples if s.labels["generator"] == name} if state else {}
        if set(rows) != STATES or sorted(rows.values()) != [0, 0, 0, 1]:
            out.append(f"snowmint_lease_state for {name}: {rows}")
        elif (g["lease"] is None) != (rows["none"] == 1):
            out.append(f"snowmint_lease_state for {name}: {rows}, lease {g['lease']}")
        if g["lease"] is not None and not (reclaims and any(s.labels["generator"] == name for s in reclaims.samples)):
            out.append(f"snowmint_lease_reclaims_total: no series for {name}")
    return out


def main():
    # A request of each kind first, so that the per-route series exist
    # (`/metrics`' own too: both pages below list the same series).
    get("/v1/ids?count=3")
    get("/api/snowflake/get/any")
    get("/metrics")
    kind, om_text = get("/metrics")
    assert kind.startswith("application/openmetrics-text"), kind
    kind, text004 = get("/metrics", accept="text/plain; version=0.0.4")
    assert kind.startswith("text/plain; version=0.0.4"), kind
    generators = json.loads(get("/v1/generators")[1])["generators"]

    def both(f):
        return (f, f)

    def ms(text):
        return re.sub(r'le="([0-9.e-]+)"', lambda m: f'le="{float(m.group(1)) * 1000}"', text)

    same = lambda t: t  # noqa: E731
    broken = {
        "a counter sample without _total": both(lambda t: t.replace("snowmint_ids_issued_total{", "snowmint_ids_issued{")),
        "a malformed sample line": both(lambda t: t.replace("snowmint_build_info{", 'snowmint_build_info{"', 1)),
        "millisecond buckets": both(ms),
        "a route label gone": both(lambda t: t.replace('{route="/v1/ids",status="200"}', '{status="200"}')),
        "the build info at 0": both(lambda t: re.sub(r"(snowmint_build_info\{.*\}) 1", r"\1 0", t)),
        "a gauge in milliseconds": both(lambda t: t.replace("lease_reservation_remaining_seconds", "lease_reservation_remaining_ms")),
        "a counter's 0.0.4 TYPE under the family's name": (
            same,
            lambda t: t.replace("# TYPE snowmint_ids_issued_total counter", "# TYPE snowmint_ids_issued counter"),
        ),
    }
    for what, (f_om, f_old) in broken.items():
        a, b = f_om(om_text), f_old(text004)
        if (a, b) == (om_text, text004):
            sys.exit(f"breaking the page ({what}) changed nothing: is the metric still there?")
        found = problems(a, b, generators)
        if not found:
            sys.exit(f"the check passed a page with {what}")
        print(f"refused, as it must be ({what}): {found[0]}")
    found = problems(om_text, text004, generators)
    if found:
        print(om_text)
        sys.exit("/metrics breaks Prometheus' format or conventions:\n  " + "\n  ".join(found))
    families = list(openmetrics.text_string_to_metric_families(om_text))
    print(f"/metrics: {len(families)} families, both formats parsed, conventions hold")


main()
