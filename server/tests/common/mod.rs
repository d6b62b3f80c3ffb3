//! What the server's process tests share: the built binary spawned on an
//! ephemeral loopback port, a bounded HTTP/1.1 client, temporary
//! directories, and (for the fault tests) the lease tests' TCP proxy. Every
//! wait is bounded. Each test file uses a part of it.
#![allow(dead_code)] // each test file uses some of it

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

/// The lease fault tests' proxy (std only), shared rather than copied.
#[path = "../../../lease/test-support/src/proxy.rs"]
pub mod proxy;

pub const BIN: &str = env!("CARGO_BIN_EXE_snowmint-server");
/// Generous: the machine is shared and loaded.
pub const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A temporary directory, removed on drop (declared before the servers that
/// use it, so dropped after them).
pub struct TempDir(pub PathBuf);

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fresh temporary directory per call.
pub fn temp_dir(tag: &str) -> TempDir {
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::SeqCst);
    let d = std::env::temp_dir().join(format!("snowmint-server-{tag}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    TempDir(d)
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// A running server and its log lines (stderr).
pub struct Server {
    pub child: Child,
    pub addr: String,
    pub log: mpsc::Receiver<String>,
    pub lines: Vec<String>,
}

impl Server {
    /// Starts the binary with `args` (plus `--listen 127.0.0.1:0`) and waits for its start line.
    pub fn start(args: &[&str]) -> Server {
        Server::try_start(args, &[]).unwrap_or_else(|e| panic!("{e}"))
    }

    /// As [`start`](Self::start), with environment variables; `Err` (the
    /// exit status and the log) when the process ends before it listens,
    /// as it does when no slot is free.
    pub fn try_start(args: &[&str], env: &[(&str, &str)]) -> Result<Server, String> {
        let mut child = Command::new(BIN)
            .args(args)
            .args(["--listen", "127.0.0.1:0"])
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, log) = mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut lines = Vec::new();
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match log.recv_timeout(left) {
                Ok(line) => line,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    // stderr closed: the process ended (or is about to).
                    let status = child.wait().unwrap();
                    return Err(format!(
                        "the server exited ({status}) before listening; log: {lines:?}"
                    ));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("no start line in {START_TIMEOUT:?}; log so far: {lines:?}");
                }
            };
            lines.push(line.clone());
            let addr = match serde_json::from_str::<Value>(&line) {
                Ok(v) if v["event"] == "start" => v["listen"].as_str().map(str::to_string),
                Ok(_) => None,
                Err(_) => line
                    .split(" start listen=\"")
                    .nth(1)
                    .map(|rest| rest.split('"').next().unwrap().to_string()),
            };
            if let Some(addr) = addr {
                return Ok(Server {
                    child,
                    addr,
                    log,
                    lines,
                });
            }
        }
    }

    pub fn get(&self, path: &str) -> Response {
        request(&self.addr, path, &[])
    }

    pub fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> Response {
        request(&self.addr, path, headers)
    }

    /// The Thrift listener's address (`--thrift`), from the `thrift_start`
    /// line logged before the start line (text or JSON log format).
    pub fn thrift_addr(&self) -> Option<String> {
        self.lines
            .iter()
            .find_map(|line| match serde_json::from_str::<Value>(line) {
                Ok(v) if v["event"] == "thrift_start" => v["listen"].as_str().map(str::to_string),
                Ok(_) => None,
                Err(_) => line
                    .split(" thrift_start ")
                    .nth(1)?
                    .split("listen=\"")
                    .nth(1)
                    .map(|rest| rest.split('"').next().unwrap().to_string()),
            })
    }

    /// The leased slot of the only generator.
    pub fn slot(&self) -> u64 {
        let g = self.get("/v1/generators").json();
        g["generators"][0]["lease"]["slot"].as_u64().unwrap()
    }

    /// The only generator's entry of `/v1/generators`.
    pub fn generator(&self) -> Value {
        self.get("/v1/generators").json()["generators"][0].clone()
    }

    /// Sends `signal` (`-TERM`, `-KILL`, ...) with kill(1).
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill {signal} {}", self.child.id());
    }

    /// Sends SIGTERM and waits (bounded) for the exit.
    pub fn terminate(&mut self) -> (ExitStatus, Duration) {
        let start = Instant::now();
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        (self.wait(Duration::from_secs(15)), start.elapsed())
    }

    pub fn wait(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not exit in {timeout:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Every log line so far (after the process ended: all of them).
    pub fn log_lines(&mut self) -> Vec<String> {
        while let Ok(l) = self.log.recv_timeout(Duration::from_millis(200)) {
            self.lines.push(l);
        }
        self.lines.clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {:?}", self.body))
    }

    pub fn code(&self) -> String {
        self.json()["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

/// One HTTP/1.1 GET with `Connection: close` (bodies are not chunked for these routes).
pub fn request(addr: &str, path: &str, headers: &[(&str, &str)]) -> Response {
    try_request(addr, path, headers, Duration::from_secs(20))
        .unwrap_or_else(|e| panic!("GET {path} on {addr}: {e}"))
}

/// [`request`], failing instead of panicking when the connection fails,
/// breaks or takes longer than `timeout` to connect, send or answer.
pub fn try_request(
    addr: &str,
    path: &str,
    headers: &[(&str, &str)],
    timeout: Duration,
) -> std::io::Result<Response> {
    use std::io::{Error, ErrorKind};
    let sock: std::net::SocketAddr = addr
        .parse()
        .map_err(|e| Error::new(ErrorKind::InvalidInput, format!("{addr}: {e}")))?;
    let mut s = TcpStream::connect_timeout(&sock, timeout)?;
    s.set_read_timeout(Some(timeout))?;
    s.set_write_timeout(Some(timeout))?;
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (n, v) in headers {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes())?;
    let mut raw = String::new();
    s.read_to_string(&mut raw)?;
    try_parse_response(&raw)
}

/// The `content-length` of a response head (0 without one).
pub fn content_length(head: &str) -> usize {
    head.lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap())
        })
        .unwrap_or(0)
}

/// A whole HTTP/1.1 response, read to its end (`Connection: close`).
pub fn parse_response(raw: &str) -> Response {
    try_parse_response(raw).unwrap_or_else(|e| panic!("{e}"))
}

/// [`parse_response`], `Err` when `raw` is not an HTTP response.
pub fn try_parse_response(raw: &str) -> std::io::Result<Response> {
    use std::io::{Error, ErrorKind};
    let bad = || {
        Error::new(
            ErrorKind::InvalidData,
            format!("not an HTTP response: {raw:?}"),
        )
    };
    let (head, body) = raw.split_once("\r\n\r\n").ok_or_else(bad)?;
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or_else(bad)?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    Ok(Response {
        status,
        headers,
        body: body.to_string(),
    })
}

pub fn ids_of(r: &Response) -> Vec<u64> {
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().parse().unwrap())
        .collect()
}

pub fn lease_arg(dir: &Path) -> String {
    format!("file:{}?namespace=test", dir.display())
}

/// Runs the binary to completion (bounded) and returns its exit code and stderr.
pub fn run(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{args:?} did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code(), text)
}

/// Writes a file only its owner can read (mode 0600), as the server
/// requires of a token file.
pub fn secret_file(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}
