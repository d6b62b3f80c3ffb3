"""A client host's load: calls each snowmint-server flat out and records
every answer, and polls each server's /readyz and /v1/generators (the
lease: slot, claim, confirmed reservation) every 100 ms.

Run inside a client host's namespace by the harness:
    python3 load.py --out FILE --seconds S --token-file F NAME=http://ADDR:PORT ...
One JSON object per line in FILE (times are Unix ms on this machine's clock):
    {"k":"ids","srv":N,"t0":..,"t1":..,"ids":[..]}     an answer
    {"k":"err","srv":N,"t0":..,"t1":..,"e":".."}      a failed call
    {"k":"ready","srv":N,"t0":..,"t1":..,"ok":bool}   a /readyz answer (ok: 200)
    {"k":"lease","srv":N,"t0":..,"t1":..,"lease":{..}} a /v1/generators answer
"""

import argparse
import json
import threading
import time
import urllib.error
import urllib.request

TIMEOUT = 2.0  # seconds, every call


def now_ms():
    return time.time_ns() // 1_000_000


class Recorder:
    def __init__(self, path):
        self.f = open(path, "a", buffering=1)
        self.lock = threading.Lock()

    def put(self, obj):
        line = json.dumps(obj, separators=(",", ":"))
        with self.lock:
            self.f.write(line + "\n")


def call(url, token):
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def issuer(rec, name, base, token, end, count):
    while time.monotonic() < end:
        t0 = now_ms()
        try:
            status, body = call(f"{base}/v1/ids?count={count}", token)
            t1 = now_ms()
            if status == 200:
                rec.put({"k": "ids", "srv": name, "t0": t0, "t1": t1,
                         "ids": [int(i) for i in json.loads(body)["ids"]]})
            else:
                rec.put({"k": "err", "srv": name, "t0": t0, "t1": t1,
                         "e": f"HTTP {status}"})
                time.sleep(0.05)
        except (OSError, ValueError) as e:
            rec.put({"k": "err", "srv": name, "t0": t0, "t1": now_ms(), "e": str(e)[:200]})
            time.sleep(0.1)


def prober(rec, name, base, token, end, count):
    while time.monotonic() < end:
        t0 = now_ms()
        try:
            status, _ = call(f"{base}/readyz", token)
            rec.put({"k": "ready", "srv": name, "t0": t0, "t1": now_ms(), "ok": status == 200})
        except OSError:
            pass  # no answer says nothing about readiness
        t0 = now_ms()
        try:
            status, body = call(f"{base}/v1/generators", token)
            if status == 200:
                doc = json.loads(body)
                gens = doc.get("generators", doc) if isinstance(doc, dict) else doc
                for g in gens:
                    if g.get("lease"):
                        rec.put({"k": "lease", "srv": name, "t0": t0, "t1": now_ms(),
                                 "lease": g["lease"]})
        except (OSError, ValueError):
            pass
        time.sleep(0.1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--token-file", required=True)
    ap.add_argument("--count", type=int, default=100, help="IDs per call")
    ap.add_argument("servers", nargs="+")
    a = ap.parse_args()
    with open(a.token_file) as f:
        token = f.read().strip()
    rec = Recorder(a.out)
    end = time.monotonic() + a.seconds
    threads = []
    for s in a.servers:
        name, base = s.split("=", 1)
        for fn in (issuer, issuer, prober):
            t = threading.Thread(target=fn, args=(rec, name, base, token, end, a.count), daemon=True)
            t.start()
            threads.append(t)
    for t in threads:
        t.join(timeout=a.seconds + 10)


if __name__ == "__main__":
    main()
