//! A snowmint-server process of the part's: started on ephemeral loopback
//! ports, its log (standard error) in a file, its addresses read from the
//! log's start lines; stopped by a guard on every exit path.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// A running server. Dropped before [`Server::stop`], it gets SIGTERM, then
/// SIGKILL when it has not exited 10 s later.
#[derive(Debug)]
pub struct Server {
    child: Option<Child>,
    termed: bool,
    pub log: PathBuf,
    /// The HTTP listener's `HOST:PORT`.
    pub addr: String,
}

/// The value of `KEY="..."` on the first log line that has it after a
/// space: `listen` of ` start listen="127.0.0.1:4000"` (and not of
/// `thrift_start listen=...`, whose key has no space before it).
pub fn logged(log: &str, event: &str, key: &str) -> Option<String> {
    let marker = format!(" {event} {key}=\"");
    log.lines().find_map(|l| {
        let rest = &l[l.find(&marker)? + marker.len()..];
        rest.find('"').map(|end| rest[..end].to_string())
    })
}

impl Server {
    /// `bin --listen 127.0.0.1:0 ARGS...`, its standard error into `log`;
    /// returns once the log has every `(event, key)` of `wait_for` (the
    /// HTTP listener's ` start listen=` always): 30 s at most. A server
    /// that exits first fails, its log printed.
    pub fn start(
        bin: &Path,
        log: &Path,
        args: &[&str],
        wait_for: &[(&str, &str)],
    ) -> Result<Server, String> {
        let err = File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let child = Command::new(bin)
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
        let mut server = Server {
            child: Some(child),
            termed: false,
            log: log.to_path_buf(),
            addr: String::new(),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let text = server.log_text();
            if let Some(addr) = logged(&text, "start", "listen") {
                if wait_for.iter().all(|(e, k)| logged(&text, e, k).is_some()) {
                    server.addr = addr;
                    return Ok(server);
                }
            }
            let exited = !matches!(server.child.as_mut().map(Child::try_wait), Some(Ok(None)));
            if exited || Instant::now() > deadline {
                print!("{text}");
                let why = if exited { "exited" } else { "did not start" };
                return Err(format!("the server {why} ({})", log.display()));
            }
            sleep(Duration::from_millis(100));
        }
    }

    /// The log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Sends SIGTERM (once: a second one could mean "now" to a server).
    pub fn term(&mut self) {
        if let (Some(child), false) = (&self.child, self.termed) {
            signal(child.id(), libc::SIGTERM);
            self.termed = true;
        }
    }

    /// SIGTERM, then waits for the exit (bounded): its status.
    pub fn stop(mut self) -> Result<ExitStatus, String> {
        let status = self.terminate();
        status.ok_or_else(|| {
            format!(
                "the server did not exit within 10 s of SIGTERM ({})",
                self.log.display()
            )
        })
    }

    /// SIGTERM; the exit status, or `None` after SIGKILL when it had not
    /// exited within 10 s.
    fn terminate(&mut self) -> Option<ExitStatus> {
        if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
            self.child = None;
            return Some(status);
        }
        self.term();
        let mut child = self.child.take()?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(status);
            }
            sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.terminate();
    }
}

/// Sends `sig` to the process `pid`.
pub fn signal(pid: u32, sig: libc::c_int) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: signalling a child of ours by its id; no memory involved.
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

/// Fails unless the server exited 0 after SIGTERM and, when it held a
/// lease, logged `lease_released`.
pub fn check_exit(status: ExitStatus, log: &str, leased: bool) -> Result<(), String> {
    if !status.success() {
        return Err(format!("the server's exit after SIGTERM: {status}"));
    }
    if leased && !log.contains("lease_released") {
        return Err("no lease_released in the server's log".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::logged;

    #[test]
    fn start_lines() {
        let log = "t=1 level=INFO thrift_start listen=\"127.0.0.1:9\"\n\
                   t=2 level=INFO start listen=\"127.0.0.1:8\" preset=leaf\n";
        assert_eq!(
            logged(log, "start", "listen").as_deref(),
            Some("127.0.0.1:8")
        );
        assert_eq!(
            logged(log, "thrift_start", "listen").as_deref(),
            Some("127.0.0.1:9")
        );
        assert_eq!(logged("", "start", "listen"), None);
    }
}
