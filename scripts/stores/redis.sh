# shellcheck shell=bash
# Redis for the lease store tests: sourced by scripts/test-stores, which
# provides say, ensure_apt, RUN_DIR and CLEANUPS.
#
# start_redis uses the server on 127.0.0.1:${SNOWMINT_REDIS_PORT:-6379} when it
# answers PING without a password (DB 0; every test works in namespaces of its
# own run, pid and time, and deletes their keys). Otherwise it installs
# Debian's redis-server if missing and starts a throwaway one (no persistence)
# on a free port under $RUN_DIR. Exports SNOWMINT_TEST_REDIS_URL.
# SNOWMINT_REDIS_PORT=<a port where nothing runs> tests the throwaway path.

# redis_answers PORT: a Redis on 127.0.0.1:PORT answers PING with PONG.
redis_answers() {
  # The port is the child shell's $1: single quotes.
  # shellcheck disable=SC2016
  timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf "PING\r\n" >&3 &&
    IFS= read -r -t 2 reply <&3 && [[ $reply == "+PONG"* ]]' _ "$1" 2>/dev/null
}

# redis_free_port: a port on 127.0.0.1 where nothing accepts connections.
redis_free_port() {
  local p i
  for ((i = 0; i < 50; i++)); do
    p=$((20000 + RANDOM % 40000))
    # shellcheck disable=SC2016
    if ! timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$p" 2>/dev/null; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

# redis_stop PID: SIGTERM, then SIGKILL after 5 s.
redis_stop() {
  local i
  kill -TERM "$1" 2>/dev/null || return 0
  for ((i = 0; i < 100; i++)); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.05
  done
  kill -KILL "$1" 2>/dev/null || true
}

start_redis() {
  local port=${SNOWMINT_REDIS_PORT:-6379}
  if redis_answers "$port"; then
    say "redis: using the server on 127.0.0.1:$port (DB 0, namespaces of this run)"
    export SNOWMINT_TEST_REDIS_URL="redis://127.0.0.1:$port/0"
  else
    say "redis: nothing answers on 127.0.0.1:$port; starting a throwaway redis-server"
    command -v redis-server >/dev/null 2>&1 || ensure_apt redis-server
    if ! command -v redis-server >/dev/null 2>&1; then
      echo "redis: no server on 127.0.0.1:$port and redis-server could not be installed" >&2
      exit 1
    fi
    local dir="$RUN_DIR/redis" p pid try deadline ok=""
    mkdir -p "$dir"
    for ((try = 0; try < 3; try++)); do
      p=$(redis_free_port) || break
      redis-server --port "$p" --bind 127.0.0.1 --save '' --appendonly no \
        --daemonize no --dir "$dir" --logfile "$dir/redis.log" &
      pid=$!
      CLEANUPS+=("redis_stop $pid")
      deadline=$((SECONDS + 15))
      while ((SECONDS < deadline)) && kill -0 "$pid" 2>/dev/null; do
        if redis_answers "$p"; then
          ok=1
          break
        fi
        sleep 0.05
      done
      [ -n "$ok" ] && break
      redis_stop "$pid" # port taken meanwhile, or too slow: another port
    done
    if [ -z "$ok" ]; then
      echo "redis: a throwaway redis-server did not answer (log: $dir/redis.log)" >&2
      tail -n 20 "$dir/redis.log" >&2 2>/dev/null || true
      exit 1
    fi
    say "redis: throwaway redis-server (pid $pid) on 127.0.0.1:$p"
    export SNOWMINT_TEST_REDIS_URL="redis://127.0.0.1:$p/0"
  fi
  if ! command -v redis-server >/dev/null 2>&1; then
    say "redis: no redis-server binary: the password test (authentication_problems_are_named) skips"
  fi
}
