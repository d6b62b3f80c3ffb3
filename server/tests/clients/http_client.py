"""A Python client of the HTTP API with urllib (no dependencies): 100 IDs
from /v1/ids, printed one a line. `cargo xtask test server` runs it with
BASE (http://HOST:PORT) and TOKEN in the environment."""

import json
import os
import urllib.request

req = urllib.request.Request(os.environ["BASE"] + "/v1/ids?count=100",
                             headers={"Authorization": "Bearer " + os.environ["TOKEN"]})
with urllib.request.urlopen(req, timeout=10) as r:
    assert r.headers["Cache-Control"] == "no-store"
    body = json.load(r)
assert len(body["ids"]) == 100
print("\n".join(body["ids"]))
