"""Two servers on one Redis store: different leased values, every ID unique.

    python3 server/tests/two_servers.py HOST:PORT HOST:PORT

Each server's first generator leases its `worker` (Leaf's 10 bits at 12)
from the same namespace; 20 rounds of 1,000 IDs from each must carry that
server's slot and never repeat. `cargo xtask test server` starts the servers.
"""

import json
import sys
import urllib.request


def get(addr, path):
    with urllib.request.urlopen(f"http://{addr}{path}", timeout=10) as r:
        return json.load(r)


addrs = sys.argv[1:]
slots = [get(a, "/v1/generators")["generators"][0]["lease"]["slot"] for a in addrs]
assert slots[0] != slots[1], slots
seen = set()
for _ in range(20):
    for addr, slot in zip(addrs, slots):
        for i in map(int, get(addr, "/v1/ids?count=1000")["ids"]):
            assert (i >> 12) & 0x3FF == slot, (i, slot)
            assert i not in seen, i
            seen.add(i)
print(f"slots {slots}: {len(seen)} unique IDs")
