"""The README's "Leases across machines" examples, run against the real stores.

Run by cargo xtask test interop (after the stores it started (xtask/src/stores/) exported the
SNOWMINT_TEST_<STORE>_URL variables):

    python tests/lease/readme_stores.py --node-project DIR --cli PATH --cc CC --prefix DIR

Each example's placeholder server (`db.internal`, `cache.internal`...) is
replaced by this run's server of the same kind, and the block runs as a user
would paste it: the shell line with the CLI, the Python lines with the
installed package, the JavaScript lines in the npm consumer project, the C
lines inside a small main() linked against the installed C library. Each must
lease a worker and issue an ID carrying it.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def section():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    body = text.split("## Leases across machines\n", 1)[1].split("\n## ", 1)[0]
    return {lang: code for lang, code in re.findall(r"```(\w+)\n(.*?)```", body, re.S)}


def swap(code, kind, env):
    """The README's URL of store `kind` (up to the query) -> this run's server."""
    url = os.environ[env]
    pattern = {"postgres": r"postgres://[^?']+", "mysql": r"mysql://[^?\"]+",
               "redis": r"redis://[^?\"]+", "etcd": r"etcd://[^?']+",
               "zookeeper": r"zookeeper://[^?']+"}[kind]
    assert re.search(pattern, code), f"no {kind} URL in {code!r}"
    return re.sub(pattern, url, code, count=1)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, **kw)
    assert r.returncode == 0, f"{cmd[:3]}: exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--node-project", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--prefix", required=True, help="an installed C library (include/, lib/)")
    args = ap.parse_args()
    blocks = section()
    assert set(blocks) == {"sh", "bash", "python", "js", "c"}, sorted(blocks)

    for lang, kind in (("sh", "postgres"), ("bash", "zookeeper")):
        sh = swap(blocks[lang], kind, f"SNOWMINT_TEST_{kind.upper()}_URL")
        sh = "\n".join(line.replace("snowmint ", f"'{args.cli}' ", 1) for line in sh.splitlines()
                       if line and not line.startswith("#"))
        ids = run(["bash", "-euo", "pipefail", "-c", sh]).split()
        assert len(ids) == 3 and len(set(ids)) == 3, ids
        print(f"{lang} ({kind}): {ids}")

    py = swap(blocks["python"], "redis", "SNOWMINT_TEST_REDIS_URL")
    py = ("import snowmint\n" + py +
          "w = generator.nodes['worker']\nassert (generator.next_id() >> 12) & 1023 == w\n"
          "print(generator.lease['store'], w)\ngenerator.close()\n")
    print("python (redis):", run([sys.executable, "-c", py]).strip())

    js = swap(blocks["js"], "etcd", "SNOWMINT_TEST_ETCD_URL")
    js = ("const { Generator } = require('snowmint')\n" + js +
          "const w = generator.nodes.worker\n"
          "if (Number((generator.nextId() >> 12n) & 1023n) !== w) throw new Error('worker')\n"
          "console.log(generator.lease.store, w)\ngenerator.close()\n")
    print("js (etcd):", run(["node", "-e", js], cwd=args.node_project).strip())

    c = swap(blocks["c"], "mysql", "SNOWMINT_TEST_MYSQL_URL")
    program = ('#include <inttypes.h>\n#include <stdio.h>\n#include <snowmint.h>\nint main(void) {\n'
               '  const snowmint_layout *leaf = NULL;\n'
               '  if (snowmint_layout_preset("leaf", &leaf) != SNOWMINT_STATUS_OK) return 2;\n'
               + c +
               '  if (s != SNOWMINT_STATUS_OK) {\n'
               '    char msg[512] = "";\n    size_t n = 0;\n'
               '    snowmint_last_error_message(msg, sizeof msg, &n);\n'
               '    fprintf(stderr, "%s\\n", msg);\n    return 1;\n  }\n'
               '  uint64_t id = 0;\n'
               '  if (snowmint_generator_next_id(gen, &id) != SNOWMINT_STATUS_OK) return 3;\n'
               '  printf("%" PRIu64 "\\n", id);\n'
               '  snowmint_generator_free(gen);\n  snowmint_layout_free(leaf);\n  return 0;\n}\n')
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "stores.c"), os.path.join(d, "stores")
        open(src, "w").write(program)
        run([args.cc, "-std=c11", "-Wall", "-Werror", src, f"-I{args.prefix}/include",
             f"{args.prefix}/lib/libsnowmint.a", "-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl", "-o", exe])
        print("c (mysql):", run([exe]).strip())


if __name__ == "__main__":
    main()
