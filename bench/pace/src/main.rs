//! `pace`: an open-loop HTTP/1.1 load generator for latency at a fixed rate.
//!
//! Request `i` is due at `start + i / rate`. It goes out on the first idle
//! keep-alive connection at or after that time, and its latency is measured
//! from when it was due, not from when it was sent: a server (or a generator)
//! that falls behind shows the wait in every later request's latency, as wrk2
//! and oha's `--latency-correction` do. One thread, one epoll set, one
//! request in flight per connection, timers of microsecond precision
//! (`epoll_pwait2`, a timer slack of 1 ns). The loop sleeps at least one tick
//! (`--tick-us`, 100 by default) when nothing arrives, so that at high rates
//! one wake-up sends several requests (a wake-up is the costly part here: on
//! this project's 2-vCPU virtual machines a request with a wake-up of its own
//! cost about 60 µs of system time at 1,000 requests/s, as much as a Python
//! client's; about 11 µs at 50,000); a request sent up to a tick late counts
//! that in its latency. At the rates the ID service's benchmark paces, oha's
//! own CPU time took the two cores the server needed.
//!
//! ```text
//! pace --url http://127.0.0.1:8080/api/snowflake/get/a --rate 80000 \
//!      [--conns 32] [--seconds 5] [--warmup 1] [--tick-us 100] [--header 'Name: value']...
//! ```
//!
//! It prints one JSON object: the rate asked and reached, requests measured,
//! p50/p90/p99/p99.9/max in milliseconds, statuses other than 200, errors
//! and the generator's own CPU seconds. It exits 1 when a response was not a
//! 200, a connection failed or requests were left unanswered.
//! Linux only (epoll).

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const USAGE: &str = "usage: pace --url http://HOST:PORT/PATH --rate REQ_PER_S \
[--conns N] [--seconds S] [--warmup S] [--tick-us US] [--header 'Name: value']...";

/// How long requests still in flight after the last one was due are waited for.
const DRAIN: Duration = Duration::from_secs(2);

struct Args {
    addr: SocketAddr,
    request: Vec<u8>,
    rate: f64,
    conns: usize,
    seconds: f64,
    warmup: f64,
    tick: Duration,
}

fn parse_args() -> Result<Args, String> {
    let (mut url, mut rate, mut conns, mut seconds, mut warmup) = (None, None, 32, 5.0, 1.0);
    let mut tick_us = 100.0;
    let mut headers = Vec::new();
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--url" => url = Some(value()?),
            "--rate" => rate = Some(number(&flag, &value()?)?),
            "--conns" => conns = number(&flag, &value()?)? as usize,
            "--seconds" => seconds = number(&flag, &value()?)?,
            "--warmup" => warmup = number(&flag, &value()?)?,
            "--tick-us" => tick_us = number(&flag, &value()?)?,
            "--header" => headers.push(value()?),
            "-h" | "--help" => return Err(USAGE.into()),
            _ => return Err(format!("unknown argument {flag}\n{USAGE}")),
        }
    }
    let url = url.ok_or(USAGE)?;
    let rest = url
        .strip_prefix("http://")
        .ok_or("--url: only http:// URLs")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let addr = authority
        .to_socket_addrs()
        .map_err(|e| format!("--url: {authority}: {e}"))?
        .next()
        .ok_or_else(|| format!("--url: {authority}: no address"))?;
    let rate = rate.ok_or(USAGE)?;
    if !(rate >= 1.0 && conns >= 1 && seconds > 0.0 && warmup >= 0.0 && tick_us >= 0.0) {
        return Err(
            "--rate must be at least 1, --conns at least 1, --seconds above 0, --tick-us not negative"
                .into(),
        );
    }
    let mut request = format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\n");
    for h in &headers {
        request.push_str(h);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    Ok(Args {
        addr,
        request: request.into_bytes(),
        rate,
        conns,
        seconds,
        warmup,
        tick: Duration::from_nanos((tick_us * 1000.0) as u64),
    })
}

fn number(flag: &str, text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("{flag}: not a number: {text}"))
}

struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    /// When the request in flight was due; `None` while idle.
    due: Option<Instant>,
}

/// A complete response at the start of `buf`: (its length, its status).
fn response(buf: &[u8]) -> Result<Option<(usize, u16)>, String> {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Ok(None);
    };
    let head = std::str::from_utf8(&buf[..end]).map_err(|_| "response head not UTF-8")?;
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.strip_prefix("HTTP/1.1 "))
        .and_then(|l| l.get(..3))
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| format!("not an HTTP/1.1 status line: {head:.60}"))?;
    let mut length = None;
    for line in lines {
        let (name, value) = line.split_once(':').unwrap_or((line, ""));
        if name.eq_ignore_ascii_case("content-length") {
            length = value.trim().parse::<usize>().ok();
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err("chunked responses are not read (content-length only)".into());
        }
    }
    let length = length.ok_or("a response without content-length")?;
    let total = end + 4 + length;
    Ok((buf.len() >= total).then_some((total, status)))
}

struct Epoll(i32);

impl Epoll {
    fn new() -> io::Result<Self> {
        // SAFETY: no pointer arguments; the descriptor is owned by the result.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Epoll(fd))
    }

    fn add(&self, fd: i32, token: usize) -> io::Result<()> {
        let mut event = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: token as u64,
        };
        // SAFETY: `event` is a valid epoll_event for the duration of the call.
        let r = unsafe { libc::epoll_ctl(self.0, libc::EPOLL_CTL_ADD, fd, &mut event) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Waits up to `timeout` (nanosecond precision) for ready descriptors.
    fn wait(&self, events: &mut [libc::epoll_event], timeout: Duration) -> io::Result<usize> {
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        // SAFETY: `events` is writable for its length, `ts` lives through the
        // call and the signal mask pointer may be null (epoll_pwait2(2)).
        let n = unsafe {
            libc::syscall(
                libc::SYS_epoll_pwait2,
                self.0,
                events.as_mut_ptr(),
                events.len() as libc::c_int,
                &ts as *const libc::timespec,
                std::ptr::null::<libc::sigset_t>(),
                0usize,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(0)
            } else {
                Err(e)
            };
        }
        Ok(n as usize)
    }
}

impl Drop for Epoll {
    fn drop(&mut self) {
        // SAFETY: the descriptor is this value's own.
        unsafe { libc::close(self.0) };
    }
}

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a rusage.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(usage.ru_utime) + t(usage.ru_stime)
}

#[derive(Default)]
struct Tally {
    latencies_ns: Vec<u64>,
    statuses: BTreeMap<u16, u64>,
    errors: Vec<String>,
}

fn run(args: &Args) -> Result<Tally, String> {
    // Timers as precise as the kernel gives: 1 ns of slack instead of 50 µs.
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    let epoll = Epoll::new().map_err(|e| format!("epoll: {e}"))?;
    let mut conns = Vec::with_capacity(args.conns);
    for token in 0..args.conns {
        let stream = TcpStream::connect_timeout(&args.addr, Duration::from_secs(2))
            .map_err(|e| format!("connect {}: {e}", args.addr))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        stream.set_nonblocking(true).map_err(|e| e.to_string())?;
        epoll
            .add(stream.as_raw_fd(), token)
            .map_err(|e| format!("epoll_ctl: {e}"))?;
        conns.push(Conn {
            stream,
            buf: Vec::with_capacity(4096),
            due: None,
        });
    }
    let total = ((args.warmup + args.seconds) * args.rate).round() as u64;
    let measured_from = (args.warmup * args.rate).round() as u64;
    let interval = 1e9 / args.rate;
    let mut idle: Vec<usize> = (0..args.conns).rev().collect();
    let mut tally = Tally {
        latencies_ns: Vec::with_capacity((total - measured_from) as usize),
        ..Tally::default()
    };
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; args.conns];
    let mut chunk = vec![0u8; 16 * 1024];
    let start = Instant::now() + Duration::from_millis(10);
    let due_of = |i: u64| start + Duration::from_nanos((i as f64 * interval) as u64);
    let mut next: u64 = 0;
    // Each connection's first measured request index, to know what to record.
    let mut index_of: Vec<u64> = vec![0; args.conns];
    let mut in_flight = 0usize;
    loop {
        let now = Instant::now();
        while next < total && !idle.is_empty() && due_of(next) <= now {
            let c = idle.pop().expect("checked non-empty");
            let conn = &mut conns[c];
            match conn.stream.write(&args.request) {
                Ok(n) if n == args.request.len() => {}
                Ok(n) => return Err(format!("a request written in part ({n} bytes)")),
                Err(e) => return Err(format!("write: {e}")),
            }
            conn.due = Some(due_of(next));
            index_of[c] = next;
            next += 1;
            in_flight += 1;
        }
        if next == total && in_flight == 0 {
            break;
        }
        let last_due = due_of(total);
        if now > last_due + DRAIN {
            tally.errors.push(format!(
                "{in_flight} requests unanswered {DRAIN:?} after the last was due"
            ));
            break;
        }
        let timeout = if next < total && !idle.is_empty() {
            due_of(next).saturating_duration_since(now).max(args.tick)
        } else {
            Duration::from_millis(50)
        };
        let ready = epoll
            .wait(&mut events, timeout)
            .map_err(|e| format!("epoll_pwait2: {e}"))?;
        for event in &events[..ready] {
            let c = event.u64 as usize;
            let conn = &mut conns[c];
            // Until a read leaves the chunk unfilled: the socket is drained
            // then (level-triggered: bytes arriving later wake the wait
            // again), without a read that answers EAGAIN per response.
            loop {
                match conn.stream.read(&mut chunk) {
                    Ok(0) => return Err(format!("connection {c} closed by the server")),
                    Ok(n) => {
                        conn.buf.extend_from_slice(&chunk[..n]);
                        if n < chunk.len() {
                            break;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => return Err(format!("read: {e}")),
                }
            }
            while let Some((len, status)) = response(&conn.buf)? {
                let done = Instant::now();
                let due = conn
                    .due
                    .take()
                    .ok_or_else(|| format!("connection {c}: a response with no request"))?;
                conn.buf.drain(..len);
                in_flight -= 1;
                idle.push(c);
                if index_of[c] >= measured_from {
                    tally
                        .latencies_ns
                        .push(done.saturating_duration_since(due).as_nanos() as u64);
                    *tally.statuses.entry(status).or_default() += 1;
                }
            }
        }
    }
    Ok(tally)
}

fn quantile(sorted: &[u64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i] as f64 / 1e6
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("pace: {e}");
            return ExitCode::from(2);
        }
    };
    let began = Instant::now();
    let mut tally = match run(&args) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("pace: {e}");
            return ExitCode::from(1);
        }
    };
    let wall = began.elapsed().as_secs_f64();
    tally.latencies_ns.sort_unstable();
    let l = &tally.latencies_ns;
    let ok = tally.statuses.get(&200).copied().unwrap_or(0);
    let others: Vec<String> = tally
        .statuses
        .iter()
        .filter(|(s, _)| **s != 200)
        .map(|(s, n)| format!("\"{s}\":{n}"))
        .collect();
    println!(
        "{{\"rate\":{},\"conns\":{},\"seconds\":{},\"measured\":{},\"ok\":{ok},\
         \"p50_ms\":{:.4},\"p90_ms\":{:.4},\"p99_ms\":{:.4},\"p999_ms\":{:.4},\"max_ms\":{:.4},\
         \"other_statuses\":{{{}}},\"errors\":{:?},\"cpu_s\":{:.3},\"wall_s\":{:.3}}}",
        args.rate,
        args.conns,
        args.seconds,
        l.len(),
        quantile(l, 0.5),
        quantile(l, 0.9),
        quantile(l, 0.99),
        quantile(l, 0.999),
        quantile(l, 1.0),
        others.join(","),
        tally.errors,
        cpu_seconds(),
        wall,
    );
    if ok as usize != l.len() || !tally.errors.is_empty() {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::response;

    #[test]
    fn reads_a_response_only_once_complete() {
        let full = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nContent-Length: 3\r\n\r\n123";
        assert_eq!(response(full).unwrap(), Some((full.len(), 200)));
        assert_eq!(response(&full[..full.len() - 1]).unwrap(), None);
        assert_eq!(response(&full[..20]).unwrap(), None);
        let two = [&full[..], b"HTTP/1.1 503 X\r\ncontent-length: 0\r\n\r\n"].concat();
        assert_eq!(response(&two).unwrap(), Some((full.len(), 200)));
        assert!(response(b"HTTP/1.1 200 OK\r\n\r\n").is_err());
        assert!(response(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n").is_err());
    }
}
