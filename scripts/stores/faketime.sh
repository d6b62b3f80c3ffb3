# shellcheck shell=bash
# A throwaway PostgreSQL server and a throwaway Redis whose clocks the fault
# tests step (lease/tests/faults.rs, store_clock_steps), sourced by
# scripts/test-stores after use_stores (lib.sh: free_port; the Redis half uses
# redis.sh's helpers).
# The PostgreSQL server runs under libfaketime (Debian's libfaketime, installed when missing) reading its offset
# from a file on every clock call (FAKETIME_TIMESTAMP_FILE, FAKETIME_NO_CACHE=1;
# "+0", "+3", "-2.5": seconds, fractions allowed), which the test rewrites to
# step the store's wall clock forward and back; its monotonic clocks stay real
# (FAKETIME_DONT_FAKE_MONOTONIC=1), so its timeouts are not disturbed. A shared
# server's clock is never touched.
#
# start_faketime_postgres exports SNOWMINT_TEST_POSTGRES_FAKETIME_URL and
# SNOWMINT_TEST_POSTGRES_FAKETIME_FILE.
#
# Redis runs under scripts/stores/clockshift.c instead, built with gcc into the
# run folder: redis-server 7.0.15 does not start under Debian's libfaketime
# 0.9.10 ("libfaketime: Cannot recover from unexpected recursive calls to
# clock_gettime()": its allocator, jemalloc, reads the clock before
# libfaketime has looked up the real clock_gettime with dlsym). Tried
# (2026-11-25), each with FAKETIME_TIMESTAMP_FILE and FAKETIME_NO_CACHE=1, and
# FAKETIME=+3 alone: FAKETIME_DONT_FAKE_MONOTONIC=1; plus DONT_FAKE_MONOTONIC=1;
# plus FAKETIME_DISABLE_SHM=1; the single-threaded libfaketime.so.1;
# libjemalloc.so.2 preloaded before libfaketimeMT;
# MALLOC_CONF=background_thread:false,dirty_decay_ms:-1,muzzy_decay_ms:-1:
# the server never accepted a connection. clockshift.so reads the real clock
# with the clock_gettime system call, so it has nothing to look up; it reads
# the same offset format from SNOWMINT_CLOCKSHIFT_FILE (at most once a millisecond).
# start_clockshift_redis (after redis.sh: its redis_answers, redis_stop,
# redis_vouch) exports SNOWMINT_TEST_REDIS_CLOCK_URL and
# SNOWMINT_TEST_REDIS_CLOCK_FILE.

# The multi-threaded preload library.
faketime_lib() {
  local lib
  # A glob over Debian's multiarch folders (plain names); none: empty.
  # shellcheck disable=SC2012
  lib=$(ls /usr/lib/*/faketime/libfaketimeMT.so.1 2>/dev/null | head -n 1)
  if [ -z "$lib" ]; then
    echo "faketime: no libfaketimeMT.so.1 under /usr/lib/*/faketime" >&2
    return 1
  fi
  echo "$lib"
}

# faketime_env DIR: the environment of a server whose clock DIR/offset moves.
faketime_env() {
  echo "LD_PRELOAD=$FAKETIME_LIB FAKETIME_TIMESTAMP_FILE=$1/offset FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1"
}

start_faketime_postgres() {
  # Outside $(...): ensure_apt reports on stdout.
  ensure_apt libfaketime postgresql
  FAKETIME_LIB=$(faketime_lib) || exit 1
  local bin dir="$RUN_DIR/postgres-faketime" as=() port
  # Debian's version folders (15, 16...), as scripts/stores/postgres.sh.
  # shellcheck disable=SC2012
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  mkdir -p "$dir"
  echo "+0" >"$dir/offset"
  chmod 644 "$dir/offset"
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres:postgres "$dir"
    as=(runuser -u postgres --)
  fi
  port=$(free_port) || exit 1
  "${as[@]}" "$bin/initdb" -D "$dir/data" --auth=trust -U postgres -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 || {
    cat "$dir/initdb.log" >&2
    echo "faketime: initdb failed" >&2
    exit 1
  }
  STOPS+=("${as[*]} $bin/pg_ctl -D $dir/data -m fast -w -t 30 stop >/dev/null 2>&1")
  # shellcheck disable=SC2046 # the environment is words on purpose
  "${as[@]}" env $(faketime_env "$dir") "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
    -o "-k $dir -p $port -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null || {
    cat "$dir/server.log" >&2
    echo "faketime: the PostgreSQL server under libfaketime did not start" >&2
    exit 1
  }
  "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc 'CREATE DATABASE test' >/dev/null
  say "faketime: PostgreSQL on 127.0.0.1:$port, clock offset in $dir/offset"
  export SNOWMINT_TEST_POSTGRES_FAKETIME_URL="postgres://postgres@127.0.0.1:$port/test"
  export SNOWMINT_TEST_POSTGRES_FAKETIME_FILE="$dir/offset"
}

start_clockshift_redis() {
  command -v gcc >/dev/null 2>&1 || ensure_apt gcc
  command -v redis-server >/dev/null 2>&1 || ensure_apt redis-server
  local dir="$RUN_DIR/redis-clockshift" p pid deadline ok=""
  mkdir -p "$dir"
  gcc -shared -fPIC -O2 -Wall -Werror -o "$dir/clockshift.so" "$ROOT/scripts/stores/clockshift.c" || {
    echo "clockshift: gcc could not build scripts/stores/clockshift.c" >&2
    exit 1
  }
  echo "+0" >"$dir/offset"
  p=$(free_port) || exit 1
  LD_PRELOAD="$dir/clockshift.so" SNOWMINT_CLOCKSHIFT_FILE="$dir/offset" \
    redis-server --port "$p" --bind 127.0.0.1 --save '' --appendonly no \
    --daemonize no --dir "$dir" --logfile "$dir/redis.log" &
  pid=$!
  STOPS+=("redis_stop $pid")
  deadline=$((SECONDS + 15))
  while ((SECONDS < deadline)) && kill -0 "$pid" 2>/dev/null; do
    if redis_answers "$p"; then
      ok=1
      break
    fi
    sleep 0.05
  done
  if [ -z "$ok" ]; then
    tail -n 20 "$dir/redis.log" >&2 2>/dev/null || true
    echo "clockshift: the redis-server under clockshift.so did not answer on 127.0.0.1:$p" >&2
    exit 1
  fi
  redis_vouch "$p" fresh
  say "clockshift: Redis on 127.0.0.1:$p, clock offset in $dir/offset"
  export SNOWMINT_TEST_REDIS_CLOCK_URL="redis://127.0.0.1:$p/0"
  export SNOWMINT_TEST_REDIS_CLOCK_FILE="$dir/offset"
}
