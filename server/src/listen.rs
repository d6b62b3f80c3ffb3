//! Accepting connections: HTTP/1.1 and HTTP/2 on one port (h2c, and with
//! TLS h2 by ALPN), hyper-util's connection builder over the axum router,
//! and the limits that keep one client from taking the server.
//!
//! - At most `max_connections` open connections, and at most
//!   `max_connections_per_ip` from one client address (if set). Beyond either a new plain-HTTP
//!   connection gets a `503` (`too_many_connections`, `Retry-After: 1`)
//!   written at once and is closed; a new TLS connection is closed without a
//!   handshake. At most [`MAX_REFUSING`] refusals run at once; beyond, new
//!   connections are closed at once.
//! - A request line and headers larger than `max_header_bytes`: `431` (a URL
//!   alone too long for it: `414` or `431`) from hyper, then the connection is closed;
//!   over HTTP/2 the header list is limited to the same size.
//! - A connection must deliver its first request (TLS handshake included)
//!   within `header_timeout`; an HTTP/1.1 request's headers must arrive within
//!   it too (hyper also counts the wait for the next request on a kept-alive
//!   HTTP/1.1 connection as reading headers).
//! - A connection with no request in progress for `idle_timeout` is closed
//!   gracefully (HTTP/2: GOAWAY).
//! - A client that sends requests and reads nothing: over HTTP/1.1 hyper
//!   reads no further request while an answer waits in its buffer, and the
//!   request ended when its (whole) body went there, so the idle timeout
//!   closes the connection. Over HTTP/2 its streams wait for flow-control
//!   window and stay in progress: an HTTP/2 PING, sent after `idle_timeout`
//!   without a frame from the client, must be answered within
//!   `header_timeout`.
//!
//! On shutdown the listener closes, every connection is told to finish its
//! requests and close, and the caller's grace period bounds the wait. A
//! connection accepted before the shutdown that has not yet begun its first
//! request gets [`FIRST_REQUEST_AT_SHUTDOWN`] for it: the client connected
//! while the server was accepting and its request is answered (with
//! `connection: close`), not met by a close before any byte.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use hyper::body::{Bytes, Frame, Incoming, SizeHint};
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio_rustls::TlsAcceptor;

use crate::app::AppState;
use crate::fast::{Outcome, Rewind};
use crate::log::Log;
use crate::net::{Limits, Net, HTTP2_MAX_LOCAL_RESETS, HTTP2_MAX_PENDING_RESETS, MAX_REFUSING};

/// The connection metrics the listener keeps.
#[derive(Clone, Debug)]
pub struct ConnMetrics {
    /// Open connections.
    pub open: Gauge,
    /// Connections refused past `max_connections`.
    pub refused: Counter,
}

/// What every connection task shares.
struct Shared {
    router: Router,
    /// The fast path's state, when it serves.
    fast: Option<Arc<AppState>>,
    tls: Option<TlsAcceptor>,
    auto: auto::Builder<TokioExecutor>,
    h2: auto::Builder<TokioExecutor>,
    limits: Limits,
    metrics: ConnMetrics,
    /// Requests carry their client's address ([`crate::access::Peer`]) for the access log.
    peers: bool,
}

/// How long a connection with no request yet has, once shutdown begins, to
/// begin its first one (its request was likely on its way when the
/// listener closed).
pub const FIRST_REQUEST_AT_SHUTDOWN: Duration = Duration::from_millis(500);

/// How many HTTP listeners (each with a thread of its own) to open: tokio's
/// worker count, `TOKIO_WORKER_THREADS` if set, else one per CPU. Linux
/// only (SO_REUSEPORT); elsewhere one, served by the multi-thread runtime.
pub fn workers() -> usize {
    if !cfg!(target_os = "linux") {
        return 1;
    }
    std::env::var("TOKIO_WORKER_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Binds `n` listening sockets to `addr`, every one with SO_REUSEPORT so
/// that the kernel spreads new connections over them (port 0: the first
/// one's port for the others). With `n == 1`, or off Linux, one plain
/// listener. Call it inside a tokio runtime; the listeners returned are
/// non-blocking and registered with none.
pub fn bind(addr: SocketAddr, n: usize) -> std::io::Result<Vec<std::net::TcpListener>> {
    if n <= 1 || !cfg!(target_os = "linux") {
        return Ok(vec![reuse(addr, false)?]);
    }
    if addr.port() != 0 {
        // A socket without SO_REUSEPORT first: if another process listens on
        // the port (even with SO_REUSEPORT, as a second server would), this
        // fails with "address in use" instead of sharing its connections.
        socket(addr)?.bind(addr)?;
    }
    let first = reuse(addr, true)?;
    let addr = first.local_addr()?;
    let mut all = vec![first];
    for _ in 1..n {
        all.push(reuse(addr, true)?);
    }
    Ok(all)
}

fn socket(addr: SocketAddr) -> std::io::Result<TcpSocket> {
    let s = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    // As tokio's and std's TcpListener::bind do on Unix.
    #[cfg(unix)]
    s.set_reuseaddr(true)?;
    Ok(s)
}

/// One listening socket (backlog 1024, as tokio's TcpListener::bind).
fn reuse(addr: SocketAddr, port: bool) -> std::io::Result<std::net::TcpListener> {
    let s = socket(addr)?;
    #[cfg(target_os = "linux")]
    if port {
        s.set_reuseport(true)?;
    }
    #[cfg(not(target_os = "linux"))]
    let _ = port;
    s.bind(addr)?;
    s.listen(1024)?.into_std()
}

/// Serves `router` on `listeners` (from [`bind`]) until `shutdown`
/// resolves, then closes the listeners and lets open connections finish for
/// at most `grace` (false: the grace period elapsed with connections still
/// open).
///
/// One listener is served by the caller's runtime. Several (SO_REUSEPORT)
/// get a thread each, with a current-thread runtime: a connection lives on
/// the thread that accepted it, with no wake-ups across threads. The
/// connection limit, the refusals and the shutdown are shared by all.
#[allow(clippy::too_many_arguments)]
pub async fn serve(
    listeners: Vec<std::net::TcpListener>,
    router: Router,
    fast: Option<Arc<AppState>>,
    net: &Net,
    metrics: ConnMetrics,
    shutdown: impl Future<Output = ()>,
    grace: Duration,
    log: Log,
) -> bool {
    let limits = net.limits.clone();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(limits.max_header_bytes);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_header_list_size(u32::try_from(limits.max_header_bytes).unwrap_or(u32::MAX))
        // Said here rather than left to hyper's and h2's defaults: streams
        // per connection, and the resets that end a connection (GOAWAY).
        .max_concurrent_streams(limits.http2_max_streams)
        .max_pending_accept_reset_streams(HTTP2_MAX_PENDING_RESETS)
        .max_local_error_reset_streams(HTTP2_MAX_LOCAL_RESETS)
        // A PING after idle_timeout without a frame from the client, answered
        // within header_timeout or the connection closes: a client that reads
        // nothing keeps its streams in progress (waiting for flow-control
        // window), which the idle timeout does not end.
        .keep_alive_interval(Some(limits.idle_timeout))
        .keep_alive_timeout(limits.header_timeout);
    let peers = fast.as_ref().is_some_and(|s| s.access_log.is_some());
    let shared = Arc::new(Shared {
        peers,
        router,
        fast: fast.filter(|_| net.fast_path),
        tls: net.tls.clone().map(TlsAcceptor::from),
        h2: builder.clone().http2_only(),
        auto: builder,
        limits: limits.clone(),
        metrics,
    });
    let conns = Arc::new(Semaphore::new(limits.max_connections));
    let (stop_tx, stop_rx) = watch::channel(false);
    // Every accept loop holds a sender: the channel closes when all have
    // ended (and dropped their listeners).
    let (open_tx, mut open_rx) = tokio::sync::mpsc::channel::<()>(1);
    let accept = Accept {
        shared,
        per_ip: Arc::new(PerIp {
            max: limits.max_connections_per_ip,
            open: Mutex::new(HashMap::new()),
        }),
        conns: conns.clone(),
        refusing: Arc::new(Semaphore::new(MAX_REFUSING)),
        stop: stop_rx,
        log,
        _open: open_tx,
    };
    // Told when the grace period is over: the listener threads end, their
    // connections with them.
    let (done_tx, done_rx) = watch::channel(false);
    let mut threads = Vec::new();
    let several = listeners.len() > 1;
    for (i, listener) in listeners.into_iter().enumerate() {
        if !several {
            tokio::spawn(accept_loop(listener, accept.clone()));
            continue;
        }
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(r) => r,
            Err(e) => {
                // No runtime of its own: this listener is served here.
                log.event(
                    "error",
                    "listener_thread_failed",
                    &[("message", e.to_string().into())],
                );
                tokio::spawn(accept_loop(listener, accept.clone()));
                continue;
            }
        };
        let (a, mut done) = (accept.clone(), done_rx.clone());
        let thread = std::thread::Builder::new()
            .name(format!("http-{i}"))
            .spawn(move || {
                runtime.block_on(async move {
                    accept_loop(listener, a).await;
                    // Its connections run on this thread until then.
                    let _ = done.wait_for(|d| *d).await;
                });
                runtime.shutdown_timeout(Duration::from_secs(1));
            });
        match thread {
            Ok(t) => threads.push(t),
            Err(e) => {
                // The listener went with the closure: its port is still
                // served by the others.
                log.event(
                    "error",
                    "listener_thread_failed",
                    &[("message", e.to_string().into())],
                );
            }
        }
    }
    drop(accept);
    shutdown.await;
    let _ = stop_tx.send(true);
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    let finished = tokio::time::timeout(grace, async {
        // Every listener closed first: no connection is accepted after this.
        let _ = open_rx.recv().await;
        conns.acquire_many(all).await
    })
    .await
    .is_ok();
    let _ = done_tx.send(true);
    let _ = tokio::task::spawn_blocking(move || {
        for t in threads {
            let _ = t.join();
        }
    })
    .await;
    finished
}

/// What every accept loop shares.
#[derive(Clone)]
struct Accept {
    shared: Arc<Shared>,
    per_ip: Arc<PerIp>,
    conns: Arc<Semaphore>,
    refusing: Arc<Semaphore>,
    stop: watch::Receiver<bool>,
    log: Log,
    /// Dropped when the loop ends.
    _open: tokio::sync::mpsc::Sender<()>,
}

/// Open connections per client IP address (`--max-connections-per-ip`).
struct PerIp {
    max: Option<usize>,
    open: Mutex<HashMap<IpAddr, usize>>,
}

/// One open connection of an address, counted until dropped.
struct IpSlot(Arc<PerIp>, IpAddr);

impl PerIp {
    /// A slot for `ip`, or None when it has `max` open already (no limit:
    /// a slot that counts nothing).
    fn take(self: &Arc<PerIp>, ip: IpAddr) -> Option<Option<IpSlot>> {
        let Some(max) = self.max else {
            return Some(None);
        };
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let n = open.entry(ip).or_insert(0);
        if *n >= max {
            return None;
        }
        *n += 1;
        Some(Some(IpSlot(Arc::clone(self), ip)))
    }
}

impl Drop for IpSlot {
    fn drop(&mut self) {
        let mut open = self.0.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = open.get_mut(&self.1) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.1);
            }
        }
    }
}

/// Resolves once the stop is told (or its sender is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// Accepts connections on `listener` until the stop is told, spawning each
/// on the runtime this runs on.
async fn accept_loop(listener: std::net::TcpListener, a: Accept) {
    let log = a.log;
    let listener = match TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            log.event(
                "error",
                "accept_failed",
                &[("message", e.to_string().into())],
            );
            return;
        }
    };
    let mut stop = a.stop.clone();
    let mut last_accept_error: Option<Instant> = None;
    loop {
        let (stream, peer) = tokio::select! {
            biased;
            () = stopped(&mut stop) => break,
            r = listener.accept() => match r {
                Ok((stream, peer)) => (stream, peer),
                Err(e) => {
                    // Out of file descriptors and the like: at most one line a
                    // second, and a pause instead of a busy loop.
                    if last_accept_error.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                        log.event("error", "accept_failed", &[("message", e.to_string().into())]);
                        last_accept_error = Some(Instant::now());
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let slot = a.per_ip.take(peer.ip());
        match (a.conns.clone().try_acquire_owned(), slot) {
            (Ok(permit), Some(slot)) => {
                tokio::spawn(connection(
                    stream,
                    peer,
                    (permit, slot),
                    a.shared.clone(),
                    a.stop.clone(),
                ));
            }
            _ => {
                a.shared.metrics.refused.inc();
                if let Ok(permit) = a.refusing.clone().try_acquire_owned() {
                    tokio::spawn(refuse(stream, a.shared.tls.is_some(), permit));
                }
                // Else dropped here: closed at once.
            }
        }
    }
}

/// The answer past `max_connections` (plain HTTP only).
async fn refuse(mut stream: TcpStream, tls: bool, _permit: OwnedSemaphorePermit) {
    if tls {
        // Answering would take a handshake: closed instead.
        return;
    }
    const BODY: &str = r#"{"error":{"code":"too_many_connections","message":"the server has reached its connection limit (--max-connections, or --max-connections-per-ip for this address): try again later"}}"#;
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         cache-control: no-store\r\nretry-after: 1\r\nconnection: close\r\n\
         content-length: {}\r\n\r\n{BODY}",
        BODY.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await?;
        // Read what the client sent (a little, briefly), so that closing
        // does not reset the connection before the client reads the answer.
        let mut buf = [0u8; 4096];
        let mut total = 0;
        while total < 64 * 1024 {
            let n = stream.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            total += n;
        }
        Ok::<_, std::io::Error>(())
    })
    .await;
}

/// One connection: the TLS handshake if any, then HTTP until it ends, is
/// idle too long, or shutdown closes it.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    _permit: (OwnedSemaphorePermit, Option<IpSlot>),
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) {
    shared.metrics.open.inc();
    let _open = OnDrop(shared.metrics.open.clone());
    let activity = Arc::new(Activity::new());
    match &shared.tls {
        None => drive(stream, false, &shared, activity, stop, peer).await,
        Some(acceptor) => {
            let handshake =
                tokio::time::timeout(shared.limits.header_timeout, acceptor.accept(stream));
            let tls = tokio::select! {
                r = handshake => r,
                _ = stop.wait_for(|s| *s) => return,
            };
            // A failed or too slow handshake: the connection is closed.
            let Ok(Ok(tls)) = tls else { return };
            let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
            drive(tls, h2, &shared, activity, stop, peer).await;
        }
    }
}

/// Decrements the open-connections gauge when the connection ends.
struct OnDrop(Gauge);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.dec();
    }
}

async fn drive<I>(
    io: I,
    h2: bool,
    shared: &Shared,
    activity: Arc<Activity>,
    mut stop: watch::Receiver<bool>,
    peer: SocketAddr,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    // Plain HTTP/1.1 requests first, then hyper from the first other one.
    let (io, pre) = match (&shared.fast, h2) {
        (Some(s), false) => {
            match crate::fast::serve(io, s, &shared.limits, &stop, &activity, peer).await {
                Outcome::Closed => return,
                Outcome::Handoff(io, pre) => (io, pre),
            }
        }
        _ => (io, Vec::new()),
    };
    let io = Rewind::new(io, pre);
    let builder = if h2 { &shared.h2 } else { &shared.auto };
    let service = TowerToHyperService::new(Tracked {
        router: shared.router.clone(),
        activity: activity.clone(),
        peer: shared.peers.then_some(peer),
    });
    let mut conn = pin!(builder.serve_connection_with_upgrades(TokioIo::new(io), service));
    let limits = &shared.limits;
    let mut closing = false;
    // After an idle close is asked for, the connection has this long to end.
    let mut hard: Option<tokio::time::Instant> = None;
    // Shutdown came before the first request: closed when it begins (after
    // its answer) or at this instant.
    let mut first_by: Option<tokio::time::Instant> = None;
    loop {
        let wake = match (hard, first_by) {
            (Some(h), _) => h,
            (None, Some(f)) => f,
            (None, None) => tokio::time::Instant::from_std(activity.deadline(limits)),
        };
        tokio::select! {
            _ = conn.as_mut() => return,
            // A request ended: the idle deadline moved.
            () = activity.ended.notified() => {}
            _ = stop.wait_for(|s| *s), if !closing && first_by.is_none() => {
                if activity.fresh() {
                    first_by = Some(tokio::time::Instant::now() + FIRST_REQUEST_AT_SHUTDOWN);
                } else {
                    closing = true;
                    conn.as_mut().graceful_shutdown();
                }
            }
            () = activity.began.notified(), if first_by.is_some() && !closing => {
                closing = true;
                conn.as_mut().graceful_shutdown();
            }
            () = tokio::time::sleep_until(wake) => {
                if hard.is_some() {
                    return;
                }
                if first_by.is_some() && !closing {
                    closing = true;
                    conn.as_mut().graceful_shutdown();
                    continue;
                }
                if !closing && activity.expired(limits) {
                    closing = true;
                    conn.as_mut().graceful_shutdown();
                    hard = Some(tokio::time::Instant::now() + Duration::from_secs(1));
                }
            }
        }
    }
}

/// Whether a connection is in use: requests in progress (until their
/// response body is written) and when the last one ended.
pub(crate) struct Activity {
    start: Instant,
    active: AtomicUsize,
    /// Milliseconds after `start` the last request ended; `u64::MAX`: none yet.
    last_ms: AtomicU64,
    /// Told when a request ends.
    ended: tokio::sync::Notify,
    /// Told when a request begins.
    began: tokio::sync::Notify,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            start: Instant::now(),
            active: AtomicUsize::new(0),
            last_ms: AtomicU64::new(u64::MAX),
            ended: tokio::sync::Notify::new(),
            began: tokio::sync::Notify::new(),
        }
    }

    /// No request has begun on the connection yet.
    fn fresh(&self) -> bool {
        self.active.load(Ordering::SeqCst) == 0 && self.last_ms.load(Ordering::SeqCst) == u64::MAX
    }

    /// When the connection would be idle too long (or when to look again).
    fn deadline(&self, limits: &Limits) -> Instant {
        if self.active.load(Ordering::SeqCst) > 0 {
            return Instant::now() + limits.idle_timeout;
        }
        match self.last_ms.load(Ordering::SeqCst) {
            u64::MAX => self.start + limits.header_timeout,
            ms => self.start + Duration::from_millis(ms) + limits.idle_timeout,
        }
    }

    fn expired(&self, limits: &Limits) -> bool {
        self.active.load(Ordering::SeqCst) == 0 && Instant::now() >= self.deadline(limits)
    }

    /// A request has just been answered (by hyper or the fast path).
    pub(crate) fn served(&self) {
        let ms = self.start.elapsed().as_millis() as u64;
        self.last_ms.store(ms, Ordering::SeqCst);
    }
}

/// One request in progress, from dispatch until its response body is dropped.
struct Busy(Arc<Activity>);

impl Busy {
    fn start(a: Arc<Activity>) -> Busy {
        a.active.fetch_add(1, Ordering::SeqCst);
        a.began.notify_one();
        Busy(a)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.served();
        self.0.active.fetch_sub(1, Ordering::SeqCst);
        self.0.ended.notify_one();
    }
}

/// The router, with each request counted in its connection's [`Activity`].
#[derive(Clone)]
struct Tracked {
    router: Router,
    activity: Arc<Activity>,
    /// The client's address, given to each request (only for the access log).
    peer: Option<SocketAddr>,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl tower_service::Service<Request<Incoming>> for Tracked {
    type Response = Response<Guarded>;
    type Error = Infallible;
    type Future = BoxFuture<Result<Response<Guarded>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // An axum Router is always ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut req: Request<Incoming>) -> Self::Future {
        if let Some(peer) = self.peer {
            req.extensions_mut().insert(crate::access::Peer(peer));
        }
        let busy = Busy::start(self.activity.clone());
        let fut = tower_service::Service::call(&mut self.router, req);
        Box::pin(async move {
            let response = fut.await?;
            Ok(response.map(|inner| Guarded { inner, _busy: busy }))
        })
    }
}

/// A response body that keeps its request counted until it is written.
struct Guarded {
    inner: axum::body::Body,
    _busy: Busy,
}

impl hyper::body::Body for Guarded {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
