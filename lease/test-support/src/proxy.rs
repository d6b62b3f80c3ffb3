//! A TCP proxy between the holders and a server, with a knob per direction
//! (pass, drop, delay): the fault tests cut a holder off, lose only its
//! replies, or hold its replies back past the TTL, while the server stays up
//! for everyone else. Std only; every socket is shut down on cut and on drop,
//! so no thread outlives the connection it copies for by more than one read
//! (or one pending delay).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One direction of every connection through a [`Proxy`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Client to server: the requests.
    Up,
    /// Server to client: the replies.
    Down,
}

/// What a [`Proxy`] does with the bytes of one direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Forwarded at once.
    Pass,
    /// Read and thrown away: the sender's writes succeed, nothing arrives.
    Drop,
    /// Forwarded this many ms after they were read, in order.
    Delay(u64),
}

/// `Flow` in one atomic word: 0 pass, `u64::MAX` drop, else a delay in ms.
fn encode(f: Flow) -> u64 {
    match f {
        Flow::Pass => 0,
        Flow::Drop => u64::MAX,
        Flow::Delay(ms) => ms.clamp(1, u64::MAX - 1),
    }
}

fn decode(v: u64) -> Flow {
    match v {
        0 => Flow::Pass,
        u64::MAX => Flow::Drop,
        ms => Flow::Delay(ms),
    }
}

/// A TCP proxy to one server on a free port of 127.0.0.1.
pub struct Proxy {
    pub port: u16,
    shared: Arc<ProxyShared>,
    acceptor: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct ProxyShared {
    cut: AtomicBool,
    stop: AtomicBool,
    up: AtomicU64,
    down: AtomicU64,
    /// Both ends of every forwarded connection.
    open: Mutex<Vec<TcpStream>>,
    /// Connections accepted while cut: never answered, closed on restore.
    held: Mutex<Vec<TcpStream>>,
}

impl ProxyShared {
    fn flow(&self, dir: Dir) -> Flow {
        decode(match dir {
            Dir::Up => self.up.load(Ordering::SeqCst),
            Dir::Down => self.down.load(Ordering::SeqCst),
        })
    }
}

impl Proxy {
    /// A proxy to `upstream` (`host:port`) on a free port of 127.0.0.1.
    pub fn start(upstream: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(ProxyShared::default());
        let s = Arc::clone(&shared);
        let upstream = upstream.to_string();
        let acceptor = std::thread::spawn(move || {
            while !s.stop.load(Ordering::SeqCst) {
                let client = match listener.accept() {
                    Ok((c, _)) => c,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(2));
                        continue;
                    }
                    Err(_) => continue,
                };
                let _ = client.set_nonblocking(false);
                if s.cut.load(Ordering::SeqCst) {
                    s.held.lock().unwrap().push(client);
                    continue;
                }
                let addr = upstream.to_socket_addrs().unwrap().next().unwrap();
                let Ok(server) = TcpStream::connect_timeout(&addr, Duration::from_secs(2)) else {
                    continue; // dropping the client closes it
                };
                let _ = server.set_nodelay(true);
                let _ = client.set_nodelay(true);
                {
                    let mut open = s.open.lock().unwrap();
                    open.push(client.try_clone().unwrap());
                    open.push(server.try_clone().unwrap());
                }
                pump(
                    client.try_clone().unwrap(),
                    server.try_clone().unwrap(),
                    Arc::clone(&s),
                    Dir::Up,
                );
                pump(server, client, Arc::clone(&s), Dir::Down);
            }
        });
        Proxy {
            port,
            shared,
            acceptor: Some(acceptor),
        }
    }

    /// The proxy for the server of `url` (`scheme://[userinfo@]host:port[/...]`)
    /// and `url` pointed at it.
    pub fn for_url(url: &str) -> (Proxy, String) {
        let (scheme, rest) = url.split_once("://").expect("scheme://");
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let authority = &rest[..end];
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (format!("{u}@"), h),
            None => (String::new(), authority),
        };
        let proxy = Proxy::start(hostport);
        let url = format!(
            "{scheme}://{userinfo}127.0.0.1:{}{}",
            proxy.port,
            &rest[end..]
        );
        (proxy, url)
    }

    /// Sets what happens to the bytes of `dir`, on every connection (open
    /// or later) from the next read on.
    pub fn set(&self, dir: Dir, flow: Flow) {
        match dir {
            Dir::Up => &self.shared.up,
            Dir::Down => &self.shared.down,
        }
        .store(encode(flow), Ordering::SeqCst);
    }

    /// Closes every connection; new ones are accepted and never answered.
    pub fn cut(&self) {
        self.shared.cut.store(true, Ordering::SeqCst);
        for c in self.shared.open.lock().unwrap().drain(..) {
            let _ = c.shutdown(Shutdown::Both);
        }
    }

    /// Closes the connections accepted while cut; forwards again (with the
    /// knobs as they are).
    pub fn restore(&self) {
        for c in self.shared.held.lock().unwrap().drain(..) {
            let _ = c.shutdown(Shutdown::Both);
        }
        self.shared.cut.store(false, Ordering::SeqCst);
    }

    /// Both directions forwarded at once again, on fresh connections only: a
    /// connection that lost bytes is out of step with its protocol (the
    /// client would read a later request's reply as an earlier one's), which
    /// no real network does to a TCP stream.
    pub fn heal(&self) {
        self.cut();
        self.set(Dir::Up, Flow::Pass);
        self.set(Dir::Down, Flow::Pass);
        self.restore();
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.acceptor.take().map(|a| a.join());
        self.cut();
        self.restore();
    }
}

/// Copies `from` to `to` until either end closes, then shuts both down: a
/// reader thread applies the direction's knob at each read and hands the
/// bytes with their due time to a writer thread, so a delay holds every
/// chunk back by the same amount without slowing the reads.
fn pump(mut from: TcpStream, mut to: TcpStream, shared: Arc<ProxyShared>, dir: Dir) {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    let (f2, t2) = (from.try_clone().unwrap(), to.try_clone().unwrap());
    std::thread::spawn(move || {
        let mut buf = [0u8; 16384];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let due = match shared.flow(dir) {
                        Flow::Pass => Instant::now(),
                        Flow::Drop => continue,
                        Flow::Delay(ms) => Instant::now() + Duration::from_millis(ms),
                    };
                    if tx.send((due, buf[..n].to_vec())).is_err() {
                        break;
                    }
                }
            }
        }
        // The writer sends what is still due, then closes both ends.
    });
    std::thread::spawn(move || {
        for (due, bytes) in rx {
            let wait = due.saturating_duration_since(Instant::now());
            if !wait.is_zero() {
                std::thread::sleep(wait);
            }
            if to.write_all(&bytes).is_err() {
                break;
            }
        }
        let _ = f2.shutdown(Shutdown::Both);
        let _ = t2.shutdown(Shutdown::Both);
    });
}
