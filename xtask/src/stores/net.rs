//! What the stores' startup speaks to servers: free ports, a bounded
//! command, a TCP exchange (Redis's PING, ZooKeeper's `srvr`) and plain
//! HTTP (etcd's health and its JSON gateway), without client crates.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Output, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// A TCP port on 127.0.0.1 that nothing accepts connections on, for a
/// throwaway server. Below the kernel's ephemeral range
/// (ip_local_port_range, 32768-60999 by default): a port in it may be the
/// local end of a client's connection, where nothing listens, and the server
/// then fails to bind it (an etcd member did: "bind: address already in
/// use", 2026-11-27). Each probe has 2 s: a stopped process's listener
/// answers no connection.
pub fn free_port() -> Result<u16, String> {
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .next()
                .and_then(|n| n.parse::<u32>().ok())
        })
        .filter(|&l| l >= 12000)
        .unwrap_or(32768);
    // The stores start on threads of their own: a port handed out once is
    // never handed out again by this process, though nothing listens yet.
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    for _ in 0..200 {
        let port = u16::try_from(10000 + random() % (low - 10000)).unwrap_or(10000);
        let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
        if !given.contains(&port) && !connects(port, Duration::from_secs(2)) {
            given.push(port);
            return Ok(port);
        }
    }
    Err("no free port found on 127.0.0.1".into())
}

/// A number that differs between calls and processes (no crate for it).
pub fn random() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish() as u32
}

fn addr(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// Whether something accepts a connection on 127.0.0.1:`port`.
pub fn connects(port: u16, within: Duration) -> bool {
    TcpStream::connect_timeout(&addr(port), within).is_ok()
}

/// Sends `request` to 127.0.0.1:`port` and reads the reply until the
/// server closes the connection, `enough` says it has what it needs, or
/// `within` passes. `None` if nothing answers.
pub fn exchange(
    port: u16,
    request: &[u8],
    within: Duration,
    enough: impl Fn(&[u8]) -> bool,
) -> Option<Vec<u8>> {
    let end = Instant::now() + within;
    let mut s = TcpStream::connect_timeout(&addr(port), within).ok()?;
    s.set_write_timeout(Some(within)).ok()?;
    s.write_all(request).ok()?;
    let mut reply = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        s.set_read_timeout(Some(left)).ok()?;
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                reply.extend_from_slice(&buf[..n]);
                if enough(&reply) {
                    break;
                }
            }
        }
    }
    Some(reply)
}

/// An HTTP/1.0 request to 127.0.0.1:`port` (`body`: a POST of JSON): the
/// status and the body, `None` if nothing answered.
pub fn http(port: u16, path: &str, body: Option<&str>, within: Duration) -> Option<(u16, String)> {
    let request = match body {
        Some(b) => format!(
            "POST {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{b}",
            b.len()
        ),
        None => format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n"),
    };
    let reply = exchange(port, request.as_bytes(), within, |_| false)?;
    let text = String::from_utf8_lossy(&reply);
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, body.to_string()))
}

/// Runs `cmd` (output captured) for at most `within`: killed past it.
pub fn output_within(cmd: &mut Command, within: Duration) -> Result<Output, String> {
    let what = crate::step::show(cmd);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    // The pipes are read beside the wait: a full pipe would stall the child.
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    // A daemon it started (pg_ctl's server) may hold them open: after the
    // command ends, its output is waited for 2 s at most.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut o = Vec::new();
        let mut e = Vec::new();
        if let Some(s) = out.as_mut() {
            let _ = s.read_to_end(&mut o);
        }
        if let Some(s) = err.as_mut() {
            let _ = s.read_to_end(&mut e);
        }
        let _ = tx.send((o, e));
    });
    let end = Instant::now() + within;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < end => sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{what} did not finish within {} s",
                    within.as_secs()
                ));
            }
            Err(e) => return Err(format!("{what}: {e}")),
        }
    };
    let (stdout, stderr) = rx.recv_timeout(Duration::from_secs(2)).unwrap_or_default();
    Ok(Output {
        status,
        stdout,
        stderr,
    })
}

/// Runs `cmd` for at most `within`; fails (with its output) unless it succeeds.
pub fn run_within(cmd: &mut Command, within: Duration) -> Result<String, String> {
    let what = crate::step::show(cmd);
    let out = output_within(cmd, within)?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{what} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// A shell word: `word` quoted for bash when it needs it (restart commands).
pub fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
