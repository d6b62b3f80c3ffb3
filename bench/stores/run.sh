#!/usr/bin/env bash
# The lease on every store: the file store and PostgreSQL, MariaDB, Redis,
# etcd and ZooKeeper (the servers already running, else throwaway ones: scripts/lib.sh
# use_stores). `next_id` with a lease held against without, claim, release and
# renewal latency, and many holders renewing at once with the server's CPU
# time per renewal (lease/examples/lease-bench.rs says how it measures).
#
#   bash bench/stores/run.sh            # LEASE_BENCH_HOLDERS=48 by default
source "$(dirname "$0")/../../scripts/lib.sh"
cd "$ROOT"

cargo build --quiet --release -p snowmint-lease --features stores --example lease-bench
STORES_EXTRA=0 use_stores postgres mysql redis etcd zookeeper
dir=$(mktemp -d /tmp/snowmint-lease-bench-XXXXXX)
CLEANUPS+=("rm -rf '$dir'")
say "lease-bench: file store, PostgreSQL, MariaDB, Redis, etcd, ZooKeeper"
"$ROOT/target/release/examples/lease-bench" "file:$dir" \
  "$SNOWMINT_TEST_POSTGRES_URL" "$SNOWMINT_TEST_MYSQL_URL" \
  "$SNOWMINT_TEST_REDIS_URL" "$SNOWMINT_TEST_ETCD_URL" "$SNOWMINT_TEST_ZOOKEEPER_URL"
