# shellcheck shell=bash
# etcd v3 for the lease store tests (sourced by scripts/test-stores, which
# provides say, ensure_apt, RUN_DIR and STOPS).
#
# start_etcd exports
#   SNOWMINT_TEST_ETCD_URL       an etcd without authentication: the one at
#                                127.0.0.1:${SNOWMINT_ETCD_PORT:-2379} if it answers
#                                (the tests use namespaces of their own run),
#                                else a throwaway member started here;
#   SNOWMINT_TEST_ETCD_AUTH_URL  a throwaway member with authentication enabled
#                                (user root, a random password): never a shared
#                                server, whose clients would all need credentials;
#   SNOWMINT_TEST_ETCD_RESTART_URL, SNOWMINT_TEST_ETCD_RESTART_CMD
#                                a throwaway member for the restart test, and a
#                                command that restarts it with its data dir kept;
#   SNOWMINT_TEST_ETCD_CLUSTER_URL, SNOWMINT_TEST_ETCD_CLUSTER_FIRST_PID_FILE
#                                a throwaway 3-member cluster (the URL lists the
#                                three), and the file holding the first member's
#                                pid, which the cluster test kills.
# Throwaway members run from Debian's etcd-server (installed if missing), on
# free 127.0.0.1 ports, with their data under $RUN_DIR; STOPS stops them.

# _etcd_start NAME: starts a member with data in $RUN_DIR/NAME, waits (at most
# 30 s) for /health, adds its stop to STOPS, sets _ETCD_PORT to its client
# port. (Not in a subshell: STOPS must see the entry.)
_etcd_start() {
  local name=$1 dir="$RUN_DIR/$1" try client peer pid i cmd
  mkdir -p "$dir"
  STOPS+=("_etcd_stop \"\$(cat '$dir/pid' 2>/dev/null)\"")
  for try in 1 2 3; do
    client=$(free_port) && peer=$(free_port) || return 1
    cmd=(etcd --name "$name" --data-dir "$dir/data"
      --listen-client-urls "http://127.0.0.1:$client"
      --advertise-client-urls "http://127.0.0.1:$client"
      --listen-peer-urls "http://127.0.0.1:$peer"
      --initial-advertise-peer-urls "http://127.0.0.1:$peer"
      --initial-cluster "$name=http://127.0.0.1:$peer")
    "${cmd[@]}" >"$dir/etcd.log" 2>&1 &
    pid=$!
    echo "$pid" >"$dir/pid"
    for ((i = 0; i < 300; i++)); do
      if curl -sf --max-time 1 "http://127.0.0.1:$client/health" 2>/dev/null | grep -q '"health":"true"'; then
        _ETCD_PORT=$client
        _etcd_restart_script "$dir" "$client" "${cmd[@]}"
        return 0
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    # Died (a port taken meanwhile) or never healthy: stop it, try new ports.
    _etcd_stop "$pid"
    echo "etcd ($name) did not start on 127.0.0.1:$client (try $try); its log:" >&2
    tail -n 5 "$dir/etcd.log" >&2 || true
    rm -rf "$dir/data"
  done
  return 1
}

# _etcd_restart_script DIR PORT COMMAND...: writes DIR/restart, which stops
# the member (its pid in DIR/pid), starts COMMAND again on the same data and
# ports, and waits (at most 30 s) for /health.
_etcd_restart_script() {
  local dir=$1 client=$2
  shift 2
  {
    echo '#!/usr/bin/env bash'
    echo "pid=\$(cat '$dir/pid')"
    # The restart script's own variables, not this one's: single quotes.
    # shellcheck disable=SC2016
    echo 'kill -TERM "$pid" 2>/dev/null'
    # shellcheck disable=SC2016
    echo 'for ((i = 0; i < 200; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done'
    # shellcheck disable=SC2016
    echo 'kill -KILL "$pid" 2>/dev/null'
    printf '%q ' "$@"
    echo ">>'$dir/etcd.log' 2>&1 </dev/null &"
    echo "echo \$! >'$dir/pid'"
    echo 'for ((i = 0; i < 300; i++)); do'
    echo "  curl -sf --max-time 1 'http://127.0.0.1:$client/health' 2>/dev/null | grep -q '\"health\":\"true\"' && exit 0"
    echo '  sleep 0.1'
    echo 'done'
    echo "echo 'etcd: the member in $dir did not come back within 30 s' >&2"
    echo 'exit 1'
  } >"$dir/restart"
  chmod +x "$dir/restart"
}

# _etcd_cluster : a throwaway cluster of 3 members on 127.0.0.1 (data in
# $RUN_DIR/etcd-cluster-N), waits (at most 30 s) until every member reports
# healthy, adds their stop to STOPS; sets _ETCD_CLUSTER_CLIENTS to their
# client ports and writes each member's pid to $RUN_DIR/etcd-cluster-N/pid.
# Three tries, each on new ports (one taken between the probe and etcd's
# bind fails that member), as _etcd_start.
_etcd_cluster() {
  local n try peers clients pids initial dir ok end token
  STOPS+=(_etcd_cluster_stop)
  for try in 1 2 3; do
    peers=() clients=() pids=() initial="" token="snowmint-$RANDOM$RANDOM"
    for n in 1 2 3; do
      clients+=("$(free_port)") && peers+=("$(free_port)") || return 1
      initial+="${initial:+,}m$n=http://127.0.0.1:${peers[$((n - 1))]}"
    done
    for n in 1 2 3; do
      dir="$RUN_DIR/etcd-cluster-$n"
      mkdir -p "$dir"
      etcd --name "m$n" --data-dir "$dir/data" \
        --listen-client-urls "http://127.0.0.1:${clients[$((n - 1))]}" \
        --advertise-client-urls "http://127.0.0.1:${clients[$((n - 1))]}" \
        --listen-peer-urls "http://127.0.0.1:${peers[$((n - 1))]}" \
        --initial-advertise-peer-urls "http://127.0.0.1:${peers[$((n - 1))]}" \
        --initial-cluster "$initial" --initial-cluster-state new \
        --initial-cluster-token "$token" >"$dir/etcd.log" 2>&1 &
      pids+=("$!")
      echo "$!" >"$dir/pid"
    done
    end=$((SECONDS + 30))
    while ((SECONDS < end)); do
      ok=0
      for n in 1 2 3; do
        curl -sf --max-time 1 "http://127.0.0.1:${clients[$((n - 1))]}/health" 2>/dev/null |
          grep -q '"health":"true"' && ok=$((ok + 1))
      done
      if [ "$ok" -eq 3 ]; then
        _ETCD_CLUSTER_CLIENTS=("${clients[@]}")
        return 0
      fi
      # A member that exited (a port taken) will not come: new ports.
      for n in 1 2 3; do kill -0 "${pids[$((n - 1))]}" 2>/dev/null || break 2; done
      sleep 0.1
    done
    echo "etcd: the 3-member cluster did not become healthy (try $try); the members' logs:" >&2
    for n in 1 2 3; do
      dir="$RUN_DIR/etcd-cluster-$n"
      tail -n 3 "$dir/etcd.log" >&2 || true
      _etcd_stop "$(cat "$dir/pid" 2>/dev/null)"
      rm -rf "$dir/data"
    done
  done
  return 1
}

# _etcd_cluster_stop : the cluster's members, one after another (stopped all
# at once, the leader waits 5 s to hand its leadership to a member that is
# going away, and is killed).
_etcd_cluster_stop() {
  local n
  for n in 1 2 3; do _etcd_stop "$(cat "$RUN_DIR/etcd-cluster-$n/pid" 2>/dev/null)"; done
}

# _etcd_stop PID: SIGTERM, then SIGKILL after 5 s.
_etcd_stop() {
  local pid=$1 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.05
  done
  kill -KILL "$pid" 2>/dev/null || true
}

# _etcd_post PORT PATH JSON: a gateway call that must succeed.
_etcd_post() {
  local out
  out=$(curl -sS --max-time 5 "http://127.0.0.1:$1/v3/$2" -d "$3") || return 1
  if [[ $out == *'"error"'* ]]; then
    echo "etcd /v3/$2: $out" >&2
    return 1
  fi
}

start_etcd() {
  local port=${SNOWMINT_ETCD_PORT:-2379} client auth password
  command -v curl >/dev/null || ensure_apt curl
  if curl -sf --max-time 2 "http://127.0.0.1:$port/health" 2>/dev/null | grep -q '"health":"true"'; then
    say "etcd: using the one at 127.0.0.1:$port (namespaces of this run)"
    client=$port
  fi
  if ! command -v etcd >/dev/null; then
    ensure_apt etcd-server
  fi
  command -v etcd >/dev/null || {
    echo "etcd: no etcd binary, even after installing etcd-server" >&2
    exit 1
  }
  if [ -z "${client:-}" ]; then
    _etcd_start etcd || {
      echo "etcd: nothing answers at 127.0.0.1:$port and no throwaway member could be started" >&2
      exit 1
    }
    client=$_ETCD_PORT
    say "etcd: throwaway member at 127.0.0.1:$client"
  fi
  export SNOWMINT_TEST_ETCD_URL="etcd://127.0.0.1:$client"
  [ "${STORES_EXTRA:-1}" = 1 ] || return 0

  _etcd_start etcd-auth || {
    echo "etcd: the member with authentication could not be started" >&2
    exit 1
  }
  auth=$_ETCD_PORT
  password="pw$RANDOM$RANDOM"
  # Any of the three failing is the error (A && B && C || fail, meant so).
  # shellcheck disable=SC2015
  _etcd_post "$auth" auth/user/add "{\"name\":\"root\",\"password\":\"$password\"}" &&
    _etcd_post "$auth" auth/user/grant "{\"user\":\"root\",\"role\":\"root\"}" &&
    _etcd_post "$auth" auth/enable "{}" || {
    echo "etcd: enabling authentication failed" >&2
    exit 1
  }
  say "etcd: throwaway member with authentication at 127.0.0.1:$auth"
  export SNOWMINT_TEST_ETCD_AUTH_URL="etcd://root:$password@127.0.0.1:$auth"

  _etcd_start etcd-restart || {
    echo "etcd: the member for the restart test could not be started" >&2
    exit 1
  }
  say "etcd: throwaway member for the restart test at 127.0.0.1:$_ETCD_PORT"
  export SNOWMINT_TEST_ETCD_RESTART_URL="etcd://127.0.0.1:$_ETCD_PORT"
  export SNOWMINT_TEST_ETCD_RESTART_CMD="$RUN_DIR/etcd-restart/restart"

  _etcd_cluster || {
    echo "etcd: the 3-member cluster could not be started" >&2
    exit 1
  }
  local c=("${_ETCD_CLUSTER_CLIENTS[@]}")
  say "etcd: throwaway 3-member cluster at 127.0.0.1:${c[0]}, :${c[1]}, :${c[2]}"
  export SNOWMINT_TEST_ETCD_CLUSTER_URL="etcd://127.0.0.1:${c[0]},127.0.0.1:${c[1]},127.0.0.1:${c[2]}"
  # The first listed member (the one a new client talks to first): the
  # cluster test kills it.
  export SNOWMINT_TEST_ETCD_CLUSTER_FIRST_PID_FILE="$RUN_DIR/etcd-cluster-1/pid"
}
