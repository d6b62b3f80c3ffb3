"""etcd's members, and the ``restore`` fault (docs/HARNESS.md): the cluster
replaced by one restored from a snapshot taken a few seconds before, as an
operator restoring a lost cluster from its last backup would.

The fault has the shape of Redis's failover (stores.PrimaryReplica): the
servers stopped (their slots released), ``etcdctl snapshot save``, a CLI
holder restarted (its claim, and every claim after the snapshot, only in the
old cluster); meanwhile ``etcdctl snapshot restore`` makes a new cluster of
three members from the snapshot (a new cluster token and new peer ports: a
new cluster ID, at a lower revision) on the same hosts, on ports of its own.
Once it has a leader, every delay proxy sends new connections to it, the
old members are SIGKILLed (so no client keeps talking to them) and the
servers start at once: they claim the slots free in the snapshot, among them
those whose holders still issue under reservations the old cluster
confirmed. The lease's etcd fence (lease/src/etcd/fence.rs: the holders'
memory of cluster ID and revision, the space's marker naming the old
cluster) fences those claims above every such reservation; the control build
(``no-etcd-fence``) does not, and issues their IDs again."""

import json
import os
import shutil
import subprocess
import time

from hosts import wait_for
from procs import Proc

ETCD_CLIENT, ETCD_PEER = 2379, 2380
# Each restored cluster listens this much above the one it replaced.
GEN_PORTS = 100
LAG_S = 3  # seconds of claims and IDs after the snapshot, before the switch
# The switch comes this long after a confirmation of the restarted holder's
# lease (its renewals are sent renew_ms, 1000, after the one before), so
# that it issues on for a while on the old cluster's reservation: a switch
# just before its renewal (3 s after the snapshot: its third) made it lose its
# slot before any server had claimed that, and the control issued no
# duplicate (20261129-125611-etcd-control-2, 20261129-130334-etcd-control-1).
PHASE_S = 0.4
RENEW_S = 1.0
TIMEOUT_S = 60  # a snapshot save or restore


class Members:
    """Mixin of stores.Etcd (``net``, ``work``, ``hosts``, ``members``,
    ``proxies``, ``leader()``): members of cluster generation ``gen`` (0:
    the first; each restore one more)."""

    gen = 0
    hooks = None  # the run's failover hooks (run.Run), set by the run

    def member_port(self, gen=None):
        """The members' client port (the proxies forward to it)."""
        return ETCD_CLIENT + GEN_PORTS * (self.gen if gen is None else gen)

    def member_argv(self, h, gen=None):
        """The command of ``h``'s member of generation ``gen``; its data
        directory ``etcd-<h>`` (restored ones: ``etcd-<h>.r<gen>``)."""
        gen = self.gen if gen is None else gen
        a = self.net.hosts[h]
        peer = ETCD_PEER + GEN_PORTS * gen
        client = self.member_port(gen)
        return self.net.wrap(h, [
            "etcd", "--name", h, "--data-dir", self.data_dir(h, gen),
            "--listen-client-urls", f"http://{a}:{client}",
            "--advertise-client-urls", f"http://{a}:{client}",
            "--listen-peer-urls", f"http://{a}:{peer}",
            "--initial-advertise-peer-urls", f"http://{a}:{peer}",
            "--initial-cluster", self.initial_cluster(gen), "--initial-cluster-state", "new",
            "--initial-cluster-token", self.token(gen),
            "--heartbeat-interval", "100", "--election-timeout", "1000",
        ])

    def data_dir(self, h, gen):
        return os.path.join(self.work, f"etcd-{h}" + (f".r{gen}" if gen else ""))

    def token(self, gen):
        return os.path.basename(self.work) + (f"-restored-{gen}" if gen else "")

    def initial_cluster(self, gen):
        peer = ETCD_PEER + GEN_PORTS * gen
        return ",".join(f"{h}=http://{self.net.hosts[h]}:{peer}" for h in self.hosts)

    def upstream_file(self, h):
        """The proxy's --to-file on ``h``: the members' address it forwards to."""
        path = os.path.join(self.work, f"upstream-{h}")
        tmp = path + ".new"
        with open(tmp, "w") as f:
            f.write(f"{self.net.hosts[h]}:{self.member_port()}\n")
        os.replace(tmp, path)
        return path

    def etcdctl(self, h, *args):
        """etcdctl in ``h``'s namespace (at most TIMEOUT_S); fails with its output."""
        argv = self.net.wrap(h, ["etcdctl", *args])
        r = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S,
                           env=dict(os.environ, ETCDCTL_API="3"))
        if r.returncode:
            raise RuntimeError(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr.strip()}")

    def restore(self):
        """The ``restore`` fault; returns its record line."""
        old, gen = dict(self.members), self.gen + 1
        src = self.leader() or self.hosts[0]
        db = os.path.join(self.work, f"etcd-snapshot-{gen}.db")
        hooks = self.hooks
        if hooks:
            hooks.failover_servers_down()
        t0 = time.monotonic()
        self.etcdctl(src, f"--endpoints=http://{self.net.hosts[src]}:{self.member_port()}",
                     "--command-timeout=30s", "snapshot", "save", db)
        restarted = hooks.failover_holder_restart() if hooks else None
        new = {}
        try:
            for h in self.hosts:
                a = f"http://{self.net.hosts[h]}:{ETCD_PEER + GEN_PORTS * gen}"
                self.etcdctl(h, "snapshot", "restore", db, "--data-dir", self.data_dir(h, gen),
                             "--name", h, "--initial-cluster", self.initial_cluster(gen),
                             "--initial-advertise-peer-urls", a,
                             "--initial-cluster-token", self.token(gen))
                new[h] = Proc(f"etcd-{h}.r{gen}", self.member_argv(h, gen),
                              os.path.join(self.work, f"etcd-{h}.log"))
            self.members, self.gen = new, gen  # leader() asks the new members
            wait_for("a leader of the restored etcd cluster", lambda: self.leader(), 30)
        except BaseException:
            self.members = {**old, **{f"{h}.r{gen}": p for h, p in new.items()}}
            raise
        time.sleep(max(0.0, LAG_S - (time.monotonic() - t0)))
        if restarted:
            switch_between_renewals(hooks, restarted)
        lag = time.monotonic() - t0
        for h in self.hosts:
            self.upstream_file(h)
        # Once every proxy forwards to the new members, no client may reach
        # the old ones (a holder renewing there would never learn of the
        # restore): their connections end with them.
        time.sleep(0.1)
        for p in old.values():
            p.kill()
            p.stop()
        # Their data (each member preallocates 64 MB of write-ahead log)
        # and the snapshot are not needed again.
        for h in self.hosts:
            shutil.rmtree(self.data_dir(h, gen - 1), ignore_errors=True)
        os.remove(db)
        if hooks:
            hooks.failover_servers_up()
        during = f", {restarted} restarted (SIGKILL) after it" if restarted else ""
        return (f"restore: snapshot of {src}{during}; the cluster replaced {lag:.1f} s later "
                f"by one restored from it (etcdctl snapshot restore, token {self.token(gen)}, "
                f"ports {self.member_port()}/{ETCD_PEER + GEN_PORTS * gen}), old members "
                "SIGKILLed, servers started with it")


def switch_between_renewals(run, name):
    """Waits (at most RENEW_S) until PHASE_S after the last confirmation that
    holder ``name`` of ``run`` (run.Run) wrote, or a whole number of renewal
    periods after it: its next renewal, to the restored cluster, is then
    RENEW_S - PHASE_S away."""
    path = os.path.join(run.dir, "holders", f"{name}.{run.incarnation[name]}.out")
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.path.getsize(path) - 4096))
            lines = [x for x in f.read().splitlines() if x.startswith(b'{"lease"')]
        confirmed = json.loads(lines[-1])["lease"]["confirmed_at_ms"] / 1000
    except (OSError, IndexError, ValueError, KeyError, TypeError):
        return  # no lease line yet (the holder has no slot)
    wait = (confirmed + PHASE_S - time.time()) % RENEW_S
    time.sleep(wait)
