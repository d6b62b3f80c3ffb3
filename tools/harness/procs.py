"""Processes the harness starts: each in a session of its own, logged to a
file, and all stopped at the end of a run (SIGCONT, SIGTERM, then SIGKILL
after a bound)."""

import os
import signal
import subprocess
import time

ALL = []


class Proc:
    def __init__(self, name, argv, log_path, env=None, stdin=None, stdout=None, user=None):
        self.name = name
        self.argv = argv
        self.log = open(log_path, "ab")
        full_env = dict(os.environ)
        full_env.update(env or {})
        pre = None
        if user is not None:
            import pwd

            pw = pwd.getpwnam(user)

            def pre():
                os.setgid(pw.pw_gid)
                os.setuid(pw.pw_uid)

        self.p = subprocess.Popen(
            argv,
            stdin=stdin if stdin is not None else subprocess.DEVNULL,
            stdout=stdout if stdout is not None else self.log,
            stderr=self.log,
            env=full_env,
            start_new_session=True,
            preexec_fn=pre,
        )
        self.pid = self.p.pid
        ALL.append(self)

    def alive(self):
        return self.p.poll() is None

    def signal(self, sig):
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:
            pass

    def stop(self, grace=5.0):
        """SIGCONT + SIGTERM, SIGKILL after ``grace`` seconds; waits (bounded)."""
        if self.alive():
            self.signal(signal.SIGCONT)
            self.signal(signal.SIGTERM)
            try:
                self.p.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.signal(signal.SIGKILL)
                try:
                    self.p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
        else:
            # The leader is gone: end anything left in its session.
            self.signal(signal.SIGKILL)
        self.log.close()

    def kill(self):
        self.signal(signal.SIGKILL)
        try:
            self.p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


def session_members(sid):
    """The pids of the processes in session ``sid`` (a Proc's pid: each
    starts its own session)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # After the command: state, ppid, pgrp, session.
        if int(fields[3]) == sid:
            pids.append(int(entry))
    return pids


def stop_all():
    for p in reversed(ALL):
        try:
            p.stop(grace=3.0)
        except Exception:  # noqa: BLE001 - keep stopping the others
            pass
    ALL.clear()


def wait_until(probe, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if probe():
            return True
        time.sleep(0.1)
    return False
