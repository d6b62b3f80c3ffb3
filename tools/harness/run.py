"""One harness run: hosts, a store cluster, holders and servers, a fault
schedule, then the checker; writes schedule.json, record.txt and result.json
in the run's folder."""

import json
import os
import random
import signal
import subprocess
import threading
import time

import check
import hosts
import phases
import procs
import stores
from procs import Proc

FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
PYHOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyholder.py")
NODEHOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nodeholder.mjs")
SERVER_PORT = 7610
CLOCK_STEP_S = 20
# The first clock steps of a run go to CLI holders: the controls that need
# them (file store, ZooKeeper) remove a protection from the CLI's build, and
# the Python holder runs the normal binding.
CLI_CLOCK_STEPS = 2
# How long a due holder-clock-step waits for a holder with a slot.
DEFER_S = 20
# How long Run.make_room keeps the others down for a CLI holder to take a slot.
ROOM_S = 10
# How long a holder-clock-step lasts at most while its holder has not issued;
# until then (or it issues) only the stepped holder is restarted, with its
# step (Run.step_window).
STEP_CLAIM_S = 15
# On the file store, how long a killed CLI holder stays down while the Python
# or Node holder waits for a slot (Run.restart_delay).
FILE_YIELD_S = 3.0
# The starved control's phase lasts at least this long.
STARVE_S = 2.0


def end_input(p):
    """Ends a CLI holder the way its input ending does: its feeder (the
    ``python3 -c`` in its session) killed, the CLI reads end of input,
    releases its slot and exits. Waited for 5 s at most, then SIGKILL.
    Returns whether it exited by itself (else its slot frees only when its
    claim expires)."""
    for pid in procs.session_members(p.pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv[:2] == [b"python3", b"-c"]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    if not procs.wait_until(lambda: not p.alive(), 5):
        p.kill()
        return False
    return True


class Interrupted(Exception):
    pass


def _on_signal(signum, frame):
    raise Interrupted(f"signal {signum}")


def make_schedule(seed, seconds, store_kinds, client_kinds, required=(), first=1):
    """Faults at seeded times: each starts, lasts a few seconds, and ends
    (healed, restarted, continued) before the next one starts. The required
    kinds take the events from index ``first`` on (see below)."""
    rng = random.Random(seed)
    events, t = [], 6.0
    kinds = list(store_kinds) + list(client_kinds)
    while kinds and t < seconds - 8:
        kind = rng.choice(kinds)
        length = round(rng.uniform(2.0, 6.0), 1)
        events.append({"at": round(t, 1), "kind": kind, "seconds": length})
        t += length + rng.uniform(2.0, 5.0)
    # The faults a store's control runs exist for come at least twice, so
    # that every schedule, short ones too, can catch the control.
    # Each takes the second and the middle event (a second required kind the
    # events after those), else the first others, but never an event that
    # is already of a required kind (which would leave it once).
    n = len(events)
    for j, kind in enumerate(required):
        have = sum(e["kind"] == kind for e in events)
        spots = [i for i in dict.fromkeys((first + j, n // 2 + first + j, *range(n)))
                 if i < n and events[i]["kind"] not in required]
        for i in spots[:max(0, 2 - have)]:
            events[i]["kind"] = kind
    # With ``first`` 0, the first required kind is the first fault (its
    # kind swapped with the first event's).
    k = next((i for i, e in enumerate(events) if required and e["kind"] == required[0]), None)
    if first == 0 and k:
        events[0]["kind"], events[k]["kind"] = events[k]["kind"], events[0]["kind"]
    return events


class Run:
    def __init__(self, cfg):
        self.cfg = cfg
        self.dir = cfg["dir"]
        os.makedirs(os.path.join(self.dir, "holders"), exist_ok=True)
        # Each holder's and server's record of the IDs it issued, written
        # before it hands them out (check.py: the issued IDs).
        os.makedirs(os.path.join(self.dir, "issued"), exist_ok=True)
        self.record = []  # (offset s, text)
        self.rng = random.Random(cfg["seed"] + 1)
        self.t0 = time.monotonic()
        self.incarnation = {}
        self.holders, self.servers = {}, {}
        self.dead_since = {}
        self.stepped = {}  # holder -> until when its restarts keep the clock step
        # (stepped holder, until): the others' restarts wait until it has
        # issued (step_taken), STEP_CLAIM_S at most.
        self.step_window = (None, 0.0)
        # (CLI holder, until): Run.make_room's window, at most once per step.
        self.room = None
        self.clock_steps = 0
        self.hold = None  # (stepped holder, until): the fault lasts until it issues
        self.held = set()  # servers kept down by a failover until the promotion
        # For the no-vacuous-pass check (phases.py): the faults' and the
        # loop's wall-clock times, and how far each holder incarnation's
        # output had grown when (sampled every loop turn), so that its IDs
        # are placed in time by the machine's clock, not by their stepped one.
        self.timeline = {"faults": [], "starved": None}
        self.progress = open(os.path.join(self.dir, "holders", "progress.tsv"), "w")
        self.sizes = {}  # output file -> last size written to progress

    def note(self, text):
        line = (round(time.monotonic() - self.t0, 1), text)
        self.record.append(line)
        print(f"  [{self.cfg['name']}] {line[0]:7.1f}s {text}", flush=True)

    # Clients ---------------------------------------------------------------

    def opts(self):
        # A store may need longer calls than 1 s (ZooKeeper: stores.py).
        timeout = getattr(self.store, "timeout_ms", 1000)
        skew = getattr(self.store, "max_skew_ms", None)
        return (f"namespace={self.cfg['namespace']}&ttl_ms=3000&renew_ms=1000"
                f"&window_ms=2000&timeout_ms={timeout}"
                + (f"&max_skew_ms={skew}" if skew else ""))

    def sample(self, names=None):
        """Records the size of each holder's current output file when it grew
        (the time it was seen at: milliseconds, this machine's clock)."""
        now = int(time.time() * 1000)
        for name in names or list(self.holders):
            f = f"{name}.{self.incarnation[name]}.out"
            try:
                size = os.path.getsize(os.path.join(self.dir, "holders", f))
            except OSError:
                continue
            if size != self.sizes.get(f, 0):
                self.sizes[f] = size
                self.progress.write(f"{f}\t{now}\t{size}\n")

    def start_holder(self, name, host, step=False):
        """A CLI holder (cli*), or the Python holder (py*): pyholder.py on the
        binding, in the harness's venv, writing the same lines."""
        if name in self.holders:
            self.sample([name])  # the ended incarnation's last output
        k = self.incarnation[name] = self.incarnation.get(name, 0) + 1
        out = open(os.path.join(self.dir, "holders", f"{name}.{k}.out"), "wb")
        issued = os.path.join(self.dir, "issued", f"{name}.{k}")
        self.progress.write(f"{name}.{k}.out\t{wall_ms()}\tstart\n")
        # Where its messages begin in the holder's log, and how far its clock
        # is behind (phases.py places its fence messages in real time).
        log = os.path.join(self.dir, f"{name}.log")
        pos = os.path.getsize(log) if os.path.exists(log) else 0
        self.progress.write(f"{name}.{k}.out\t{pos}\tlog\n")
        if step:
            self.progress.write(f"{name}.{k}.out\t{self.clock_step_s() * 1000}\tbehind\n")
        if name.startswith("py"):
            # The Python process is the holder: libfaketime goes on it.
            cmd = (f"LD_PRELOAD=\"$SMH_PRELOAD\" exec {self.cfg['python']} {PYHOLDER} "
                   f"--lease \"$SMH_LEASE\" --burst {self.cfg['burst']} --issued-log {issued}")
        elif name.startswith("node"):
            # The Node holder (nodeholder.mjs), the same way.
            cmd = (f"LD_PRELOAD=\"$SMH_PRELOAD\" exec node {NODEHOLDER} --project "
                   f"{self.cfg['node']} --lease \"$SMH_LEASE\" --burst {self.cfg['burst']} "
                   f"--layout '{check.Layout.DESCRIPTOR}' --datacenter {check.Layout.DATACENTER} "
                   f"--issued-log {issued}")
        else:
            # Bursts of `burst` IDs, 100 a second: paced so that a long run's
            # IDs (all kept for the checker) stay within disk and sort bounds.
            feed = ("import sys,time\nwhile 1: sys.stdout.write('%d\\n'); sys.stdout.flush(); "
                    "time.sleep(0.01)" % self.cfg["burst"])
            # Only the CLI's clock is stepped (libfaketime), not its feeder's.
            cmd = (f"python3 -c \"{feed}\" | LD_PRELOAD=\"$SMH_PRELOAD\" exec {self.cfg['cli']} "
                   "generate --layout "
                   f"'{check.Layout.DESCRIPTOR}' --node datacenter={check.Layout.DATACENTER} "
                   f"--lease \"$SMH_LEASE\" --on-demand --lease-lines --clock-backwards wait:5 "
                   f"--issued-log {issued}")
        env = {"SMH_LEASE": self.store.url(self.opts()), "SMH_PRELOAD": "",
               "SNOWMINT_HARNESS_CONTROL": self.cfg.get("control_build", ""),
               "FAKETIME": f"-{self.clock_step_s()}s", "DONT_FAKE_MONOTONIC": "1"}
        if step:
            env["SMH_PRELOAD"] = FAKETIME_LIB
        p = Proc(f"{name}.{k}", self.net.wrap(host, ["bash", "-c", cmd]),
                 os.path.join(self.dir, f"{name}.log"), env=env, stdout=out)
        out.close()
        self.holders[name] = (p, host)

    def has_slot(self, name):
        """Whether the holder's incarnation runs and has issued (so it holds a slot)."""
        p, _ = self.holders[name]
        out = os.path.join(self.dir, "holders", f"{name}.{self.incarnation[name]}.out")
        return p.alive() and os.path.getsize(out) > 0

    def step_candidates(self):
        """The holders the next holder-clock-step may choose from (only CLI
        holders for a run's first CLI_CLOCK_STEPS steps), and those of them
        that have a slot."""
        names = sorted(self.holders)
        if self.clock_steps < CLI_CLOCK_STEPS:
            names = [n for n in names if n.startswith("cli")]
        return names, [n for n in names if self.has_slot(n)]

    def ready_for(self, kind, late):
        """Whether a due fault starts now. A holder-clock-step waits (up to
        DEFER_S) for a holder with a slot: a step of one without leaves no
        slot to take, and on a loaded machine a network store's holders can
        all be between slots for seconds (20261126-140956-zookeeper-control-1:
        ZooKeeper answering late, both CLI holders churning, the first step
        of a slotless holder); for a CLI holder's step it makes room for
        one (make_room)."""
        if kind != "holder-clock-step" or late >= DEFER_S:
            return True
        # And for a store that can say so, while it answers: a step during
        # an election leaves the restart nothing to claim from
        # (20261129-001116-zookeeper-control-1: two leader kills in a row,
        # every stepped claim refused or unanswered until the run ended).
        answering = getattr(self.store, "answering", None)
        if answering and not answering():
            return False
        names, with_slot = self.step_candidates()
        if not with_slot and self.clock_steps < CLI_CLOCK_STEPS:
            self.make_room(names)
        return bool(with_slot)

    def make_room(self, clis):
        """For a CLI holder's step while no CLI holder has a slot (the
        Python and Node holders took them while the CLI ones churned, e.g. on
        a ZooKeeper slow to answer after its start): once, a SIGKILL of a
        packaged holder with a slot and of every other slotless holder, and
        until one CLI holder has issued (ROOM_S at most) nobody but it is
        restarted, so that it takes the freed slot when its claim expires.
        Without it such a step stepped a holder without a slot, which had
        no slot to take over (20261130-151450-zookeeper-control-2: its
        first step; every slot held for its 15 s)."""
        if self.room is not None or not clis:
            return
        packaged = sorted(n for n in self.holders if not n.startswith("cli") and self.has_slot(n))
        name = self.rng.choice(clis)
        self.room = (name, time.monotonic() + ROOM_S)
        victim = self.rng.choice(packaged) if packaged else None
        if victim:
            self.holders[victim][0].kill()
        self.kill_slotless(name)
        self.note(f"room for a CLI holder's step: no CLI holder has a slot; "
                  f"{victim or 'nobody'} SIGKILLed, only {name} restarted until it "
                  f"issues ({ROOM_S} s at most)")

    def holding(self):
        """Whether the fault in force is a clock step whose holder has not
        issued yet (within STEP_CLAIM_S): it lasts until then."""
        if self.hold:
            name, until = self.hold
            if time.monotonic() < until and not self.has_slot(name):
                return True
            self.hold = None
        return False

    def kill_slotless(self, keep):
        """SIGKILL of every running holder but ``keep`` that has issued
        nothing (one trying for a slot), so that the slot ``keep`` releases
        goes to its stepped restart. The supervisor restarts them after
        the step's window."""
        for name, (p, _) in self.holders.items():
            if name != keep and p.alive() and not self.has_slot(name):
                p.kill()

    def pause_slotless_servers(self):
        """SIGSTOP of every running server whose /readyz is not 200 (one
        waiting for a slot, which its background claims would take before
        the stepped restart: servers claim a lost or missing lease again
        on their own). Returns the undo: SIGCONT of those."""
        paused = []
        for name, (p, host) in self.servers.items():
            port = SERVER_PORT + int(name[-1])
            url = f"http://{self.net.hosts[host]}:{port}/readyz"
            r = subprocess.run(self.net.wrap(host, ["curl", "-s", "-o", "/dev/null", "-m", "1",
                                                    "-w", "%{http_code}", url]),
                               capture_output=True, text=True, check=False)
            if p.alive() and r.stdout.strip() != "200":
                p.signal(signal.SIGSTOP)
                paused.append(p)

        def undo():
            for p in paused:
                p.signal(signal.SIGCONT)
        return paused, undo

    def clock_step_s(self):
        """How far back a holder-clock-step restarts a CLI holder: 20 s, or
        the store's own step (a network store refuses past max_skew_ms)."""
        return getattr(self.store, "clock_step_s", CLOCK_STEP_S)

    def start_server(self, name, host):
        k = self.incarnation[name] = self.incarnation.get(name, 0) + 1
        port = SERVER_PORT + int(name[-1])
        argv = [self.cfg["server"], "--layout", check.Layout.DESCRIPTOR,
                "--node", f"datacenter={check.Layout.DATACENTER}",
                "--listen", f"{self.net.hosts[host]}:{port}",
                "--token-file", self.token_file,
                "--issued-log", os.path.join(self.dir, "issued", f"{name}.{k}"),
                # Plain HTTP with tokens on a non-loopback address: the
                # addresses are the run's own network namespaces on this
                # machine, so nothing crosses a real network.
                "--insecure"]
        env = {"SNOWMINT_LEASE": self.store.url(self.opts()),
               "SNOWMINT_HARNESS_CONTROL": self.cfg.get("control_build", "")}
        p = Proc(f"{name}.{k}", self.net.wrap(host, argv),
                 os.path.join(self.dir, f"{name}.log"), env=env)
        with open(os.path.join(self.dir, "servers.tsv"), "a") as f:
            f.write(f"server-{name}\t{wall_ms()}\n")
        self.servers[name] = (p, host)

    def supervise(self):
        """Restarts holders and servers that ended (after restart_delay).
        Six of them share four slots, so two at a time have none (each exits, all slots
        held, and is restarted); after a holder-clock-step only the stepped
        holder is restarted until it has issued (STEP_CLAIM_S at most), so
        that it, not that one, takes the slot its predecessor leaves."""
        now = time.monotonic()
        stepped, until = self.step_window
        if self.room and now < self.room[1] and now >= until:
            stepped, until = self.room
        for group, start in ((self.holders, self.start_holder), (self.servers, self.start_server)):
            for name, (p, host) in list(group.items()):
                if name in self.held:
                    continue
                if p.alive():
                    self.dead_since.pop(name, None)
                    continue
                if name not in self.dead_since and group is self.holders:
                    self.progress.write(f"{name}.{self.incarnation[name]}.out\t{wall_ms()}\tend\n")
                since = self.dead_since.setdefault(name, now)
                if now < until and name != stepped:
                    continue
                if now - since >= self.restart_delay(name, group, stepped, until, now):
                    self.dead_since.pop(name)
                    p.stop()
                    if self.stepped.get(name, 0) > now:
                        start(name, host, step=True)
                    else:
                        start(name, host)

    def step_taken(self):
        """Ends the step's window once its holder has issued: from then on
        the others are restarted again, and its own restarts are not stepped."""
        stepped, until = self.step_window
        if stepped and time.monotonic() < until and self.has_slot(stepped):
            self.note(f"step: {stepped} issued (its claim came "
                      f"{STEP_CLAIM_S - (until - time.monotonic()):.1f} s after the step)")
            self.step_window = (None, 0.0)
            self.stepped.pop(stepped, None)

    def restart_delay(self, name, group, stepped, until, now):
        """Seconds a participant stays down before its restart: 0.5, or on
        the file store FILE_YIELD_S for a CLI holder while the Python or
        Node holder has no slot. There a killed holder's slot frees at once
        (its lock goes with the process) and the CLI holder, restarted
        first, took it back every time: the packaged holders never held a
        slot in a file store run. Not for a clock step's holder."""
        if (self.cfg["store"] == "file" and group is self.holders and name.startswith("cli")
                and not (now < until and name == stepped)
                and any(n in self.holders and not self.has_slot(n) for n in ("py1", "node1"))):
            return FILE_YIELD_S
        return 0.5

    # Failover hooks: a store that fails over (Redis, PostgreSQL) calls them
    # so that claims land in the writes the promoted replica never sees, and
    # the restarted servers claim on it right after the promotion.

    def failover_servers_down(self):
        """SIGTERM of every server (each releases its slot), waited for (at
        most 10 s, then SIGKILL); kept down until failover_servers_up."""
        self.held.update(self.servers)
        for p, _ in self.servers.values():
            p.signal(signal.SIGTERM)
        for p, _ in self.servers.values():
            if not procs.wait_until(lambda p=p: not p.alive(), 10):
                p.kill()

    def failover_holder_restart(self):
        """SIGKILL of one CLI holder, started again at once (same store URL).
        A CLI holder: the Redis control's fence is removed from the CLI's
        build (and the servers'), not from the Python holder's binding."""
        name = self.rng.choice(sorted(n for n in self.holders if n.startswith("cli")))
        p, host = self.holders[name]
        p.kill()
        p.stop()
        self.start_holder(name, host)
        return name

    def failover_servers_up(self):
        """The servers kept down, started now (with the store's new URL)."""
        for name in sorted(self.held):
            p, host = self.servers[name]
            p.stop()
            self.start_server(name, host)
        self.held.clear()

    # Faults ----------------------------------------------------------------

    def inject(self, kind):
        """Starts one fault; returns (text, undo or None)."""
        if kind in ("holder-kill", "holder-stop", "holder-clock-step"):
            if kind == "holder-clock-step":
                names, with_slot = self.step_candidates()
                self.clock_steps += 1
                self.room = None
            else:
                names = sorted(self.holders)
                with_slot = [n for n in names if self.has_slot(n)]
            # A holder that has a slot: the one waiting for a slot is mostly
            # not running, and a step of it leaves no slot to take (the
            # controls' steps were lost that way: 20261126-121023-zookeeper-control-2).
            name = self.rng.choice(with_slot or names)
            p, host = self.holders[name]
            if kind == "holder-stop":
                p.signal(signal.SIGSTOP)
                return f"{kind} {name} (SIGSTOP)", lambda: p.signal(signal.SIGCONT)
            if kind == "holder-clock-step":
                # The first two steps (the controls' own, of CLI holders),
                # then every other one, end the holder's input: it releases
                # its slot and exits, and the stepped restart takes the slot
                # at once (its whole step before the predecessor's last IDs).
                # The others are a SIGKILL, whose slot frees only when its
                # claim expires (on a network store, within the 8 s step
                # or not: 20261126-135151-zookeeper-control-105 had two such
                # steps and no duplicate).
                how = "SIGKILL"
                undo = None
                graceful = self.clock_steps <= CLI_CLOCK_STEPS or self.clock_steps % 2 == 1
                if name.startswith("cli") and graceful:
                    how = "input ended: slot released"
                    self.kill_slotless(name)
                    paused, undo = self.pause_slotless_servers()
                    if paused:
                        how += f", {len(paused)} server(s) without a slot paused"
                    if not end_input(p):
                        how += " (not exited within 5 s: SIGKILL, its slot frees when it expires)"
                else:
                    p.kill()
                self.start_holder(name, host, step=True)
                # Until the stepped holder issues, STEP_CLAIM_S at most, the
                # others are not restarted (step_window) and the next fault
                # waits (hold): its claim is what the step tests. A window
                # of a fixed 6 s was not always enough on a loaded machine
                # (a CI run's zookeeper-control-104: its stepped holder
                # found every slot held, twenty times, and the control
                # was caught only on its third try).
                self.step_window = (name, time.monotonic() + STEP_CLAIM_S)
                self.hold = (name, time.monotonic() + STEP_CLAIM_S)
                text = f"{kind} {name} ({how}, restarted {self.clock_step_s()} s back)"
                if hasattr(self.store, "clock_step_s"):
                    # A network store: the killed holder's slot frees only
                    # when its claim expires, so the stepped holder's
                    # restarts (all slots held: it exits) keep the step
                    # until it issues (step_taken), STEP_CLAIM_S at most,
                    # whatever the fault's length.
                    self.stepped[name] = time.monotonic() + STEP_CLAIM_S
                return text, undo
            p.kill()
            return f"{kind} {name} (SIGKILL)", None
        if kind in ("server-kill", "server-stop"):
            name = self.rng.choice(sorted(self.servers))
            p, _ = self.servers[name]
            if kind == "server-stop":
                p.signal(signal.SIGSTOP)
                return f"{kind} {name} (SIGSTOP)", lambda: p.signal(signal.SIGCONT)
            p.kill()
            return f"{kind} {name} (SIGKILL)", None
        text, undo = self.store.inject(kind, self.rng)
        if getattr(self.store, "repoint", False):
            # The servers' configuration names the store: restart them with
            # the new primary (SIGTERM; the supervisor starts them again).
            # CLI holders keep running until their lease fails.
            self.store.repoint = False
            for p, _ in self.servers.values():
                p.signal(signal.SIGTERM)
            text += "; servers restarted with the new primary"
        return text, undo

    # The run ----------------------------------------------------------------

    def run(self):
        cfg = self.cfg
        store_cls = getattr(stores, "VARIANTS", {}).get(
            cfg["configuration"], stores.STORES[cfg["store"]])
        names = ["s1", "s2", "s3", "c1", "c2", "c3", "c4"]
        self.net = hosts.Net(cfg["prefix"], cfg["subnet"], names)
        try:
            self.note(f"hosts up: {', '.join(f'{h}={a}' for h, a in self.net.hosts.items())}")
            self.store = store_cls(self.net, self.dir, ["s1", "s2", "s3"])
            if hasattr(self.store, "hooks"):
                self.store.hooks = self
            self.note(f"store {cfg['store']} up")
            self.token_file = os.path.join(self.dir, "token")
            with open(os.open(self.token_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
                f.write(os.urandom(16).hex())
            # The file store is on one host: its holders and servers share it.
            hh = ["c1", "c1"]
            sh_ = ["c1", "c1"] if cfg["store"] == "file" else ["c2", "c3"]
            for i, h in enumerate(hh):
                self.start_holder(f"cli{i + 1}", h)
            for i, h in enumerate(sh_):
                self.start_server(f"srv{i + 1}", h)
            load_host = "c2" if cfg["store"] == "file" else "c4"
            servers = [f"srv{i + 1}=http://{self.net.hosts[h]}:{SERVER_PORT + i + 1}"
                       for i, h in enumerate(sh_)]
            for i, h in enumerate(sh_):
                # A server whose first store call timed out (a store cold
                # after its start, e.g. ZooKeeper's JVMs) has exited: the
                # supervisor starts it again meanwhile.
                port = SERVER_PORT + i + 1
                hosts.wait_for(f"{h}:{port}", lambda h=h, port=port: (
                    self.supervise() or self.net.reachable(h, h, port)), 60)
            # The fifth holder of four slots, started once the servers have
            # theirs: it has none until one is freed (a kill, a lost lease).
            fifth = "py1" if cfg.get("python_holder", True) else "cli3"
            self.start_holder(fifth, hh[0])
            # And a sixth, the Node holder (the same exception as py1's).
            sixth = "node1" if cfg.get("python_holder", True) else "cli4"
            self.start_holder(sixth, hh[0])
            self.load = Proc("load", self.net.wrap(load_host, [
                "python3", os.path.join(os.path.dirname(__file__), "load.py"),
                "--out", os.path.join(self.dir, f"load-{load_host}.jsonl"),
                "--seconds", str(cfg["seconds"] + 2), "--count", str(cfg["burst"]), "--token-file", self.token_file]
                + servers), os.path.join(self.dir, "load.log"))
            fifth_what = ("Python and Node holders (packages)" if fifth == "py1"
                          else "a third and a fourth CLI holder")
            self.note(f"clients up: CLI holders on {', '.join(hh)}, {fifth_what} "
                      f"on {hh[0]}, servers on {', '.join(sh_)}, load from {load_host}")
            stop = threading.Event()
            if hasattr(self.store, "serving"):
                threading.Thread(target=self.watch_store, args=(stop,), daemon=True).start()
            try:
                self.loop()
            finally:
                stop.set()
        finally:
            self.net.heal_all()
            for p, _ in list(self.holders.values()) + list(self.servers.values()):
                p.stop()
            self.sample()  # what the holders wrote until they ended
            self.progress.close()
            self.timeline.update(
                participants=sorted(self.holders) + [f"server-{s}" for s in sorted(self.servers)],
                burst=cfg["burst"])
            with open(os.path.join(self.dir, "timeline.json"), "w") as f:
                json.dump(self.timeline, f, indent=1)
            if hasattr(self, "load"):
                self.load.stop()
            if hasattr(self, "store"):
                self.store.stop()
            procs.stop_all()
            self.net.close()
            self.note("stopped every process, removed every namespace")

    def loop(self):
        start = time.monotonic()
        end = start + self.cfg["seconds"]
        pending = list(self.cfg["schedule"])
        active = None  # (end time, undo, text, timeline entry)
        faults = self.timeline["faults"]
        self.sample()  # what came before the loop is no phase's
        self.timeline["start"] = wall_ms()
        starve = self.cfg.get("starve")
        while time.monotonic() < end:
            self.step_taken()
            now = time.monotonic() - start
            if active and now >= active[0] and not self.holding():
                if active[1]:
                    active[1]()
                self.sample()  # the fault's IDs before its end
                active[3]["end"] = wall_ms()
                self.note(f"healed: {active[2]}")
                active = None
                if starve and len(faults) == 1:
                    self.starve()
            if (not active and pending and now >= pending[0]["at"] and not self.starving()
                    and self.ready_for(pending[0]["kind"], now - pending[0]["at"])):
                ev = pending.pop(0)
                self.sample()  # the phase's IDs before the fault
                at = wall_ms()
                if self.timeline["starved"]:
                    self.feed()
                text, undo = self.inject(ev["kind"])
                if text:
                    self.note(f"fault: {text}")
                    entry = {"kind": ev["kind"], "target": fault_target(text), "start": at}
                    faults.append(entry)
                    active = (now + ev["seconds"], undo, text, entry)
            self.supervise()
            self.sample()
            time.sleep(0.2)
        self.sample()
        if active:
            if active[1]:
                active[1]()
            active[3]["end"] = wall_ms()
            self.note(f"healed: {active[2]}")
        self.timeline["end"] = wall_ms()
        if self.timeline["starved"]:
            self.feed()

    def watch_store(self, stop):
        """Records when a store that can say so (ZooKeeper) stopped and
        started serving (its ``serving()``, probed about every second, each
        probe 9 s at most): phases.py excuses everyone while it did not."""
        was, out = True, self.timeline.setdefault("store_unserving", [])
        while not stop.is_set():
            t = wall_ms()
            try:
                now = self.store.serving()
            except Exception:  # noqa: BLE001 - a failed probe says nothing
                now = was
            if now != was:
                if now:
                    out[-1][1] = t
                else:
                    out.append([t, None])
                was = now
            stop.wait(1.0)

    def starve(self):
        """The starved control (main.py): every holder and the load client
        stopped (SIGSTOP) from the first fault's end to the next fault's
        start, a phase in which nothing is issued; the no-vacuous-pass check
        must fail the run for it."""
        who = sorted(self.holders) + [f"server-{s}" for s in sorted(self.servers)]
        for p, _ in self.holders.values():
            p.signal(signal.SIGSTOP)
        self.load.signal(signal.SIGSTOP)
        self.timeline["starved"] = {"phase": 1, "participants": who, "stopped": True}
        self.starved_until = time.monotonic() + STARVE_S
        self.note("starved: every holder and the load client stopped (SIGSTOP)")

    def starving(self):
        """Whether the starved phase is younger than STARVE_S (the next fault
        waits: a phase under phases.MIN_PHASE_S would not be checked)."""
        return bool(self.timeline["starved"]) and time.monotonic() < self.starved_until

    def feed(self):
        if self.timeline["starved"].pop("stopped", False):
            for p, _ in self.holders.values():
                p.signal(signal.SIGCONT)
            self.load.signal(signal.SIGCONT)
            self.note("starved: holders and load client continued (SIGCONT)")


def wall_ms():
    return int(time.time() * 1000)


def fault_target(text):
    """The holder or server a client fault hit (its participant name in the
    checker's counts), from its record text ("holder-stop cli1 (SIGSTOP)"),
    else None."""
    kind, _, rest = text.partition(" ")
    if kind.startswith(("holder-", "server-")) and rest:
        name = rest.split()[0]
        return f"server-{name}" if kind.startswith("server-") else name
    return None


def real_verdict(reasons):
    """A real run's verdict from why it would fail (none: it passes)."""
    return "FAIL (" + ", ".join(reasons) + ")" if reasons else "pass"


def vacuous_fields(vac):
    """result.json's fields of the no-vacuous-pass check (phases.check)."""
    return {"ids_minimum": vac and vac["rule"], "ids_per_phase": vac and vac["per_phase"],
            "ids_per_fault": vac and vac["per_fault"], "too_few_ids": vac and vac["short"]}


def run_one(cfg):
    """Runs and checks one configuration; returns its result dict."""
    old = signal.signal(signal.SIGTERM, _on_signal)
    old_int = signal.signal(signal.SIGINT, _on_signal)
    r = Run(cfg)
    with open(os.path.join(cfg["dir"], "schedule.json"), "w") as f:
        json.dump({k: cfg[k] for k in ("store", "configuration", "control", "seed",
                                       "seconds", "schedule")}, f, indent=1)
    try:
        r.run()
    finally:
        signal.signal(signal.SIGTERM, old)
        signal.signal(signal.SIGINT, old_int)
    res = check.check_run(cfg["dir"])
    vac = phases.check(cfg["dir"])
    ids = sum(res.counts.values())
    faults = [t for _, t in r.record if t.startswith("fault: ")]
    # Why a real run would fail (none: it passes).
    reasons = [why for why, bad in (
        ("duplicates", res.duplicates), ("violations", res.n_violations),
        ("delivered IDs not recorded", sum(res.unrecorded.values())), ("no IDs", ids == 0),
        ("vacuous", vac is None or vac["short"])) if bad]
    if cfg["control"]:
        # What the control's missing protection must show.
        expect = cfg.get("expect")
        if expect == "vacuous":
            caught = reasons == ["vacuous"] and phases.starved_caught(vac, r.timeline["starved"])
        else:
            caught = (res.reservation_violations if expect == "reservation_violations"
                      else res.duplicates) > 0
        verdict = "control-failed-as-expected" if caught else "CONTROL-PASSED"
    else:
        verdict = real_verdict(reasons)
    result = {
        "store": cfg["store"], "configuration": cfg["configuration"],
        "kind": "control" if cfg["control"] else "real", "seed": cfg["seed"],
        "seconds": cfg["seconds"], "faults_injected": len(faults), "faults": faults,
        "ids_checked": ids, "ids_per_holder": res.counts,
        # The issuing side's records against what was delivered (check.py).
        "ids_issued": sum(res.issued.values()), "ids_delivered": sum(res.delivered.values()),
        "ids_issued_not_delivered": sum(res.undelivered.values()),
        "ids_delivered_not_recorded": sum(res.unrecorded.values()),
        "issued_not_delivered_per_holder": res.undelivered,
        "unconfirmed_per_holder": res.unconfirmed, "loosely_checked_per_holder": res.loose,
        "duplicates": res.duplicates, "reservation_violations": res.reservation_violations,
        "node_violations": res.node_violations,
        # The names the results table reads (runs before these counts were split).
        "duplicates_found": res.duplicates,
        "reservation_or_node_violations": res.n_violations,
        "answers_while_unready": res.unready_answers,
        # The no-vacuous-pass check (phases.py): its minimum, IDs per phase
        # and per fault, and what fell short.
        **vacuous_fields(vac),
        "fail_reasons": reasons, "verdict": verdict,
        "ok": verdict in ("pass", "control-failed-as-expected"),
    }
    with open(os.path.join(cfg["dir"], "result.json"), "w") as f:
        json.dump(result, f, indent=1)
    write_record(cfg, r.record, res, result)
    return result


def write_record(cfg, record, res, result):
    lines = [
        f"snowmint fault harness run: {cfg['name']}",
        f"store: {cfg['store']}   configuration: {cfg['configuration']}   "
        f"{result['kind']}   seed: {cfg['seed']}   {cfg['seconds']} s",
        f"verdict: {result['verdict']}",
        "",
        "schedule (seconds from the start, as it happened):",
    ]
    lines += [f"  {t:7.1f}  {text}" for t, text in record]
    lines += ["", "IDs checked per holder (unconfirmed: no reported reservation bounds them, "
                  "loosely: bounded by one reported after theirs):"]
    for h, n in sorted(res.counts.items()):
        lines.append(f"  {h:10} {n:>12}   unconfirmed {res.unconfirmed.get(h, 0)}   "
                     f"loosely {res.loose.get(h, 0)}")
    lines += [f"  {'total':10} {result['ids_checked']:>12}",
              f"issued (records) {result['ids_issued']}   delivered {result['ids_delivered']}   "
              f"issued, not delivered {result['ids_issued_not_delivered']} "
              f"({', '.join(f'{h} {n}' for h, n in sorted(res.undelivered.items()))})   "
              f"delivered, not recorded {result['ids_delivered_not_recorded']}", "",
              f"duplicates: {res.duplicates}"]
    lines += [f"  {e}" for e in res.dup_examples]
    lines.append(f"reservation violations: {res.reservation_violations}   node violations: "
                 f"{res.node_violations}")
    lines += [f"  {v}" for v in res.violations]
    lines.append(f"answers while /readyz said 503: {res.unready_answers}")
    lines += phases.record_lines(result)
    lines += ["", "replay: ./scripts/harness --replay " + os.path.join(cfg["dir"], "schedule.json")]
    with open(os.path.join(cfg["dir"], "record.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
