#!/usr/bin/env bash
# gRPC throughput of snowmint-server: unary NextIds(count=1) calls/s against
# the same tonic stack answering a constant message (`grpc-load constant`),
# alternated twice, and NextIds(count=4096) IDs/s against the twitter layout's
# limit for one generator (4,096 IDs per millisecond: 4,096,000/s). The load
# client shares the machine's cores with the server; both are built with the
# test command's `ci` profile.
#
#   bash bench/grpc/run.sh            # GRPC_BENCH_SECONDS=5 by default
source "$(dirname "$0")/../lib.sh"
cd "$ROOT"

SECONDS_EACH=${GRPC_BENCH_SECONDS:-5}
# Two builds, so that neither's features change the other's dependencies;
# the server without the network stores' clients (not used here).
cargo build --quiet --profile ci -p snowmint-server --no-default-features
cargo build --quiet --profile ci -p snowmint-grpc-bench
LOAD="$ROOT/target/ci/grpc-load"
dir=$(mktemp -d /tmp/snowmint-grpc-bench-XXXXXX)
PIDS=()
stop_all() {
  local pid
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap stop_all EXIT

# wait_for FILE PATTERN: the address the process wrote (bounded).
wait_for() {
  local addr
  for _ in $(seq 1 300); do
    addr=$(sed -n "$2" "$1")
    if [ -n "$addr" ]; then echo "$addr"; return 0; fi
    sleep 0.1
  done
  echo "no address in $1" >&2
  cat "$1" >&2
  return 1
}

"$ROOT/target/ci/snowmint-server" --listen 127.0.0.1:0 --preset twitter \
  --node datacenter=1 --node worker=1 --max-count 4096 2> "$dir/server.log" &
PIDS+=("$!")
SERVER=$(wait_for "$dir/server.log" 's/.* start listen="\([^"]*\)".*/\1/p')
"$LOAD" constant > "$dir/constant.log" &
PIDS+=("$!")
CONSTANT=$(wait_for "$dir/constant.log" 's/^listen //p')

say "NextIds(count=1), unary: snowmint-server ($SERVER) and the constant server ($CONSTANT), alternated"
for _ in 1 2; do
  echo -n "snowmint-server: "; "$LOAD" "$SERVER" --count 1 --seconds "$SECONDS_EACH"
  echo -n "constant:        "; "$LOAD" "$CONSTANT" --count 1 --seconds "$SECONDS_EACH"
done
say "NextIds(count=4096): IDs/s against the twitter layout's 4,096,000/s for one generator"
for _ in 1 2; do
  echo -n "snowmint-server: "; "$LOAD" "$SERVER" --count 4096 --seconds "$SECONDS_EACH"
done
echo -n "constant:        "; "$LOAD" "$CONSTANT" --count 4096 --seconds "$SECONDS_EACH"
