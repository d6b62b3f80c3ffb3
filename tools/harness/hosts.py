"""Hosts: Linux network namespaces joined by veth pairs to one bridge.

Every name a run creates starts with its prefix (``smh<pid>``): the bridge
``smh<pid>br``, the namespaces ``smh<pid>-<host>``, the veths
``smh<pid>v<i>`` (host side) and ``smh<pid>p<i>`` (moved into the namespace).
``cleanup(prefix)`` removes whatever is left of a run by that prefix, and
``Net.close`` runs it at the end of every run, failed or not.

Faults are nftables rules in a table ``smh`` inside the host's own namespace
(never in the machine's), so removing the namespace removes them too.
"""

import os
import re
import signal
import subprocess
import time

TIMEOUT = 10  # seconds, for every ip/nft command


def sh(*argv, check=True, ns=None, quiet=False):
    """Runs one command (in namespace ``ns`` if given), bounded in time."""
    if ns is not None:
        argv = ("ip", "netns", "exec", ns) + argv
    r = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr.strip()}")
    return r


def ours(prefix, name):
    """Whether ``name`` is a namespace, bridge or veth of the run ``prefix``
    (``smh``: of any run). Not merely a name starting with the prefix: the
    run of pid 1234 must not remove the one of pid 12345, which may be
    running beside it."""
    run = re.escape(prefix) + (r"\d+" if prefix == "smh" else "")
    return re.fullmatch(run + r"(-.+|br|[vp]\d+)", name) is not None


def cleanup(prefix):
    """Removes every namespace, process in it, bridge and veth of the run
    ``prefix`` (``smh``: of every run)."""
    if not re.fullmatch(r"smh\d*", prefix):
        raise ValueError("harness names start with 'smh' and a run's pid")
    for name in sh("ip", "netns", "list", check=False).stdout.split():
        if ours(prefix, name):
            # Processes left in the namespace would keep nothing alive (the
            # namespace goes with its last process), but end them anyway.
            pids = sh("ip", "netns", "pids", name, check=False).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            sh("ip", "netns", "del", name, check=False)
    for line in sh("ip", "-o", "link", "show", check=False).stdout.splitlines():
        parts = line.split(":")
        if len(parts) > 1:
            dev = parts[1].strip().split("@")[0]
            if ours(prefix, dev):
                sh("ip", "link", "del", dev, check=False)


class Net:
    """One run's hosts: ``hosts`` maps a host name to its address."""

    def __init__(self, prefix, subnet, names):
        self.prefix = prefix
        self.subnet = subnet  # e.g. 10.77.42 (a /24)
        self.bridge = f"{prefix}br"
        self.hosts = {}
        self.ns = {}
        self.faults = {}  # host -> list of rule texts in force
        assert len(self.bridge) <= 15, self.bridge
        try:
            sh("ip", "link", "add", self.bridge, "type", "bridge")
            sh("ip", "link", "set", self.bridge, "up")
            for i, name in enumerate(names):
                self._add(i, name)
        except BaseException:
            self.close()
            raise

    def _add(self, i, name):
        ns = f"{self.prefix}-{name}"
        outer, inner = f"{self.prefix}v{i}", f"{self.prefix}p{i}"
        addr = f"{self.subnet}.{10 + i}"
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", outer, "type", "veth", "peer", "name", inner)
        sh("ip", "link", "set", inner, "netns", ns)
        sh("ip", "link", "set", outer, "master", self.bridge, "up")
        sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", inner)
        sh("ip", "-n", ns, "link", "set", inner, "up")
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("nft", "add", "table", "inet", "smh", ns=ns)
        sh("nft", "add", "chain", "inet", "smh", "in",
           "{ type filter hook input priority 0 ; policy accept ; }", ns=ns)
        sh("nft", "add", "chain", "inet", "smh", "out",
           "{ type filter hook output priority 0 ; policy accept ; }", ns=ns)
        self.hosts[name] = addr
        self.ns[name] = ns
        self.faults[name] = []

    def wrap(self, host, argv):
        """``argv`` to run inside ``host``'s namespace."""
        return ["ip", "netns", "exec", self.ns[host]] + list(argv)

    def reachable(self, src, dst, port):
        """Whether a TCP connection from ``src`` to ``dst``:``port`` opens (2 s bound)."""
        r = sh("timeout", "2", "bash", "-c", f"exec 3<>/dev/tcp/{self.hosts[dst]}/{port}",
               ns=self.ns[src], check=False)
        return r.returncode == 0

    # Faults ---------------------------------------------------------------

    def partition(self, host):
        """Cuts ``host`` from every other host, both ways (loopback stays)."""
        ns = self.ns[host]
        sh("nft", "add", "rule", "inet", "smh", "in", "iifname", "!=", "lo", "drop", ns=ns)
        sh("nft", "add", "rule", "inet", "smh", "out", "oifname", "!=", "lo", "drop", ns=ns)
        self.faults[host].append("partition")

    def drop_replies(self, host, port):
        """One-way loss: requests to ``host``'s TCP ``port`` arrive, its replies
        (packets from that port) are dropped."""
        sh("nft", "add", "rule", "inet", "smh", "out", "oifname", "!=", "lo",
           "tcp", "sport", str(port), "drop", ns=self.ns[host])
        self.faults[host].append(f"drop-replies:{port}")

    def isolate_from(self, host, others):
        """Blackhole routes in ``host`` to each of ``others`` (a minority cut)."""
        for o in others:
            sh("ip", "-n", self.ns[host], "route", "add", "blackhole", f"{self.hosts[o]}/32")
        self.faults[host].append("blackhole:" + ",".join(others))

    def heal(self, host):
        """Removes every fault rule and blackhole route of ``host``."""
        ns = self.ns[host]
        sh("nft", "flush", "chain", "inet", "smh", "in", ns=ns)
        sh("nft", "flush", "chain", "inet", "smh", "out", ns=ns)
        for f in self.faults[host]:
            if f.startswith("blackhole:"):
                for o in f.split(":", 1)[1].split(","):
                    sh("ip", "-n", ns, "route", "del", "blackhole",
                       f"{self.hosts[o]}/32", check=False)
        self.faults[host] = []

    def heal_all(self):
        for h in self.hosts:
            if self.faults[h]:
                self.heal(h)

    def close(self):
        cleanup(self.prefix)


def wait_for(what, probe, seconds):
    """Polls ``probe`` until it is true; fails naming ``what`` after ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if probe():
            return
        time.sleep(0.1)
    raise RuntimeError(f"timed out after {seconds} s waiting for {what}")
