#!/usr/bin/env bash
# get_id calls/s over Thrift (bench/src/bin/thrift_load.rs, 64 connections)
# against the HTTP Leaf endpoint's requests/s (wrk, 64 connections) on one
# snowmint-server, alternated twice in the same run. Builds with the ci
# profile and file-lease-only features; installs Debian's wrk if missing.
#
#   bash bench/thrift/run.sh [SECONDS=5]
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "$ROOT" || exit 1
SECS=${1:-5}

ensure_apt wrk
cargo build --quiet --profile ci -p snowmint-server --no-default-features
cargo build --quiet --profile ci -p snowmint-bench --bin thrift_load

LOG=$(mktemp "${TMPDIR:-/tmp}/snowmint-bench-thrift.XXXXXX")
target/ci/snowmint-server --listen 127.0.0.1:0 --thrift 127.0.0.1:0 --preset leaf --node worker=1 2> "$LOG" &
PID=$!
trap 'kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; rm -f "$LOG"' EXIT
HTTP='' THRIFT=''
for _ in $(seq 1 300); do
  HTTP=$(sed -n 's/.* start listen="\([^"]*\)".*/\1/p' "$LOG")
  [ -n "$HTTP" ] && break
  sleep 0.1
done
THRIFT=$(sed -n 's/.* thrift_start listen="\([^"]*\)".*/\1/p' "$LOG")
if [ -z "$HTTP" ] || [ -z "$THRIFT" ]; then cat "$LOG"; exit 1; fi

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in 1 2; do
  say "round $round"
  target/ci/thrift_load "$THRIFT" 64 "$SECS"
  # 64 wrk threads like the load client's 64: on a loaded machine a single
  # wrk thread would get less CPU than 64 client threads.
  wrk -t64 -c64 -d"${SECS}s" "http://$HTTP/api/snowflake/get/x" | grep -E "Requests/sec|Latency|Non-2xx"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
