# shellcheck shell=bash
# Redis for the lease store tests: sourced by scripts/test-stores, which
# provides say, ensure_apt, RUN_DIR and STOPS.
#
# start_redis uses the server on 127.0.0.1:${SNOWMINT_REDIS_PORT:-6379} when it
# answers PING without a password (DB 0; every test works in namespaces of its
# own run, pid and time, and deletes their keys). Otherwise it installs
# Debian's redis-server if missing and starts a throwaway one (no persistence)
# on a free port under $RUN_DIR. Exports SNOWMINT_TEST_REDIS_URL.
# SNOWMINT_REDIS_PORT=<a port where nothing runs> tests the throwaway path.
#
# Either way it then vouches for the server as `snowmint lease init` does
# (redis_vouch), so the new spaces of the tests start without a fence (after
# the init's own fence, once per server start; STORES_DEFER_FENCE=1 leaves
# that wait to the caller's stores_fence_wait).

# redis_answers PORT: a Redis on 127.0.0.1:PORT answers PING with PONG.
redis_answers() {
  # The port is the child shell's $1: single quotes.
  # shellcheck disable=SC2016
  timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf "PING\r\n" >&3 &&
    IFS= read -r -t 2 reply <&3 && [[ $reply == "+PONG"* ]]' _ "$1" 2>/dev/null
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

# redis_vouch PORT fresh|existing: writes the init key `snowmint lease init`
# writes (lease/src/redis_store/scripts.rs, INIT: hash server, fence_ms;
# server = run_id/master_replid), unless it already names this server, and
# waits until the server's clock passed its fence. A server this script just
# started never served a holder: fence 0. Another gets the fence init gives
# with the default settings (redis_max_window_ms 30,000 + 2 x max_skew_ms
# 5,000 = 40,000 ms: INIT and CLAIM in lease/src/redis_store/scripts.rs),
# waited out once per server start. Spoken over /dev/tcp: redis-cli is not
# needed for a server that already runs.
redis_vouch() {
  local port=$1 kind=$2 lua reply wait_ms
  lua="local run = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
local repl = string.match(redis.call('INFO', 'replication'), 'master_replid:(%x+)')
if not run or not repl then return -1 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local i = redis.call('HMGET', KEYS[1], 'server', 'fence_ms')
local fence = tonumber(i[2])
if i[1] ~= run .. '/' .. repl or not fence then
  fence = 0
  if ARGV[1] ~= 'fresh' then fence = now + 40000 end
  redis.call('HSET', KEYS[1], 'server', run .. '/' .. repl, 'fence_ms', string.format('%.0f', fence))
end
return math.max(0, fence - now)"
  # The inner script's $1 and $@ are its own arguments (single quotes on purpose).
  # shellcheck disable=SC2016
  reply=$(timeout 5 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    shift
    out="*$#\r\n"
    for a in "$@"; do out+="\$${#a}\r\n$a\r\n"; done
    printf "%b" "$out" >&3 && IFS= read -r -t 4 reply <&3 && printf "%s" "$reply"' \
    _ "$port" EVAL "$lua" 1 snowmint:lease:init "$kind") || true
  wait_ms=${reply#:}
  wait_ms=${wait_ms%$'\r'}
  if ! [[ $wait_ms =~ ^[0-9]+$ ]]; then
    echo "redis: could not write the init key on 127.0.0.1:$port (reply '$reply')" >&2
    exit 1
  fi
  if ((wait_ms > 0)); then
    # STORES_READY_AT: when the fence has passed (epoch seconds); with
    # STORES_DEFER_FENCE=1 the caller waits for it later (stores_fence_wait,
    # scripts/lib.sh), after its builds, instead of here.
    STORES_READY_AT=$(($(date +%s) + (wait_ms + 999) / 1000))
    export STORES_READY_AT
    if [ "${STORES_DEFER_FENCE:-0}" = 1 ]; then
      say "redis: lease init on 127.0.0.1:$port: new spaces fenced for $wait_ms ms more; waited out before the tests run"
    else
      say "redis: lease init on 127.0.0.1:$port: new spaces fenced for $wait_ms ms more; waiting"
      stores_fence_wait
    fi
  fi
}

start_redis() {
  local port=${SNOWMINT_REDIS_PORT:-6379}
  if redis_answers "$port"; then
    say "redis: using the server on 127.0.0.1:$port (DB 0, namespaces of this run)"
    export SNOWMINT_TEST_REDIS_URL="redis://127.0.0.1:$port/0"
    redis_vouch "$port" existing
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
      p=$(free_port) || break
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
    redis_vouch "$p" fresh
  fi
  if ! command -v redis-server >/dev/null 2>&1; then
    say "redis: no redis-server binary: the password test (authentication_problems_are_named) skips"
  fi
}
