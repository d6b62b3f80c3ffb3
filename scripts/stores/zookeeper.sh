# shellcheck shell=bash
# ZooKeeper for the lease store tests (sourced by scripts/test-stores, which
# provides say, ensure_apt, RUN_DIR and STOPS).
#
# start_zookeeper exports
#   SNOWMINT_TEST_ZOOKEEPER_URL  a ZooKeeper without authentication: the one at
#                                127.0.0.1:${SNOWMINT_ZOOKEEPER_PORT:-2181} if it
#                                answers `srvr` (the tests use namespaces of their
#                                own run), else a throwaway standalone server;
#   SNOWMINT_TEST_ZOOKEEPER_RESTART_URL, SNOWMINT_TEST_ZOOKEEPER_RESTART_CMD
#                                a throwaway server for the restart test, and a
#                                command that restarts it with its dataDir kept.
# Throwaway servers run Debian's zookeeper package (installed if missing) on the
# JDK, standalone (QuorumPeerMain with a zoo.cfg of their own: no server list),
# on free 127.0.0.1 ports, with their dataDir under $RUN_DIR; STOPS stops them.

# _zk_answers PORT: a ZooKeeper on 127.0.0.1:PORT answers the `srvr` command
# (whitelisted by default) as a serving standalone server or ensemble member.
_zk_answers() {
  # The port is the child shell's $1: single quotes.
  # shellcheck disable=SC2016
  timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf srvr >&3 &&
    grep -q "^Mode: \(standalone\|leader\|follower\)" <&3' _ "$1" 2>/dev/null
}

# _zk_stop PID: SIGTERM, then SIGKILL after 5 s.
_zk_stop() {
  local pid=$1 i
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.05
  done
  kill -KILL "$pid" 2>/dev/null || true
}

# _zk_start NAME: a standalone server with its dataDir in $RUN_DIR/NAME; waits
# (at most 60 s: the JVM starts slowly on a loaded machine) until it serves,
# adds its stop to STOPS, sets _ZK_PORT, and writes $RUN_DIR/NAME/restart.
_zk_start() {
  local name=$1 dir="$RUN_DIR/$1" try port pid i cmd
  mkdir -p "$dir/data"
  STOPS+=("_zk_stop \"\$(cat '$dir/pid' 2>/dev/null)\"")
  for try in 1 2 3; do
    port=$(free_port) || return 1
    # tickTime 500: sessions of 1 to 10 s. forceSync stays yes (the default):
    # a write is answered once it is on disk.
    cat >"$dir/zoo.cfg" <<EOF
tickTime=500
initLimit=10
syncLimit=5
dataDir=$dir/data
clientPort=$port
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=srvr,ruok,mntr
EOF
    cmd=(java -Xmx256m -Dzookeeper.log.dir="$dir" -Dlog4j.configuration=none
      -cp "/usr/share/java/zookeeper.jar:/usr/share/java/*"
      org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zoo.cfg")
    "${cmd[@]}" >"$dir/zookeeper.log" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$dir/pid"
    for ((i = 0; i < 600; i++)); do
      if _zk_answers "$port"; then
        _ZK_PORT=$port
        _zk_restart_script "$dir" "$port" "${cmd[@]}"
        return 0
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    _zk_stop "$pid"
    echo "zookeeper ($name) did not start on 127.0.0.1:$port (try $try); its log:" >&2
    tail -n 5 "$dir/zookeeper.log" >&2 || true
    rm -rf "${dir:?}/data" && mkdir -p "$dir/data"
  done
  return 1
}

# _zk_restart_script DIR PORT COMMAND...: writes DIR/restart, which stops the
# server (its pid in DIR/pid), starts COMMAND again on the same dataDir and
# port, and waits (at most 60 s) until it serves.
_zk_restart_script() {
  local dir=$1 port=$2
  shift 2
  {
    echo '#!/usr/bin/env bash'
    echo "pid=\$(cat '$dir/pid')"
    # The restart script's own variables: single quotes.
    # shellcheck disable=SC2016
    echo 'kill -TERM "$pid" 2>/dev/null'
    # shellcheck disable=SC2016
    echo 'for ((i = 0; i < 200; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done'
    # shellcheck disable=SC2016
    echo 'kill -KILL "$pid" 2>/dev/null'
    printf '%q ' "$@"
    echo ">>'$dir/zookeeper.log' 2>&1 </dev/null &"
    echo "echo \$! >'$dir/pid'"
    echo 'for ((i = 0; i < 600; i++)); do'
    echo "  timeout 3 bash -c 'exec 3<>/dev/tcp/127.0.0.1/$port && printf srvr >&3 && grep -q \"^Mode: standalone\" <&3' 2>/dev/null && exit 0"
    echo '  sleep 0.1'
    echo 'done'
    echo "echo 'zookeeper: the server in $dir did not come back within 60 s' >&2"
    echo 'exit 1'
  } >"$dir/restart"
  chmod +x "$dir/restart"
}

start_zookeeper() {
  local port=${SNOWMINT_ZOOKEEPER_PORT:-2181} client
  if _zk_answers "$port"; then
    say "zookeeper: using the one at 127.0.0.1:$port (namespaces of this run)"
    client=$port
  fi
  [ -f /usr/share/java/zookeeper.jar ] || ensure_apt zookeeper
  if ! command -v java >/dev/null || [ ! -f /usr/share/java/zookeeper.jar ]; then
    echo "zookeeper: no java or no /usr/share/java/zookeeper.jar, even after installing zookeeper" >&2
    exit 1
  fi
  if [ -z "${client:-}" ]; then
    _zk_start zookeeper || {
      echo "zookeeper: nothing answers at 127.0.0.1:$port and no throwaway server could be started" >&2
      exit 1
    }
    client=$_ZK_PORT
    say "zookeeper: throwaway server at 127.0.0.1:$client"
  fi
  export SNOWMINT_TEST_ZOOKEEPER_URL="zookeeper://127.0.0.1:$client"
  [ "${STORES_EXTRA:-1}" = 1 ] || return 0

  _zk_start zookeeper-restart || {
    echo "zookeeper: the server for the restart test could not be started" >&2
    exit 1
  }
  say "zookeeper: throwaway server for the restart test at 127.0.0.1:$_ZK_PORT"
  export SNOWMINT_TEST_ZOOKEEPER_RESTART_URL="zookeeper://127.0.0.1:$_ZK_PORT"
  export SNOWMINT_TEST_ZOOKEEPER_RESTART_CMD="$RUN_DIR/zookeeper-restart/restart"
}
