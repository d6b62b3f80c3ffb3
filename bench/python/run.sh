#!/usr/bin/env bash
# Benchmarks of the Python package against its peers (not part of scripts/test).
#
#   bash bench/python/run.sh [--repeats N] [--quick]
#
# Builds the wheel, installs it with pinned peers into .cache/py-bench-venv,
# runs bench/python/bench.py and writes the table to bench/out/python.md.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "$ROOT"

export CARGO_TARGET_DIR="$ROOT/target/python"
VENV="$ROOT/.cache/py-bench-venv"
DIST="$CARGO_TARGET_DIR/bench-dist"

ensure_venv
rm -rf "$DIST"
"$ROOT/.venv/bin/maturin" build --quiet --release -m bindings-python/Cargo.toml --out "$DIST"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$DIST"/snowmint-*.whl
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
  "snowflake-id==1.0.2" "sonyflake-py==1.3.0" "snowflake-id-toolkit==0.6.0" "uuid-utils==1.2.0" "hashids==1.3.1" \
  "typing-extensions>=4.12"  # snowflake-id-toolkit imports it without declaring it

mkdir -p bench/out
"$VENV/bin/python" bench/python/bench.py "$@" | tee bench/out/python.md
