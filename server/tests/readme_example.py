#!/usr/bin/env python3
"""Runs the service examples the READMEs show, so that they cannot drift.

    python3 server/tests/readme_example.py BINARY [FILE...]

Each FILE (default: README.md and server/README.md) marks its example with
`<!-- server-example:start -->` and `<!-- server-example:end -->` around a
```sh block. In it:

- `cargo build ...` lines are skipped (BINARY is the built server);
- `cargo run ... -p snowmint-server -- ARGS` or `./target/.../snowmint-server
  ARGS` starts BINARY with exactly ARGS, plus `--listen 127.0.0.1:0` (an
  ephemeral port); a `file:DIR` lease gets a fresh temporary DIR;
- `curl ...` lines run as written, their URLs pointed at that port (they must
  name the default address, which `--help` must show);
- `# ` comment lines right after a curl line are its documented output, one
  line each: `/v1/ids` and Leaf's ID route must match in shape (the same
  JSON keys, as many IDs, every ID a decimal), every other route exactly.

The server is stopped with SIGTERM and must exit 0. Every wait is bounded.
"""
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
START = "<!-- server-example:start -->"
END = "<!-- server-example:end -->"
TIMEOUT = 30


def fail(where, message):
    sys.exit(f"{where}: {message}")


def example(path):
    """The lines of the marked ```sh block of `path`."""
    text = path.read_text()
    if text.count(START) != 1 or text.count(END) != 1:
        fail(path, f"needs exactly one {START} ... {END}")
    inner = text.split(START, 1)[1].split(END, 1)[0]
    m = re.search(r"```sh\n(.*?)```", inner, re.S)
    if not m:
        fail(path, "no ```sh block between the markers")
    return m.group(1).splitlines()


def parse(path, lines):
    """(server args, [(curl argv, [expected output lines])])."""
    server, calls = None, []
    for n, line in enumerate(lines, 1):
        where = f"{path} example line {n}"
        if not line.strip() or line.startswith("cargo build"):
            continue
        if line.startswith("# "):
            if not calls:
                fail(where, "an output line before any curl command")
            calls[-1][1].append(line[2:])
            continue
        argv = shlex.split(line)
        if argv[0] == "cargo" and "snowmint-server" in argv and "--" in argv:
            server = argv[argv.index("--") + 1:]
        elif argv[0].endswith("/snowmint-server"):
            server = argv[1:]
        elif argv[0] == "curl":
            if server is None:
                fail(where, "curl before the server is started")
            calls.append((argv, []))
        else:
            fail(where, f"a line this test does not know how to run: {line!r}")
    if server is None or not calls:
        fail(path, "the example must start the server and call it")
    return server, calls


def default_listen(binary):
    out = subprocess.run([binary, "--help"], capture_output=True, text=True,
                         timeout=TIMEOUT, check=True).stdout
    m = re.search(r"--listen <ADDR>\s+The address to listen on \[default: ([^\]]+)\]", out)
    if not m:
        fail(binary, "--help does not show --listen's default")
    return m.group(1)


def same_shape(doc, got, where):
    """`got` has `doc`'s shape: keys, lengths, decimal IDs."""
    if isinstance(doc, dict):
        if not isinstance(got, dict) or list(doc) != list(got):
            fail(where, f"keys {list(doc)} documented, got {got}")
        for k in doc:
            same_shape(doc[k], got[k], f"{where}.{k}")
    elif isinstance(doc, list):
        if not isinstance(got, list) or len(doc) != len(got):
            fail(where, f"{len(doc)} items documented, got {got}")
        for i, (d, g) in enumerate(zip(doc, got)):
            same_shape(d, g, f"{where}[{i}]")
    elif isinstance(doc, str) and doc.isdigit():
        if not (isinstance(got, str) and got.isdigit() and len(got) <= 20):
            fail(where, f"a decimal ID documented, got {got!r}")
    elif doc != got:
        fail(where, f"{doc!r} documented, got {got!r}")


def check_output(where, url, doc, out):
    got = out.splitlines()
    if len(got) != len(doc):
        fail(where, f"{len(doc)} output line(s) documented, got {out!r}")
    generated = re.search(r"/(v1/ids|api/snowflake/get/)", url)
    for d, g in zip(doc, got):
        if not generated:
            if d != g:
                fail(where, f"documented {d!r}, got {g!r}")
        elif d.startswith(("{", "[")):
            same_shape(json.loads(d), json.loads(g), where)
        else:
            same_shape(d, g, where)


def run(binary, path):
    server, calls = parse(path, example(path))
    default = default_listen(binary)
    with tempfile.TemporaryDirectory(prefix="snowmint-readme-") as work:
        args = []
        for i, a in enumerate(server):
            m = re.match(r"file:([^?]+)(\?.*)?$", a)
            if m:
                a = f"file:{work}/leases{i}{m.group(2) or ''}"
            args.append(a)
        log = open(Path(work) / "server.log", "w+")
        proc = subprocess.Popen([binary, *args, "--listen", "127.0.0.1:0"],
                                stdout=subprocess.DEVNULL, stderr=log)
        try:
            addr = None
            deadline = time.monotonic() + TIMEOUT
            while addr is None:
                log.seek(0)
                m = re.search(r' start listen="([^"]+)"', log.read())
                if m:
                    addr = m.group(1)
                elif proc.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    fail(path, f"the server did not start: {log.read()}")
                else:
                    time.sleep(0.1)
            for argv, doc in calls:
                where = f"{path}: {shlex.join(argv)}"
                urls = [a for a in argv if a.startswith("http")]
                if len(urls) != 1 or not urls[0].startswith(f"http://{default}/"):
                    fail(where, f"the URL must be on the default address {default}")
                argv = [a.replace(f"http://{default}/", f"http://{addr}/") for a in argv]
                r = subprocess.run([*argv, "--max-time", "10"], capture_output=True,
                                   text=True, timeout=TIMEOUT)
                if r.returncode != 0:
                    fail(where, f"curl exited {r.returncode}: {r.stderr}")
                check_output(where, urls[0], doc, r.stdout)
                print(f"ok: {shlex.join(argv)}")
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                code = proc.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                raise
            log.close()
        if code != 0:
            fail(path, f"the server exited {code} after SIGTERM")
    print(f"{path.relative_to(ROOT)}: the service example runs as documented")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    files = sys.argv[2:] or ["README.md", "server/README.md"]
    for f in files:
        run(binary, ROOT / f)


if __name__ == "__main__":
    main()
