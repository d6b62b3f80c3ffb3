"""MariaDB (docs/HARNESS.md): one server, and the non-durable control's.
Imported by stores.py once its delay proxy is defined."""

import os
import shutil
import subprocess
import time

from hosts import wait_for
from procs import Proc
from stores import DelayProxy, store_delay

MYSQL_PORT = 3306
MYSQL_PROXY = 13306  # the delay proxy's: the port clients use
# Non-durable commits (the control's) are written to InnoDB's log this often.
LOG_WRITE_S = 20
CLAIM_S = 1.5  # crash-primary: the restarted holder's claim to the SIGKILL


class MariaDB:
    """MariaDB 10.11 (mariadbd as root), one server on the first store host,
    its data directory in the run's folder (removed at the end); InnoDB
    flushes its log at every commit (innodb_flush_log_at_trx_commit=1, the
    default). Clients connect as a user of their own from the hosts' subnet,
    through the delay proxy on the server's host (port 13306)."""

    name = "mysql"
    fault_kinds = ("kill-primary", "restart-primary", "partition-primary",
                   "drop-replies-primary", "store-delay", "crash-primary")
    flush = 1  # innodb_flush_log_at_trx_commit
    hooks = None  # the run's failover hooks (run.Run), set by the run

    def __init__(self, net, work, hosts):
        self.net, self.work = net, work
        self.primary = hosts[0]
        self.dir = os.path.join(work, "mariadb")
        os.makedirs(self.dir)
        self.data = os.path.join(self.dir, "data")
        with open(os.path.join(work, "mariadb.log"), "ab") as f:
            subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={self.data}",
                            "--user=root", "--auth-root-authentication-method=normal",
                            "--skip-test-db", "--innodb-log-file-size=8M"],
                           stdout=f, stderr=f, timeout=120, check=True)
        self.proc = None
        self.start()
        self.sql("CREATE DATABASE snowmint; CREATE USER 'snowmint'@'%'; "
                 "GRANT ALL ON snowmint.* TO 'snowmint'@'%'")
        # Stays up through kill-primary and restart-primary: meanwhile it
        # accepts a client's connection and closes it (the server refuses its own).
        self.proxy = DelayProxy(net, work, self.primary, MYSQL_PROXY, MYSQL_PORT)

    def start(self):
        h = self.primary
        argv = self.net.wrap(h, [
            "mariadbd", "--no-defaults", f"--datadir={self.data}",
            f"--socket={self.dir}/sock", f"--pid-file={self.dir}/pid", f"--port={MYSQL_PORT}",
            f"--bind-address={self.net.hosts[h]}", "--user=root", "--skip-log-bin",
            "--skip-name-resolve", "--innodb-log-file-size=8M",
            f"--innodb-flush-log-at-trx-commit={self.flush}",
            f"--innodb-flush-log-at-timeout={LOG_WRITE_S}", "--max-connections=300",
            "--character-set-server=utf8mb4", "--collation-server=utf8mb4_general_ci"])
        self.proc = Proc("mariadb", argv, os.path.join(self.work, "mariadb.log"))
        wait_for("mariadb", lambda: subprocess.run(
            ["mariadb-admin", "--no-defaults", f"--socket={self.dir}/sock", "-u", "root",
             "ping"], capture_output=True, timeout=10).returncode == 0, 60)

    def sql(self, query):
        subprocess.run(["mariadb", "--no-defaults", f"--socket={self.dir}/sock", "-u", "root",
                        "-e", query], capture_output=True, timeout=10, check=True)

    def url(self, opts):
        return f"mysql://snowmint@{self.net.hosts[self.primary]}:{MYSQL_PROXY}/snowmint?{opts}"

    def inject(self, kind, rng):
        h = self.primary
        if kind == "kill-primary":
            self.proc.kill()
            return f"kill-primary {h} (SIGKILL; restarted with its data at the end)", self.restart
        if kind == "crash-primary":
            # As a failover: servers stopped (slots released), a holder
            # restarted (it claims); CLAIM_S on SIGKILL, started again at
            # once, and the servers with it. Durable, nothing is lost; the
            # non-durable control loses what came after the log's last
            # write (the claim, renewals, releases), and the servers claim
            # slots that look free or expired while their holders still
            # issue on reservations confirmed before the kill.
            hooks = self.hooks
            hooks.failover_servers_down()
            name = hooks.failover_holder_restart()
            time.sleep(CLAIM_S)
            self.proc.kill()
            self.restart()
            hooks.failover_servers_up()
            return (f"crash-primary {h} (servers stopped, {name} restarted; {CLAIM_S} s on "
                    "SIGKILL, started again at once, servers started)"), None
        if kind == "restart-primary":
            # A clean shutdown (SIGTERM), started again when the fault ends.
            self.proc.stop(grace=30)
            return f"restart-primary {h} (SIGTERM; started again at the end)", self.restart
        if kind == "partition-primary":
            self.net.partition(h)
            return f"partition-primary {h}", lambda: self.net.heal(h)
        if kind == "drop-replies-primary":
            # The proxy's port (the server answers the proxy over loopback).
            self.net.drop_replies(h, MYSQL_PROXY)
            return (f"drop-replies-primary {h} (port {MYSQL_PROXY}, the proxy clients use)",
                    lambda: self.net.heal(h))
        if kind == "store-delay":
            return store_delay([self.proxy])
        raise ValueError(kind)

    def restart(self):
        self.proc.stop()
        self.start()

    def stop(self):
        if getattr(self, "proxy", None):
            self.proxy.stop()
        if self.proc:
            self.proc.stop(grace=20)
        shutil.rmtree(self.dir, ignore_errors=True)


class MariaDBNonDurable(MariaDB):
    """The control: innodb_flush_log_at_trx_commit=0 (a commit is in the log
    on disk up to LOG_WRITE_S later; a SIGKILL loses it), which the lease
    refuses unless the URL names it. Not 2: its commits are written to the
    OS at once, which keeps them through a process's kill (only the
    machine's crash loses them)."""

    flush = 0

    def url(self, opts):
        return super().url(f"{opts}&sql_allow_unsafe=innodb_flush_log_at_trx_commit")
