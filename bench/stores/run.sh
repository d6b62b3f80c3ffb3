#!/usr/bin/env bash
# The lease on every store: the file store and PostgreSQL, MariaDB, Redis,
# etcd and ZooKeeper (the servers already running, else throwaway ones:
# `cargo xtask stores up`). `next_id` with a lease held against without,
# claim, release and renewal latency, and many holders renewing at once with
# the server's CPU time per renewal (lease/examples/lease-bench.rs says how it
# measures).
#
#   bash bench/stores/run.sh            # LEASE_BENCH_HOLDERS=48 by default
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo build --quiet --release -p snowmint-lease --features stores --example lease-bench
# The stores stay up while `stores up` reads its standard input (this
# script's coprocess pipe): its `export` lines are read first, and closing
# the pipe at the end stops what it started.
coproc STORES { cargo xtask stores up postgres mysql redis etcd zookeeper; }
while IFS= read -r line <&"${STORES[0]}"; do
  case $line in
    "export SNOWMINT_TEST_"*) eval "$line" ;;
    "# the stores are up"*) break ;;
  esac
done
[ -n "${SNOWMINT_TEST_ZOOKEEPER_URL:-}" ] || { echo "the stores did not come up" >&2; exit 1; }
dir=$(mktemp -d /tmp/snowmint-lease-bench-XXXXXX)
# shellcheck disable=SC2153 # STORES_PID is set by coproc
stores_pid=$STORES_PID
trap 'rm -rf "$dir"; eval "exec ${STORES[1]}>&-"; wait "$stores_pid" || true' EXIT
printf '\n==> lease-bench: file store, PostgreSQL, MariaDB, Redis, etcd, ZooKeeper\n'
target/release/examples/lease-bench "file:$dir" \
  "$SNOWMINT_TEST_POSTGRES_URL" "$SNOWMINT_TEST_MYSQL_URL" \
  "$SNOWMINT_TEST_REDIS_URL" "$SNOWMINT_TEST_ETCD_URL" "$SNOWMINT_TEST_ZOOKEEPER_URL"
