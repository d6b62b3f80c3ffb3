#!/usr/bin/env bash
# The C benchmark, one command:  bash bench/c/run.sh [REPEATS] [CALLS]
# Builds libsnowmint.a (release), compiles bench.c (-O2) against it, runs it,
# and keeps the output in bench/out/c.md.
source "$(dirname "$0")/../lib.sh"
cd "$ROOT"
export CARGO_TARGET_DIR="$ROOT/target/c"
cargo build --quiet --release -p snowmint-c
mkdir -p bench/out
cc -std=c11 -O2 -Wall -Wextra -Werror -Ibindings-c/include bench/c/bench.c \
  "$CARGO_TARGET_DIR/release/libsnowmint.a" -lgcc_s -lutil -lrt -lpthread -lm -ldl \
  -o "$CARGO_TARGET_DIR/bench-c"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $(uname -m), $(cc --version | head -1)"
  echo "command: bash bench/c/run.sh $*"
  "$CARGO_TARGET_DIR/bench-c" "$@"
} | tee bench/out/c.md
