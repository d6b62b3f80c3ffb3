# shellcheck shell=bash
# MySQL/MariaDB for the lease store tests (sourced by scripts/test-stores).
#
# start_mysql: the server on 127.0.0.1:${SNOWMINT_STORES_MYSQL_PORT:-3306} if
# it answers (root without a password), with a database of this run's own that
# is dropped at exit; otherwise a throwaway MariaDB from Debian's package under
# $RUN_DIR on a free port. Exports SNOWMINT_TEST_MYSQL_URL.
#
# It also starts a dedicated throwaway MariaDB for the restart test (never the
# shared server) and exports SNOWMINT_TEST_MYSQL_RESTART_URL and
# SNOWMINT_TEST_MYSQL_RESTART_CMD, a shell command that restarts that server
# keeping its data; and one started with --autocommit=0 (a server default some
# DBAs set; the store must commit every write itself), whose connections the
# test kills: SNOWMINT_TEST_MYSQL_AUTOCOMMIT0_URL.

# The first of the given commands that exists (also looked up in /usr/sbin).
mysql_tool() {
  local c
  for c in "$@"; do
    if command -v "$c" >/dev/null 2>&1; then
      command -v "$c"
      return 0
    elif [ -x "/usr/sbin/$c" ]; then
      echo "/usr/sbin/$c"
      return 0
    fi
  done
  return 1
}

start_mysql() {
  local port=${SNOWMINT_STORES_MYSQL_PORT:-3306}
  local db="snowmint_stores_$$" client
  if client=$(mysql_tool mariadb mysql) &&
    timeout 10 "$client" --no-defaults -h 127.0.0.1 -P "$port" -u root -Ne 'SELECT 1' >/dev/null 2>&1; then
    say "mysql: the server on 127.0.0.1:$port, database $db"
    "$client" --no-defaults -h 127.0.0.1 -P "$port" -u root -e "CREATE DATABASE $db"
    STOPS+=("$client --no-defaults -h 127.0.0.1 -P $port -u root -e 'DROP DATABASE IF EXISTS $db' >/dev/null 2>&1")
    export SNOWMINT_TEST_MYSQL_URL="mysql://root@127.0.0.1:$port/$db"
  else
    say "mysql: nothing answers on 127.0.0.1:$port; starting a throwaway MariaDB"
    mysql_throwaway mysql || return 1
    export SNOWMINT_TEST_MYSQL_URL="mysql://root@127.0.0.1:$MYSQL_TW_PORT/test"
  fi
  [ "${STORES_EXTRA:-1}" = 1 ] || return 0
  mysql_throwaway mysql-restart || return 1
  export SNOWMINT_TEST_MYSQL_RESTART_URL="mysql://root@127.0.0.1:$MYSQL_TW_PORT/test"
  export SNOWMINT_TEST_MYSQL_RESTART_CMD="$MYSQL_TW_RESTART"
  mysql_throwaway mysql-autocommit0 --autocommit=0 || return 1
  export SNOWMINT_TEST_MYSQL_AUTOCOMMIT0_URL="mysql://root@127.0.0.1:$MYSQL_TW_PORT/test"
}

# mysql_throwaway NAME [SERVER_OPTION...]: a throwaway MariaDB with its data in
# $RUN_DIR/NAME, a database test, stopped by STOPS. Sets MYSQL_TW_PORT and MYSQL_TW_RESTART
# (a command restarting it with its data: $RUN_DIR/NAME/restart). Not in a
# subshell: STOPS must see the entry.
mysql_throwaway() {
  local name=$1 port extra=""
  shift
  # The extra options as words the start script repeats verbatim.
  (($#)) && extra=$(printf ' %q' "$@")
  ensure_apt mariadb-server
  local install server admin client
  # Any of the four missing is the error (A && B && ... || fail, meant so).
  # shellcheck disable=SC2015
  install=$(mysql_tool mariadb-install-db mysql_install_db) &&
    server=$(mysql_tool mariadbd mysqld) &&
    admin=$(mysql_tool mariadb-admin mysqladmin) &&
    client=$(mysql_tool mariadb mysql) || {
    echo "mysql: MariaDB's programs are missing after installing mariadb-server" >&2
    return 1
  }
  local dir="$RUN_DIR/$name" user
  user=$(id -un)
  mkdir -p "$dir"
  port=$(free_port)
  "$install" --no-defaults --datadir="$dir/data" --user="$user" --auth-root-authentication-method=normal \
    --skip-test-db --innodb-log-file-size=8M >"$dir/install.log" 2>&1 || {
    cat "$dir/install.log" >&2
    echo "mysql: mariadb-install-db failed" >&2
    return 1
  }
  # start, stop and restart: scripts, so that the restart test can run them.
  cat >"$dir/start" <<SCRIPT
#!/usr/bin/env bash
# Starts the server in the background and waits (at most 30 s) until it answers.
"$server" --no-defaults --datadir="$dir/data" --socket="$dir/sock" --pid-file="$dir/pid" \\
  --port="$port" --bind-address=127.0.0.1 --user="$user" --log-error="$dir/err.log" \\
  --skip-log-bin --innodb-log-file-size=8M --innodb-flush-log-at-trx-commit=0 --max-connections=300 \\
  --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci$extra </dev/null >/dev/null 2>&1 &
echo \$! >"$dir/server.pid"
for ((i = 0; i < 600; i++)); do
  "$admin" --no-defaults -h 127.0.0.1 -P "$port" -u root ping >/dev/null 2>&1 && exit 0
  kill -0 "\$(cat "$dir/server.pid")" 2>/dev/null || break
  sleep 0.05
done
cat "$dir/err.log" >&2
echo "mysql: the throwaway server ($dir) did not answer within 30 s" >&2
exit 1
SCRIPT
  cat >"$dir/stop" <<SCRIPT
#!/usr/bin/env bash
# SIGTERM (a clean shutdown, the data kept), then SIGKILL after 10 s.
pid=\$(cat "$dir/server.pid" 2>/dev/null) || exit 0
kill -TERM "\$pid" 2>/dev/null || exit 0
for ((i = 0; i < 200; i++)); do
  kill -0 "\$pid" 2>/dev/null || exit 0
  sleep 0.05
done
kill -KILL "\$pid" 2>/dev/null || true
SCRIPT
  printf '#!/usr/bin/env bash\n"%s" && exec "%s"\n' "$dir/stop" "$dir/start" >"$dir/restart"
  chmod +x "$dir/start" "$dir/stop" "$dir/restart"
  STOPS+=("$dir/stop")
  "$dir/start" || return 1
  "$client" --no-defaults -h 127.0.0.1 -P "$port" -u root -e 'CREATE DATABASE test'
  say "mysql: throwaway MariaDB on 127.0.0.1:$port ($dir)"
  MYSQL_TW_PORT=$port
  MYSQL_TW_RESTART="$dir/restart"
}
