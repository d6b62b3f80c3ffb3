"""Store clusters on the store hosts: etcd (3 members), ZooKeeper (3
members), Redis (primary and replica, failover by REPLICAOF NO ONE), and the
file store (a directory the
holders of one host share). Each offers ``url(opts)`` (the lease URL), the
faults it supports (``fault_kinds``) and ``inject(kind, rng)`` returning a
line for the schedule and an undo callable (or None). Every network store
is reached through a delay proxy (proxy.py) on each server's host, for
store-delay: clients connect to the proxy's port, the members' own traffic
(replication, quorum) and the harness's status calls go direct."""

import json
import os
import shutil
import signal
import subprocess
import time

from hosts import sh, wait_for
import procs
from procs import Proc
import etcd_restore

REDIS_PORT = 6379
# Each store server's delay proxy: the port clients use.
ETCD_PROXY, REDIS_PROXY, ZK_PROXY, PG_PROXY = 12379, 16379, 12181, 15432
LAG_S = 3  # seconds a Redis replica falls behind before a failover
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# store-clock-step (Redis, PostgreSQL, ZooKeeper): the primary's (ZooKeeper:
# every member's) wall clock stepped by these (seconds) in turn, each for its
# fault's length, then back to +0. The lease's max_skew_ms is 5 s and its hwm
# bound lets a store clock be at most timeout_ms + max_skew_ms (6 s) ahead:
# 3 s is within both, 30 s beyond. In turn, not at random: a run with two
# steps has one forward beyond the bound and one back within the skew.
STORE_CLOCK_STEPS_S = (30, -3, -30, 3)
MAX_SKEW_S = 5
FAKETIME_MT = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"

# store-delay: every chunk through the store's proxies held
# for a random delay in this range (ms), both ways, for the fault's length.
# A call is at least two chunks (request, answer): up to 800 ms of the
# clients' timeout_ms of 1000, so some calls miss it and some answer late.
STORE_DELAY_MS = (50, 400)
PROXY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "proxy.py")


def clock_file(work, h):
    """The file holding host ``h``'s store clock offset ("+0", "+30", "-3"),
    which its server re-reads (libfaketimeMT, clockshift.so); set to +0."""
    path = os.path.join(work, f"clock-{h}")
    set_clock(path, 0)
    return path


def replace_file(path, text):
    """Writes ``text`` (and a newline) to ``path`` by renaming a new file in
    place, so that a reader sees the old or the new content, never half of
    it: the clock offset and delay files servers and proxies re-read."""
    tmp = path + ".new"
    with open(tmp, "w") as f:
        f.write(text + "\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def set_clock(path, seconds):
    """Steps a server's wall clock: its offset file rewritten."""
    replace_file(path, f"{seconds:+d}")


def store_clock_step(store, rng, hosts=None):
    """Steps the primary's clock (``store.clocks[primary]``), or each of
    ``hosts``', by the next step of STORE_CLOCK_STEPS_S; the undo sets them
    back to +0."""
    n = store.clock_steps = getattr(store, "clock_steps", 0) + 1
    s = STORE_CLOCK_STEPS_S[(n - 1) % len(STORE_CLOCK_STEPS_S)]
    hosts = hosts or [store.primary]
    paths = [store.clocks[h] for h in hosts]
    for path in paths:
        set_clock(path, s)

    def undo():
        for path in paths:
            set_clock(path, 0)
    skew_s = getattr(store, "max_skew_ms", MAX_SKEW_S * 1000) // 1000
    how = "within" if abs(s) <= skew_s else "beyond"
    return (f"store-clock-step {','.join(hosts)} {s:+d} s ({how} max_skew_ms {skew_s} s; "
            "back to +0 when the fault ends)"), undo


def set_delay(path, text):
    """A proxy's delay, "0" or "MIN-MAX" (ms): its control file rewritten."""
    replace_file(path, text)


class DelayProxy:
    """proxy.py in host ``h``'s namespace: clients connect to ``port`` on the
    host's address and it forwards to ``to_port``, the store's own, on the
    same address (so over the host's loopback, which the fault rules spare:
    partitions and dropped replies act on the clients' side of it). Its
    control file, ``delay-<h>`` in the run's folder, says "0" until a
    store-delay."""

    def __init__(self, net, work, h, port, to_port, to_file=None):
        self.h, self.port = h, port
        self.control = os.path.join(work, f"delay-{h}")
        set_delay(self.control, "0")
        a = net.hosts[h]
        more = ["--to-file", to_file] if to_file else []  # its upstream moves (etcd restore)
        self.proc = Proc(f"proxy-{h}", net.wrap(h, [
            "python3", PROXY, "--listen", f"{a}:{port}", "--to", f"{a}:{to_port}",
            "--control", self.control, *more]), os.path.join(work, f"proxy-{h}.log"))
        wait_for(f"the proxy on {h}:{port}", lambda: net.reachable(h, h, port), 20)

    def stop(self):
        self.proc.stop()


def store_delay(proxies):
    """Sets every proxy's delay to STORE_DELAY_MS; the undo sets it to 0."""
    lo, hi = STORE_DELAY_MS
    for p in proxies:
        set_delay(p.control, f"{lo}-{hi}")

    def undo():
        for p in proxies:
            set_delay(p.control, "0")
    where = ", ".join(f"{p.h}:{p.port}" for p in proxies)
    return (f"store-delay {lo}-{hi} ms on {where} (each chunk held at random in that range, "
            "both ways; connections overtake each other; 0 when the fault ends)"), undo


class FileStore:
    name = "file"
    fault_kinds = ()

    def __init__(self, net, work, hosts):
        self.dir = os.path.join(work, "file-store")
        os.makedirs(self.dir, mode=0o700)

    def url(self, opts):
        return f"file:{self.dir}?{opts}"

    def stop(self):
        pass


class QuorumFaults:
    """The member faults of a quorum cluster (etcd, ZooKeeper): a subclass
    has ``hosts``, ``members`` (host -> Proc), ``start(host)``, ``leader()``
    and ``client_port``."""

    def inject(self, kind, rng):
        if kind.endswith("leader"):
            target = self.leader() or rng.choice(self.hosts)
        else:
            target = rng.choice(self.hosts)
        if kind.startswith("kill"):
            self.members[target].kill()

            def undo():
                self.start(target)
            return f"{kind} {target} (SIGKILL)", undo
        if kind.startswith("partition"):
            self.net.partition(target)
            return f"{kind} {target}", lambda: self.net.heal(target)
        if kind == "drop-replies-member":
            port = self.client_port
            self.net.drop_replies(target, port)
            return f"{kind} {target} (client port {port})", lambda: self.net.heal(target)
        raise ValueError(kind)


class Etcd(QuorumFaults, etcd_restore.Members):
    """Three members, one per store host; clients may use any of them, each
    through the delay proxy on its host (the members' peer traffic and the
    harness's status calls go direct); ``restore`` in etcd_restore.py."""

    name = "etcd"
    # The port clients use (drop-replies-member): the proxies'.
    client_port = ETCD_PROXY
    fault_kinds = ("kill-member", "kill-leader", "partition-member", "partition-leader",
                   "drop-replies-member", "store-delay", "restore")

    def __init__(self, net, work, hosts):
        self.net, self.work, self.hosts = net, work, hosts
        self.members = {}
        for h in hosts:
            self.start(h)
        wait_for("an etcd leader", lambda: self.leader() is not None, 30)
        self.proxies = [DelayProxy(net, work, h, ETCD_PROXY, self.member_port(),
                                   self.upstream_file(h)) for h in hosts]

    def inject(self, kind, rng):
        if kind == "store-delay":
            # Every member's clients' traffic: the store as a whole is slow.
            return store_delay(self.proxies)
        if kind == "restore":
            return self.restore(), None
        return super().inject(kind, rng)

    def start(self, h):
        self.members[h] = Proc(f"etcd-{h}", self.member_argv(h),
                               os.path.join(self.work, f"etcd-{h}.log"))

    def _status(self, h):
        r = sh("curl", "-s", "-m", "2", "-X", "POST", "-d", "{}",
               f"http://{self.net.hosts[h]}:{self.member_port()}/v3/maintenance/status",
               ns=self.net.ns[h], check=False)
        try:
            return json.loads(r.stdout) if r.returncode == 0 else None
        except json.JSONDecodeError:
            return None

    def leader(self):
        """The host whose member is the leader, as the members agree (or None)."""
        for h in self.hosts:
            s = self._status(h)
            if s and "leader" in s and s["leader"] == s["header"]["member_id"]:
                return h
        return None

    def url(self, opts):
        eps = ",".join(f"{self.net.hosts[h]}:{ETCD_PROXY}" for h in self.hosts)
        return f"etcd://{eps}?{opts}"

    def stop(self):
        for p in getattr(self, "proxies", []):
            p.stop()
        for p in self.members.values():
            p.stop()


class PrimaryReplica:
    """The failover of a primary/replica pair (Redis, PostgreSQL): servers
    stopped, replication cut while a CLI holder restarts and claims on the
    primary alone, the primary killed, the replica promoted, the servers
    started with it. A class gives ``caught_up(old, new)``,
    ``kill_primary(old)`` and ``promote(new)``; the old primary's return as
    the new replica is its own."""

    def primary_fault(self, kind, rng):
        """The faults of the primary both pairs share: partition, one-way
        loss of the port clients use (its delay proxy's, ``proxy_port``),
        clock step, delay."""
        h = self.primary
        if kind == "partition-primary":
            self.net.partition(h)
            return f"partition-primary {h}", lambda: self.net.heal(h)
        if kind == "drop-replies-primary":
            self.net.drop_replies(h, self.proxy_port)
            return (f"drop-replies-primary {h} (port {self.proxy_port}, the proxy clients use)",
                    lambda: self.net.heal(h))
        if kind == "store-clock-step":
            return store_clock_step(self, rng)
        if kind == "store-delay":
            return store_delay([self.proxies[h]])
        raise ValueError(kind)

    def cut_kill_promote(self, wait_always):
        """Returns (old primary, new primary, the restart's record text).
        ``wait_always``: wait for the replica to catch up even without
        servers (hooks) to stop."""
        old, new = self.primary, self.replica
        hooks = self.hooks
        if hooks:
            hooks.failover_servers_down()
        if hooks or wait_always:
            self.caught_up(old, new)
        self.net.isolate_from(new, [old])
        restarted = hooks.failover_holder_restart() if hooks else None
        time.sleep(LAG_S)
        self.kill_primary(old)
        self.net.heal(new)
        self.promote(new)
        self.primary, self.replica = new, old
        if hooks:
            hooks.failover_servers_up()
        else:
            self.repoint = True
        return old, new, (f", {restarted} restarted (SIGKILL) during the cut" if restarted else "")


class Redis(PrimaryReplica):
    """A primary and a replica; the failover promotes the replica with
    REPLICAOF NO ONE and points the clients' URL at it from then on (the old
    primary is stopped, as a fenced-off failed node would be)."""

    name = "redis"
    proxy_port = REDIS_PROXY
    fault_kinds = ("failover", "failover", "partition-primary", "drop-replies-primary",
                   "store-clock-step", "store-delay")
    # Every holder of a space must use the same redis_max_window_ms; the
    # failover fence is now + it + 2 * max_skew_ms.
    extra_opts = "&redis_max_window_ms=2000"

    hooks = None  # the run's failover hooks (run.Run), set by the run

    def __init__(self, net, work, hosts):
        self.net, self.work = net, work
        self.primary, self.replica = hosts[0], hosts[1]
        self.procs, self.clocks = {}, {}
        # Each member runs under clockshift.so (tools/clockshift/clockshift.c:
        # redis-server does not start under libfaketime), its clock offset in
        # a file of its own (store-clock-step rewrites the primary's).
        self.clockshift = os.path.join(work, "clockshift.so")
        subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-o",
                        self.clockshift, os.path.join(ROOT, "tools/clockshift/clockshift.c")],
                       check=True, timeout=60)
        for h in (self.primary, self.replica):
            self.start(h)
        self.cli(self.replica, "REPLICAOF", net.hosts[self.primary], str(REDIS_PORT))
        self.repoint = False
        # Up through kills and failovers (a member's kill is redis-server's).
        self.proxies = {h: DelayProxy(net, work, h, REDIS_PROXY, REDIS_PORT)
                        for h in (self.primary, self.replica)}

    def start(self, h):
        d = os.path.join(self.work, f"redis-{h}")
        os.makedirs(d, exist_ok=True)
        self.clocks[h] = clock_file(self.work, h)
        argv = self.net.wrap(h, [
            "env", f"LD_PRELOAD={self.clockshift}", f"SNOWMINT_CLOCKSHIFT_FILE={self.clocks[h]}",
            "redis-server", "--port", str(REDIS_PORT), "--bind", self.net.hosts[h],
            "--save", "", "--appendonly", "no", "--dir", d, "--protected-mode", "no"])
        self.procs[h] = Proc(f"redis-{h}", argv, os.path.join(self.work, f"redis-{h}.log"))
        wait_for(f"redis on {h}", lambda: self.cli(h, "PING", check=False) == "PONG", 20)

    def cli(self, h, *args, check=True):
        r = sh("redis-cli", "-h", self.net.hosts[h], "-p", str(REDIS_PORT), *args,
               ns=self.net.ns[h], check=check)
        return r.stdout.strip()

    def _offset(self, h, field):
        for line in self.cli(h, "INFO", "replication", check=False).splitlines():
            if line.startswith(field + ":"):
                return int(line.split(":", 1)[1])
        return -1

    def kill_primary(self, h):
        self.procs[h].kill()

    def promote(self, h):
        self.cli(h, "REPLICAOF", "NO", "ONE")

    def caught_up(self, primary, replica):
        """Waits (at most 3 s) until the replica has every write of the primary."""
        target = self._offset(primary, "master_repl_offset")
        procs.wait_until(lambda: self._offset(replica, "slave_repl_offset") >= target, 3)

    def url(self, opts):
        return f"redis://{self.net.hosts[self.primary]}:{REDIS_PROXY}?{opts}{self.extra_opts}"

    def inject(self, kind, rng):
        if kind == "failover":
            # The servers stop first (SIGTERM: they release their slots, and
            # WAIT makes sure the replica has that). Then the replica falls
            # behind (a blackhole route to the primary: replication stops,
            # clients still reach both) while a CLI holder is restarted: its
            # claim of a released slot lands on the primary alone. The
            # primary dies, the replica is promoted, and the servers start
            # at once with it: they claim the free slots there, one of which
            # that holder still issues on until its reservation ends. Without
            # the failover fence they issue on it at once (the control).
            old, new, during = self.cut_kill_promote(wait_always=False)
            self.start(old)
            self.cli(old, "REPLICAOF", self.net.hosts[new], str(REDIS_PORT))
            return (f"failover: replication {new}<-{old} cut for {LAG_S} s{during}, {old} killed "
                    f"(SIGKILL), {new} promoted, servers started with it, {old} back as its "
                    "replica"), None
        return self.primary_fault(kind, rng)

    def stop(self):
        for p in getattr(self, "proxies", {}).values():
            p.stop()
        for p in self.procs.values():
            p.stop()


ZK_CLIENT, ZK_QUORUM, ZK_ELECTION = 2181, 2888, 3888
# C1 only, one compiler thread: three JVMs (and their restarts after a kill)
# on two cores, beside the other store's run, otherwise spend seconds of CPU
# compiling while clients' calls wait.
ZK_JAVA = ["java", "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
           "-XX:CICompilerCount=1", "-Dzookeeper.log.dir={dir}",
           "-cp", "/usr/share/java/zookeeper.jar:/usr/share/java/*",
           "org.apache.zookeeper.server.quorum.QuorumPeerMain", "{cfg}"]


class ZooKeeper(QuorumFaults):
    """Three members (Debian's zookeeper package on the JDK), one per store
    host, each with its own dataDir and myid; clients list all three. The
    leader is the member whose ``srvr`` answers ``Mode: leader``."""

    name = "zookeeper"
    # The port clients use (drop-replies-member): the proxies'.
    client_port = ZK_PROXY
    fault_kinds = ("kill-member", "kill-leader", "partition-member", "partition-leader",
                   "drop-replies-member", "store-clock-step", "store-delay")
    # A network store's claim refuses a clock further than max_skew_ms from
    # the store's, measured at the middle of a call. The successor fence's
    # control needs the stepped restart's first IDs to fall among its
    # predecessor's last ones: the step must exceed the restart plus its
    # claim, which on a loaded machine take seconds (with 3.5 s, the claim
    # of 20261129-010138-zookeeper-control-1 came after the overlap). So
    # ZooKeeper's runs take max_skew_ms 10 s and an 8 s step. The controls'
    # steps end the holder's input, which releases its slot at once; a
    # SIGKILLed holder's slot takes 2-3 s to expire (ttl_ms 3000).
    max_skew_ms = 10_000
    clock_step_s = 8
    # A claim is several round trips (a session, the clock write, the fence
    # and slot reads, the multi-op), each a write fsynced by a quorum of three
    # JVMs on one machine: within 1 s only on a quiet one (with a build
    # beside it, every claim missed 1 s for the first 40 s of
    # 20261129-001116-zookeeper-control-1). 2 s is still under the TTL.
    timeout_ms = 2000

    def __init__(self, net, work, hosts):
        self.net, self.work, self.hosts = net, work, hosts
        self.members, self.clocks = {}, {}
        servers = "\n".join(
            f"server.{i + 1}={net.hosts[h]}:{ZK_QUORUM}:{ZK_ELECTION}"
            for i, h in enumerate(hosts))
        try:
            for i, h in enumerate(hosts):
                d = self._dir(h)
                os.makedirs(os.path.join(d, "data"), mode=0o700)
                with open(os.path.join(d, "data", "myid"), "w") as f:
                    f.write(f"{i + 1}\n")
                # tickTime 500: sessions of 1 to 10 s, a follower out of
                # sync after 2.5 s (syncLimit), elections within seconds.
                # forceSync stays yes: a write is answered once on disk.
                with open(os.path.join(d, "zoo.cfg"), "w") as f:
                    f.write(f"""tickTime=500
initLimit=20
syncLimit=5
dataDir={d}/data
clientPort={ZK_CLIENT}
clientPortAddress={net.hosts[h]}
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=srvr,ruok,mntr
{servers}
""")
                self.start(h)
            # The JVMs start slowly on a loaded machine.
            wait_for("a ZooKeeper leader and a quorum", self._quorum, 120)
            self.proxies = [DelayProxy(net, work, h, ZK_PROXY, ZK_CLIENT) for h in hosts]
        except BaseException:
            self.stop()
            raise

    def _dir(self, h):
        return os.path.join(self.work, f"zookeeper-{h}")

    def start(self, h):
        d = self._dir(h)
        # The store's clock is the leader's wall clock (the mtime it stamps on
        # a write): every member's JVM runs under libfaketimeMT with an
        # offset file of its own (store-clock-step rewrites them all),
        # re-read at most every second (on every call, the JVM's frequent
        # clock reads would each read the file); its monotonic clock, which
        # times sessions and elections, stays real.
        self.clocks[h] = clock_file(self.work, h)
        argv = ["env", f"LD_PRELOAD={FAKETIME_MT}", f"FAKETIME_TIMESTAMP_FILE={self.clocks[h]}",
                "FAKETIME_CACHE_DURATION=1", "FAKETIME_DONT_FAKE_MONOTONIC=1"]
        argv += [a.format(dir=d, cfg=os.path.join(d, "zoo.cfg")) for a in ZK_JAVA]
        self.members[h] = Proc(f"zookeeper-{h}", self.net.wrap(h, argv),
                               os.path.join(self.work, f"zookeeper-{h}.log"))

    def mode(self, h):
        """The member's ``Mode:`` (leader, follower) from ``srvr``, or None
        when it does not serve (down, electing, out of the quorum)."""
        r = sh("timeout", "3", "bash", "-c",
               f"exec 3<>/dev/tcp/{self.net.hosts[h]}/{ZK_CLIENT} && printf srvr >&3 && cat <&3",
               ns=self.net.ns[h], check=False)
        for line in r.stdout.splitlines():
            if line.startswith("Mode: "):
                return line.split(" ", 1)[1].strip()
        return None

    def _quorum(self):
        modes = [self.mode(h) for h in self.hosts]
        return modes.count("leader") == 1 and modes.count("follower") == len(self.hosts) - 1

    def answering(self):
        """Every member serves (a leader and its followers): the moment for
        a holder-clock-step (run.Run.ready_for)."""
        return self._quorum()

    def serving(self):
        """A leader and a majority serve (else an election or a lost quorum:
        no client is served; run.Run.watch_store records it)."""
        modes = [self.mode(h) for h in self.hosts]
        return "leader" in modes and len([m for m in modes if m]) * 2 > len(self.hosts)

    def leader(self):
        for h in self.hosts:
            if self.mode(h) == "leader":
                return h
        return None

    def inject(self, kind, rng):
        if kind == "store-clock-step":
            # The store's clock is the leader's (it stamps every write's
            # mtime), and a fault may move the leadership: every member's
            # clock is stepped, so that whichever leads has the step.
            return store_clock_step(self, rng, self.hosts)
        if kind == "store-delay":
            # Every member's clients' traffic: the store as a whole is slow.
            return store_delay(self.proxies)
        return super().inject(kind, rng)

    def url(self, opts):
        eps = ",".join(f"{self.net.hosts[h]}:{ZK_PROXY}" for h in self.hosts)
        return f"zookeeper://{eps}?{opts}"

    def stop(self):
        """Stops every member and removes its data (the logs stay)."""
        for p in getattr(self, "proxies", []):
            p.stop()
        for p in self.members.values():
            p.stop()
        for h in self.hosts:
            shutil.rmtree(os.path.join(self._dir(h), "data"), ignore_errors=True)


PG_BIN = "/usr/lib/postgresql/15/bin"
PG_PORT = 5432


class Postgres(PrimaryReplica):
    """PostgreSQL 15: a primary and a streaming replica (pg_basebackup -R).
    ``synchronous``: synchronous_standby_names = walreceiver (the replica)
    and synchronous_commit = on, so a commit returns once the replica has it
    (the real configuration); otherwise replication is asynchronous (the control). The promotion kills
    every process of the primary's host (SIGKILL), promotes the replica
    (pg_promote) and rebuilds the old host as the new primary's replica with
    a fresh pg_basebackup (its unreplicated commits are discarded with its
    data directory). The servers run as the postgres user (setpriv), their
    data in the run's folder, removed at the end."""

    name = "postgres"
    proxy_port = PG_PROXY
    fault_kinds = ("promotion", "promotion", "partition-primary", "drop-replies-primary",
                   "store-clock-step", "store-delay")
    synchronous = True
    hooks = None  # the run's failover hooks (run.Run), set by the run

    def __init__(self, net, work, hosts):
        self.net, self.work = net, work
        self.primary, self.replica = hosts[0], hosts[1]
        self.procs, self.dirs, self.gen, self.clocks, self.proxies = {}, {}, 0, {}, {}
        self.start(self.primary)
        self.start(self.replica, source=self.primary)

    def _dir(self, h):
        """A new data folder for ``h`` (its previous one, if any, removed)."""
        if h in self.dirs:
            shutil.rmtree(self.dirs[h], ignore_errors=True)
        self.gen += 1
        d = self.dirs[h] = os.path.join(self.work, f"pg-{h}.{self.gen}")
        os.makedirs(d)
        shutil.chown(d, "postgres", "postgres")
        return d

    def _as_pg(self, h, argv):
        return self.net.wrap(h, ["setpriv", "--reuid=postgres", "--regid=postgres",
                                 "--init-groups"] + argv)

    def start(self, h, source=None):
        """A new data directory: initdb, or a base backup of ``source``
        (then a streaming replica of it); the server in the foreground."""
        d = self._dir(h)
        data = os.path.join(d, "data")
        log = os.path.join(self.work, f"pg-{h}.log")
        if source is None:
            cmd = self._as_pg(h, [f"{PG_BIN}/initdb", "-D", data, "--auth=trust", "-U",
                                  "postgres", "-E", "UTF8", "--no-sync"])
        else:
            cmd = self._as_pg(h, [f"{PG_BIN}/pg_basebackup", "-h", self.net.hosts[source],
                                  "-p", str(PG_PORT), "-U", "postgres", "-D", data, "-R",
                                  "-X", "stream", "-c", "fast", "--no-sync"])
        with open(log, "ab") as f:
            subprocess.run(cmd, stdout=f, stderr=f, timeout=60, check=True)
        if source is None:
            subnet = self.net.subnet + ".0/24"
            with open(os.path.join(data, "pg_hba.conf"), "a") as f:
                f.write(f"host all all {subnet} trust\nhost replication all {subnet} trust\n")
        # The server runs under libfaketimeMT reading its clock offset from a
        # file of its own on every call (store-clock-step rewrites the
        # primary's); monotonic clocks stay real (its timeouts).
        self.clocks[h] = clock_file(self.work, h)
        argv = ["env", f"LD_PRELOAD={FAKETIME_MT}", f"FAKETIME_TIMESTAMP_FILE={self.clocks[h]}",
                "FAKETIME_NO_CACHE=1", "FAKETIME_DONT_FAKE_MONOTONIC=1",
                f"{PG_BIN}/postgres", "-D", data, "-k", d, "-p", str(PG_PORT),
                "-c", f"listen_addresses={self.net.hosts[h]}", "-c", "fsync=off",
                "-c", "max_connections=100", "-c", "wal_keep_size=256MB",
                "-c", "wal_receiver_status_interval=1", "-c", "wal_retrieve_retry_interval=500ms",
                "-c", "synchronous_commit=on"]
        if self.synchronous:
            # The replica's walreceiver (not a pg_basebackup's WAL stream).
            argv += ["-c", "synchronous_standby_names=walreceiver"]
        self.procs[h] = Proc(f"pg-{h}", self._as_pg(h, argv), log)
        wait_for(f"postgres on {h}", lambda: sh(
            f"{PG_BIN}/pg_isready", "-h", self.net.hosts[h], "-p", str(PG_PORT), "-U", "postgres",
            ns=self.net.ns[h], check=False).returncode == 0, 30)
        if source is not None:
            want = "sync" if self.synchronous else "async"
            wait_for(f"{h} streaming from {source} ({want})", lambda: self.sql(
                source, "select count(*) from pg_stat_replication where state = 'streaming' "
                f"and sync_state = '{want}'", check=False) == "1", 30)
        # The host's delay proxy, new with each data directory (a promotion
        # kills every process of the old primary's host, its proxy too).
        if h in self.proxies:
            self.proxies[h].stop()
        self.proxies[h] = DelayProxy(self.net, self.work, h, PG_PROXY, PG_PORT)

    def sql(self, h, query, check=True):
        r = sh("psql", "-h", self.net.hosts[h], "-p", str(PG_PORT), "-U", "postgres",
               "-d", "postgres", "-Atqc", query, ns=self.net.ns[h], check=check)
        return r.stdout.strip()

    def caught_up(self, primary, replica):
        """Waits (at most 3 s) until the replica has replayed the primary's WAL."""
        lsn = self.sql(primary, "select pg_current_wal_lsn()", check=False)
        if lsn:
            procs.wait_until(lambda: self.sql(
                replica, f"select pg_last_wal_replay_lsn() >= '{lsn}'::pg_lsn",
                check=False) == "t", 3)

    def kill_primary(self, h):
        self.kill_host(h)

    def promote(self, h):
        if self.sql(h, "select pg_promote(true, 30)") != "t":
            raise RuntimeError(f"pg_promote on {h} did not complete")

    def kill_host(self, h):
        """SIGKILL of every process in the host (postmaster and backends: a
        backend is a process group of its own, so not the postmaster's group)."""
        for pid in sh("ip", "netns", "pids", self.net.ns[h], check=False).stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        self.procs[h].kill()
        procs.wait_until(lambda: not sh("ip", "netns", "pids", self.net.ns[h],
                                        check=False).stdout.split(), 5)

    def url(self, opts):
        # The servers run with fsync=off (throwaway data, a simulated
        # network; a killed server keeps what the OS has): the store refuses
        # that unless the URL names it.
        opts = f"{opts}&sql_allow_unsafe=fsync" if opts else "sql_allow_unsafe=fsync"
        return f"postgres://postgres@{self.net.hosts[self.primary]}:{PG_PROXY}/postgres?{opts}"

    def inject(self, kind, rng):
        if kind == "promotion":
            # As Redis's failover: servers stopped (slots released, the
            # replica has it), replication cut while a CLI holder restarts
            # and claims, the primary's host killed, the replica promoted,
            # the servers started with it at once; then the old host is
            # rebuilt as the new primary's replica. Synchronous: the claim
            # made during the cut never commits (the primary waits for the
            # replica) and the holder issues nothing on it; asynchronous: it
            # commits on the primary alone and is lost with it.
            old, new, during = self.cut_kill_promote(wait_always=True)
            t = time.monotonic()
            self.start(old, source=new)
            return (f"promotion: replication {new}<-{old} cut for {LAG_S} s{during}, {old} "
                    f"killed (SIGKILL of every process), {new} promoted, servers started with "
                    f"it, {old} rebuilt as its replica (pg_basebackup, "
                    f"{time.monotonic() - t:.1f} s)"), None
        return self.primary_fault(kind, rng)

    def stop(self):
        for p in self.proxies.values():
            p.stop()
        for p in self.procs.values():
            p.stop()
        for h in list(self.procs):
            self.kill_host(h)
        for d in self.dirs.values():
            shutil.rmtree(d, ignore_errors=True)


class PostgresAsync(Postgres):
    """The control: the same pair with asynchronous replication."""

    synchronous = False


# MariaDB: its own module, which uses the delay proxy above.
from mariadb import MariaDB, MariaDBNonDurable  # noqa: E402

STORES = {"file": FileStore, "etcd": Etcd, "redis": Redis}
STORES["postgres"] = Postgres
STORES["mysql"] = MariaDB  # mariadb.py
STORES["zookeeper"] = ZooKeeper


# Configurations whose store is set up differently (main.CONFIGS names them).
VARIANTS = {"postgres primary/replica, asynchronous replication": PostgresAsync,
            "mariadb, non-durable commits": MariaDBNonDurable}
