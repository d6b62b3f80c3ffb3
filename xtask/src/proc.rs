//! Child processes, each in a process group of its own, stopped by a guard
//! on every exit path (a failed part, an early return, a panic, Ctrl-C).
//!
//! A part starts servers, builds and test processes of its own; stopping its
//! group with SIGTERM lets the part's own cleanup (its `trap`) stop them
//! before the group is killed. The runner catches SIGINT, SIGTERM and SIGHUP
//! so that it can pass the stop on instead of leaving the groups running.

use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicI32, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// The signal that asked the runner to stop, 0 while none has.
static STOP: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    STOP.store(sig, Ordering::SeqCst);
}

/// Catches SIGINT, SIGTERM and SIGHUP: each is noted for the waits below,
/// which stop their group and return.
pub fn catch_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let handler = on_signal as extern "C" fn(libc::c_int);
        // SAFETY: the handler only stores into an atomic, which is
        // async-signal-safe; `signal` is given a valid function pointer.
        unsafe {
            libc::signal(sig, handler as libc::sighandler_t);
        }
    }
}

/// The signal that asked the runner to stop, if one has.
pub fn stopped_by() -> Option<i32> {
    match STOP.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

/// How long a group has after SIGTERM to stop before it is killed.
const GRACE: Duration = Duration::from_secs(15);

/// How a group's leader ended: its status, its wall time and the CPU time of
/// it and every descendant it waited for (user + system).
#[derive(Debug, Clone, Copy)]
pub struct Finished {
    pub status: ExitStatus,
    pub wall: Duration,
    pub cpu: Duration,
}

impl Finished {
    pub fn success(&self) -> bool {
        self.status.success()
    }
}

/// A running child that leads a process group of its own. Dropped before it
/// has been waited for, it stops the whole group.
#[derive(Debug)]
pub struct Group {
    pid: libc::pid_t,
    started: Instant,
    done: bool,
}

impl Group {
    /// Starts `cmd` as the leader of a new process group.
    pub fn spawn(cmd: &mut Command) -> io::Result<Group> {
        cmd.process_group(0);
        let child = cmd.spawn()?;
        let pid = libc::pid_t::try_from(child.id()).map_err(io::Error::other)?;
        // The child is reaped by `wait4` below (for its rusage), not by std.
        drop(child);
        Ok(Group {
            pid,
            started: Instant::now(),
            done: false,
        })
    }

    /// Waits for the leader to exit. `Err(signal)` if the runner was asked to
    /// stop meanwhile: the group has then been stopped.
    pub fn wait(mut self) -> Result<Finished, i32> {
        loop {
            if let Some(finished) = self.try_wait() {
                return Ok(finished);
            }
            if let Some(sig) = stopped_by() {
                self.stop();
                return Err(sig);
            }
            sleep(Duration::from_millis(50));
        }
    }

    /// The leader's pid (the group's id).
    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// The leader's end if it has exited since the last call (reaped);
    /// `None` while it runs, and after its end has been returned once.
    pub fn poll(&mut self) -> Option<Finished> {
        self.try_wait()
    }

    /// SIGKILL to the whole group at once (a test process has no cleanup
    /// to wait for), then the leader reaped.
    pub fn kill_now(&mut self) {
        // SAFETY: signalling a process group we created; no memory involved.
        unsafe {
            libc::kill(-self.pid, libc::SIGKILL);
        }
        let until = Instant::now() + Duration::from_secs(5);
        while !self.done && self.try_wait().is_none() && Instant::now() < until {
            sleep(Duration::from_millis(20));
        }
    }

    /// The leader's end if it has exited (reaped, with its CPU time).
    fn try_wait(&mut self) -> Option<Finished> {
        if self.done {
            return None;
        }
        let mut status: libc::c_int = 0;
        // SAFETY: an all-zero rusage is a valid value of the C struct.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `status` and `usage` are valid for writes; the pid is our
        // own child's.
        let r = unsafe { libc::wait4(self.pid, &mut status, libc::WNOHANG, &mut usage) };
        if r != self.pid {
            if r < 0 {
                // Not our child any more (reaped elsewhere): nothing to wait for.
                self.done = true;
                return Some(Finished {
                    status: ExitStatus::from_raw(1 << 8),
                    wall: self.started.elapsed(),
                    cpu: Duration::ZERO,
                });
            }
            return None;
        }
        self.done = true;
        let time = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec.max(0) as u64)
                + Duration::from_micros(t.tv_usec.max(0) as u64)
        };
        Some(Finished {
            status: ExitStatus::from_raw(status),
            wall: self.started.elapsed(),
            cpu: time(usage.ru_utime) + time(usage.ru_stime),
        })
    }

    /// SIGTERM to the whole group, then SIGKILL after the grace period (or at
    /// once when the leader has gone and left members behind).
    fn stop(&mut self) {
        // SAFETY: signalling a process group we created; no memory involved.
        unsafe {
            libc::kill(-self.pid, libc::SIGTERM);
        }
        let deadline = Instant::now() + GRACE;
        while Instant::now() < deadline {
            if self.try_wait().is_some() || self.done {
                break;
            }
            sleep(Duration::from_millis(50));
        }
        // SAFETY: as above; a group that is gone makes this a no-op (ESRCH).
        unsafe {
            libc::kill(-self.pid, libc::SIGKILL);
        }
        if !self.done {
            // Reap the leader after the kill (bounded: SIGKILL cannot be caught).
            let until = Instant::now() + Duration::from_secs(5);
            while self.try_wait().is_none() && !self.done && Instant::now() < until {
                sleep(Duration::from_millis(20));
            }
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.done {
            self.stop();
        }
    }
}

/// Seconds, rounded, for the runner's lines.
pub fn secs(d: Duration) -> u64 {
    d.as_secs_f64().round() as u64
}
