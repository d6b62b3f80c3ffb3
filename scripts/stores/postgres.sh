# shellcheck shell=bash
# PostgreSQL for the lease store tests (sourced by scripts/test-stores).
#
# start_postgres: the server on 127.0.0.1:${SNOWMINT_STORES_POSTGRES_PORT:-5432}
# if it answers (user postgres, trust authentication), with a database of this
# run's own that is dropped at exit; otherwise a throwaway server from Debian's
# package under $RUN_DIR on a free port (initdb and the server refuse root: they
# run as the postgres user then). Exports SNOWMINT_TEST_POSTGRES_URL.
#
# It also starts a dedicated throwaway server for the restart test (never the
# shared one) and exports SNOWMINT_TEST_POSTGRES_RESTART_URL and
# SNOWMINT_TEST_POSTGRES_RESTART_CMD, a shell command that restarts that
# server keeping its data.

start_postgres() {
  local port=${SNOWMINT_STORES_POSTGRES_PORT:-5432}
  local db="snowmint_stores_$$"
  if command -v psql >/dev/null 2>&1 &&
    timeout 10 psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -Atqc 'SELECT 1' >/dev/null 2>&1; then
    say "postgres: the server on 127.0.0.1:$port, database $db"
    psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc "CREATE DATABASE $db" >/dev/null
    STOPS+=("psql -h 127.0.0.1 -p $port -U postgres -d postgres -qc 'DROP DATABASE IF EXISTS $db' >/dev/null 2>&1")
    export SNOWMINT_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/$db"
  else
    say "postgres: nothing answers on 127.0.0.1:$port; starting a throwaway server"
    postgres_throwaway postgres || return 1
    export SNOWMINT_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$PG_TW_PORT/test"
  fi
  [ "${STORES_EXTRA:-1}" = 1 ] || return 0
  postgres_throwaway postgres-restart || return 1
  export SNOWMINT_TEST_POSTGRES_RESTART_URL="postgres://postgres@127.0.0.1:$PG_TW_PORT/test"
  export SNOWMINT_TEST_POSTGRES_RESTART_CMD="$PG_TW_RESTART"
}

# postgres_throwaway NAME: a throwaway server with its data in $RUN_DIR/NAME,
# a database test, stopped by STOPS. Sets PG_TW_PORT and PG_TW_RESTART (a
# command restarting it with its data). Not in a subshell: STOPS must see
# the entry.
postgres_throwaway() {
  local name=$1 port
  ensure_apt postgresql
  local bin
  # Debian's version folders (15, 16...): plain names, and ls -d lists none
  # when the glob matches nothing.
  # shellcheck disable=SC2012
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "postgres: no server binaries under /usr/lib/postgresql/*/bin" >&2
    return 1
  fi
  local dir="$RUN_DIR/$name" as=()
  mkdir -p "$dir"
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres:postgres "$dir"
    as=(runuser -u postgres --)
  fi
  port=$(free_port)
  "${as[@]}" "$bin/initdb" -D "$dir/data" --auth=trust -U postgres -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 || {
    cat "$dir/initdb.log" >&2
    echo "postgres: initdb failed" >&2
    return 1
  }
  STOPS+=("${as[*]} $bin/pg_ctl -D $dir/data -m fast -w -t 30 stop >/dev/null 2>&1")
  # The free port can be taken before the server binds it (another run's
  # server, or a client's local port on a busy machine): then another port.
  local try
  for try in 1 2 3 4 5; do
    "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
      -o "-k $dir -p $port -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300" start >/dev/null && break
    if [ "$try" = 5 ] || ! grep -q "Address already in use" "$dir/server.log"; then
      cat "$dir/server.log" >&2
      echo "postgres: the throwaway server did not start" >&2
      return 1
    fi
    port=$(free_port)
  done
  "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc 'CREATE DATABASE test' >/dev/null
  say "postgres: throwaway server on 127.0.0.1:$port ($dir)"
  PG_TW_PORT=$port
  PG_TW_RESTART="${as[*]} $bin/pg_ctl -D $dir/data -l $dir/server.log -m fast -w -t 30 restart >/dev/null"
}
