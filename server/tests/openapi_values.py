"""Real values against server/openapi.yaml's parameter schemas: IDs the live
server issued (19 digits with the leaf preset), the largest 64-bit ID (20
digits, which a 64-bit layout decodes), a JSON layout descriptor the server
accepts, and every preset. A pattern or enum that rejects one of them fails
here, whatever schemathesis happened to generate.

Usage: python openapi_values.py SPEC BASE TOKEN (PyYAML comes with
schemathesis). The parameter schemas use `type: string`, `pattern`, `enum`
and `minLength` only; anything else in them fails here, to be added.
"""

import json
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

import yaml

spec_file, base, token = sys.argv[1:]
with open(spec_file, encoding="utf-8") as f:
    spec = yaml.safe_load(f)


def get(path):
    req = urllib.request.Request(base + path, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def param(path, method, name):
    for p in spec["paths"][path][method]["parameters"]:
        if "$ref" in p:
            p = spec["components"]["parameters"][p["$ref"].rsplit("/", 1)[1]]
        if p["name"] == name:
            return p["schema"]
    raise KeyError(f"{method} {path}: no parameter {name}")


def check(schema, value, what):
    known = {"type", "pattern", "enum", "minLength"}
    assert set(schema) <= known, f"{what}: schema keys {set(schema) - known} are not checked here"
    problem = None
    if schema.get("type") != "string":
        problem = f"type {schema.get('type')!r}"
    elif "pattern" in schema and not re.search(schema["pattern"], value):
        problem = f"does not match {schema['pattern']!r}"
    elif "enum" in schema and value not in schema["enum"]:
        problem = f"is not one of {schema['enum']}"
    elif len(value) < schema.get("minLength", 0):
        problem = f"is shorter than {schema['minLength']}"
    if problem:
        sys.exit(f"openapi.yaml rejects {what} {value!r}: {problem}")


ids = get("/v1/ids?count=5")["ids"]
assert all(len(i) == 19 for i in ids), ids
largest = str(2**64 - 1)
descriptor = json.dumps(get("/v1/generators")["generators"][0]["layout"], separators=(",", ":"))
presets = ["twitter", "discord", "instagram", "sonyflake", "sonyflake-v2", "shardingsphere",
           "leaf", "baidu", "tsid", "mastodon"]
checked = 0
for method in ("get",):
    for value in ids + [largest]:
        check(param("/v1/decode/{id}", method, "id"), value, "the ID")
        checked += 1
    for value in [descriptor] + presets:
        check(param("/v1/decode/{id}", method, "layout"), value, "the layout")
        checked += 1
for method in ("get", "post"):
    for value in ids + [largest]:
        check(param("/decodeSnowflakeId", method, "snowflakeId"), value, "the ID")
        checked += 1
    for value in [descriptor] + presets:
        check(param("/decodeSnowflakeId", method, "layout"), value, "the layout")
        checked += 1

# The server takes every one of them, as the file says.
q = urllib.parse.quote
for i in ids:
    assert get(f"/v1/decode/{i}")["id"] == i
    assert get(f"/v1/decode/{i}?layout={q(descriptor)}")["id"] == i
    assert "workerId" in get(f"/decodeSnowflakeId?snowflakeId={i}&layout={q(descriptor)}")
assert get(f"/v1/decode/{largest}?layout=instagram")["id"] == largest
for preset in presets:
    try:
        get(f"/v1/decode/{ids[0]}?layout={preset}")
    except urllib.error.HTTPError as e:
        # An ID wider than the preset's bits is the ID's fault, not the name's.
        code = json.load(e)["error"]["code"]
        assert e.code == 400 and code == "invalid_id", (preset, e.code, code)
print(f"openapi.yaml accepts {checked} real values (IDs of {len(ids[0])} and {len(largest)} digits, "
      "a descriptor, every preset), and the server took them")
