//! The HTTP/1.1 fast path: Leaf's `GET /api/snowflake/get/{key}` and
//! `GET /healthz`, answered straight from the connection's read buffer.
//!
//! Leaf's clients ask for one ID per request, so the cost of a request is
//! the HTTP stack's: hyper and axum build a request, a header map, a router
//! match and a response for a body of 19 digits. Here a plain HTTP/1.1
//! connection is read into one buffer, each complete request in it is
//! parsed with httparse (hyper's own parser) and, if it is one of those two
//! routes in its plainest form, answered into one write buffer: the same
//! status, headers and body as the router's answer, counted in the same
//! metrics. Everything else — another route or method, HTTP/1.0 or HTTP/2,
//! a body, `Expect`, `Upgrade`, a `Connection` other than `close` or
//! `keep-alive`, a percent-encoded key, a missing or wrong token, a key that
//! names no generator, a request line and headers over `max_header_bytes` —
//! is handed to hyper with the bytes read so far ([`Outcome::Handoff`]), and
//! hyper serves the rest of the connection as it serves any other.
//!
//! The limits hold as on hyper's path: the first request's headers must
//! arrive within `header_timeout` of the connection's start, a later one's
//! within the smaller of `header_timeout` and `idle_timeout` of the previous
//! answer; on shutdown an idle
//! connection is closed at once, a request being read or answered finishes
//! with `connection: close`, and a connection that has not begun its first
//! request gets [`FIRST_REQUEST_AT_SHUTDOWN`] for it. With a request rate
//! limit (`--rate-limit`) or `--fast-path false` every request takes hyper's
//! path.

use std::io::IoSlice;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use axum::response::IntoResponse;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::sync::watch;

use crate::access::Entry;
use crate::app::{ApiError, AppState, ROUTES};
use crate::listen::{Activity, FIRST_REQUEST_AT_SHUTDOWN};
use crate::metrics::ReqLabel;
use crate::net::Limits;

/// Headers a fast request may have (hyper takes up to 100: more is handed over).
const MAX_HEADERS: usize = 32;
/// The read buffer's first size; it grows to `max_header_bytes`.
const FIRST_BUFFER: usize = 4096;
const LEAF_PREFIX: &str = "/api/snowflake/get/";
const LEAF_ROUTE: usize = 3;
const HEALTHZ_ROUTE: usize = 6;
/// What the fast path did with a connection.
pub(crate) enum Outcome<I> {
    /// The connection is over (closed by the client, timed out, shut down,
    /// or answered with `connection: close`).
    Closed,
    /// A request the fast path does not answer begins at the first of these
    /// bytes (read from `I` already): hyper serves the connection from here.
    Handoff(I, Vec<u8>),
}

/// A request the fast path answers.
#[derive(Debug, PartialEq)]
enum Plan<'a> {
    /// Leaf's ID route with this key (plain characters, not empty).
    Leaf {
        key: &'a str,
        auth: Option<&'a [u8]>,
    },
    /// `/healthz`.
    Healthz,
}

/// What `req` asks for, if the fast path answers it exactly as the router
/// would, and whether the client asked to close; `None`: hyper's path.
fn plan<'a>(req: &httparse::Request<'_, 'a>) -> Option<(Plan<'a>, bool)> {
    if req.method != Some("GET") || req.version != Some(1) {
        return None;
    }
    let target = req.path?;
    // The query is ignored by both routes; the path must be exactly the
    // route's, in characters that need no decoding.
    let path = target.split_once('?').map_or(target, |(p, _)| p);
    if !target.bytes().all(plain_or_query) || path.contains('%') {
        return None;
    }
    let mut close = false;
    let mut auth = None;
    for h in req.headers.iter() {
        let name = h.name.as_bytes();
        if name.eq_ignore_ascii_case(b"authorization") {
            auth.get_or_insert(h.value);
        } else if name.eq_ignore_ascii_case(b"connection") {
            if h.value.eq_ignore_ascii_case(b"close") {
                close = true;
            } else if !h.value.eq_ignore_ascii_case(b"keep-alive") {
                return None;
            }
        } else if name.eq_ignore_ascii_case(b"content-length")
            || name.eq_ignore_ascii_case(b"transfer-encoding")
            || name.eq_ignore_ascii_case(b"expect")
            || name.eq_ignore_ascii_case(b"upgrade")
        {
            return None;
        }
    }
    let plan = if path == "/healthz" {
        Plan::Healthz
    } else {
        let key = path.strip_prefix(LEAF_PREFIX)?;
        if key.is_empty() || key.contains('/') {
            return None;
        }
        Plan::Leaf { key, auth }
    };
    Some((plan, close))
}

/// What the fast path makes of `raw`, one request's head: `None` if hyper
/// answers it, else the route's pattern, the Leaf key (the generator's
/// name as the router would read it), whether the client asked to close.
/// For the fuzz target (fuzz/fuzz_targets/server_query.rs).
#[doc(hidden)]
pub fn classify(raw: &[u8]) -> Option<(&'static str, Option<&str>, bool)> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(raw) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return None,
    }
    Some(match plan(&req)? {
        (Plan::Healthz, close) => (ROUTES[HEALTHZ_ROUTE], None, close),
        (Plan::Leaf { key, .. }, close) => (ROUTES[LEAF_ROUTE], Some(key), close),
    })
}

/// A byte of a request target the fast path takes: RFC 3986's unreserved
/// and sub-delimiters, `:`, `@`, `/`, `?` and `%` (refused in the path
/// above, ignored in a query).
fn plain_or_query(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?%".contains(&b)
}

/// Serves `io` while its requests are fast ones (see the module's comment).
pub(crate) async fn serve<I>(
    mut io: I,
    state: &AppState,
    limits: &Limits,
    stop: &watch::Receiver<bool>,
    activity: &Activity,
    peer: SocketAddr,
) -> Outcome<I>
where
    I: AsyncRead + AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; FIRST_BUFFER.min(limits.max_header_bytes)];
    // The bytes read and not yet answered: buf[start..end].
    let (mut start, mut end) = (0, 0);
    let mut out = Vec::with_capacity(256);
    let mut served = false;
    let mut stopping = false;
    // The request being read must be complete by then. The timer below
    // fires at an earlier deadline and is moved on when it does: no timer
    // is reset per request.
    let mut deadline = Instant::now() + limits.header_timeout;
    // When the timer fires: reset when the deadline comes before it, and
    // when it fires before the deadline.
    let mut armed = deadline;
    let timer = tokio::time::sleep_until(armed.into());
    tokio::pin!(timer);
    // One wait for the shutdown for the connection's life (registered
    // once, not per read); `stop` itself is looked at before each answer.
    let mut told = stop.clone();
    let shutdown = async move {
        let _ = told.wait_for(|s| *s).await;
    };
    tokio::pin!(shutdown);
    loop {
        // An atomic read of the channel's version (no lock): the only change
        // it sees is the shutdown, or its sender gone.
        stopping = stopping || stop.has_changed().unwrap_or(true);
        let mut close = false;
        // When the first request of this read began being answered; when
        // the last one was answered (the next one's wait starts there).
        let mut begun = None;
        let mut answered = None;
        while start < end && !close {
            let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut req = httparse::Request::new(&mut headers);
            let len = match req.parse(&buf[start..end]) {
                Ok(httparse::Status::Complete(n)) if n <= limits.max_header_bytes => n,
                Ok(httparse::Status::Partial) if end - start < limits.max_header_bytes => break,
                _ => return handoff(io, &out, &buf[start..end], served, activity).await,
            };
            let Some((plan, asked_close)) = plan(&req) else {
                return handoff(io, &out, &buf[start..end], served, activity).await;
            };
            close = asked_close || stopping;
            let begun = *begun.get_or_insert_with(Instant::now);
            let Some(at) = answer(state, plan, close, &mut out, begun, peer).await else {
                return handoff(io, &out, &buf[start..end], served, activity).await;
            };
            answered = Some(at);
            start += len;
            served = true;
        }
        if !out.is_empty() {
            if write(&mut io, &out, limits).await.is_err() {
                return Outcome::Closed;
            }
            out.clear();
            if close {
                finish(&mut io).await;
                return Outcome::Closed;
            }
            // The next request: the wait for it counts as reading its
            // headers (hyper's rule) and as idle time, whichever is less.
            deadline = answered.unwrap_or_else(Instant::now)
                + limits.header_timeout.min(limits.idle_timeout);
            if deadline < armed {
                armed = deadline;
                timer.as_mut().reset(armed.into());
            }
        }
        if start == end {
            (start, end) = (0, 0);
            if stopping {
                // Idle when the shutdown came: closed now, or (no request
                // yet) after its first request's short grace.
                if served {
                    finish(&mut io).await;
                    return Outcome::Closed;
                }
                let by = Instant::now() + FIRST_REQUEST_AT_SHUTDOWN;
                if by < deadline {
                    (deadline, armed) = (by, by);
                    timer.as_mut().reset(armed.into());
                }
            }
        } else if end == buf.len() {
            // A partial request fills the buffer: room at its front first,
            // else a larger buffer (below max_header_bytes, checked above).
            if start > 0 {
                buf.copy_within(start..end, 0);
                (start, end) = (0, end - start);
            } else {
                buf.resize((buf.len() * 2).min(limits.max_header_bytes), 0);
            }
        }
        tokio::select! {
            r = io.read(&mut buf[end..]) => match r {
                Ok(0) | Err(_) => return Outcome::Closed,
                Ok(n) => end += n,
            },
            () = &mut shutdown, if !stopping => stopping = true,
            () = &mut timer => {
                if Instant::now() >= deadline {
                    return Outcome::Closed;
                }
                armed = deadline;
                timer.as_mut().reset(armed.into());
            }
        }
    }
}

/// Answers `plan` into `out` (with `connection: close` if `close`), its
/// latency counted from `begun`, logged with `peer` if the access log is
/// on; when it was answered. `None`: the router must answer it (a token
/// missing or wrong, a key that names no generator), nothing written.
async fn answer(
    state: &AppState,
    plan: Plan<'_>,
    close: bool,
    out: &mut Vec<u8>,
    begun: Instant,
    peer: SocketAddr,
) -> Option<Instant> {
    let observe = |route: usize, status: u16, ids: usize| {
        let now = Instant::now();
        let took = now - begun;
        let m = &state.metrics;
        m.observe_latency(route, ROUTES[route], took.as_secs_f64());
        if let Some(log) = state.access_log {
            log.access(Entry {
                route: ROUTES[route],
                method: "GET",
                status,
                code: None,
                ids,
                took,
                peer: Some(peer),
            });
        }
        Some(now)
    };
    let key = match plan {
        Plan::Healthz => {
            head(out, b"200 OK", TEXT, 3, close);
            out.extend_from_slice(b"ok\n");
            state.metrics.count_ok(HEALTHZ_ROUTE, ROUTES[HEALTHZ_ROUTE]);
            return observe(HEALTHZ_ROUTE, 200, 0);
        }
        Plan::Leaf { key, auth } => {
            if state
                .tokens
                .check(auth, Some(crate::auth::Scope::Ids))
                .is_err()
            {
                return None;
            }
            key
        }
    };
    let g = match state.gens.iter().find(|g| g.name == key) {
        Some(g) => g,
        None if state.gens.len() == 1 => &state.gens[0],
        None => return None,
    };
    match state.issue_one(g).await {
        Ok(id) => {
            let mut digits = itoa::Buffer::new();
            let id = digits.format(id).as_bytes();
            head(out, b"200 OK", TEXT, id.len(), close);
            out.extend_from_slice(id);
            state.metrics.count_ok(LEAF_ROUTE, ROUTES[LEAF_ROUTE]);
            observe(LEAF_ROUTE, 200, 1)
        }
        Err(e) => {
            let status = e.status().as_u16();
            error(out, e, close).await;
            let label = ReqLabel {
                route: ROUTES[LEAF_ROUTE].to_string(),
                status,
            };
            state.metrics.requests.get_or_create(&label).inc();
            observe(LEAF_ROUTE, status, 0)
        }
    }
}

const TEXT: &[u8] = b"text/plain; charset=utf-8";

/// A 200 answer's head: the headers hyper writes for the router's
/// `no_store` answer, in its order.
fn head(out: &mut Vec<u8>, status: &[u8], kind: &[u8], len: usize, close: bool) {
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(status);
    out.extend_from_slice(b"\r\ncontent-type: ");
    out.extend_from_slice(kind);
    out.extend_from_slice(b"\r\ncache-control: no-store\r\n");
    tail(out, len, close);
}

/// The headers hyper adds after the answer's own: its length, `connection:
/// close` if so, the date; then the blank line.
fn tail(out: &mut Vec<u8>, len: usize, close: bool) {
    out.extend_from_slice(b"content-length: ");
    out.extend_from_slice(itoa::Buffer::new().format(len).as_bytes());
    if close {
        out.extend_from_slice(b"\r\nconnection: close");
    }
    out.extend_from_slice(b"\r\ndate: ");
    date(out);
    out.extend_from_slice(b"\r\n\r\n");
}

/// An error's answer, the router's own (`ApiError`'s response), written out.
async fn error(out: &mut Vec<u8>, e: ApiError, close: bool) {
    let (parts, body) = e.into_response().into_parts();
    // The body is one JSON string held in memory: never an error.
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(parts.status.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(parts.status.canonical_reason().unwrap_or("").as_bytes());
    out.extend_from_slice(b"\r\n");
    for (name, value) in &parts.headers {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    tail(out, body.len(), close);
    out.extend_from_slice(&body);
}

/// Appends the `date` header's value (IMF-fixdate), formatted once a second
/// per thread, as hyper does.
fn date(out: &mut Vec<u8>) {
    use std::cell::RefCell;
    thread_local! {
        static CACHED: RefCell<(u64, [u8; 29])> = const { RefCell::new((u64::MAX, [0; 29])) };
    }
    let now = SystemTime::now();
    let secs = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    CACHED.with(|c| {
        let mut c = c.borrow_mut();
        if c.0 != secs {
            let text = httpdate::fmt_http_date(now);
            let n = text.len().min(29);
            c.1[..n].copy_from_slice(&text.as_bytes()[..n]);
            c.0 = secs;
        }
        out.extend_from_slice(&c.1);
    });
}

/// Writes `out` whole; a client that reads nothing for `idle_timeout` (as
/// hyper's path would close it) ends the connection.
async fn write<I: AsyncWrite + Unpin>(io: &mut I, out: &[u8], limits: &Limits) -> Result<(), ()> {
    let all = async {
        io.write_all(out).await?;
        io.flush().await
    };
    match tokio::time::timeout(limits.idle_timeout, all).await {
        Ok(Ok(())) => Ok(()),
        _ => Err(()),
    }
}

/// Ends the connection's writing (a TLS close_notify), briefly.
async fn finish<I: AsyncWrite + Unpin>(io: &mut I) {
    let _ = tokio::time::timeout(Duration::from_secs(1), io.shutdown()).await;
}

/// Writes the answers so far, then hands the connection and `rest` to hyper.
async fn handoff<I: AsyncWrite + Unpin>(
    mut io: I,
    out: &[u8],
    rest: &[u8],
    served: bool,
    activity: &Activity,
) -> Outcome<I> {
    if !out.is_empty() && io.write_all(out).await.and(io.flush().await).is_err() {
        return Outcome::Closed;
    }
    if served {
        activity.served();
    }
    Outcome::Handoff(io, rest.to_vec())
}

/// `inner` with `pre` (bytes read from it already) to be read first: what
/// hyper reads after a handoff.
pub(crate) struct Rewind<I> {
    pre: Vec<u8>,
    at: usize,
    inner: I,
}

impl<I> Rewind<I> {
    pub(crate) fn new(inner: I, pre: Vec<u8>) -> Rewind<I> {
        Rewind { pre, at: 0, inner }
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for Rewind<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        if this.at < this.pre.len() {
            let n = (this.pre.len() - this.at).min(buf.remaining());
            buf.put_slice(&this.pre[this.at..this.at + n]);
            this.at += n;
            if this.at == this.pre.len() {
                this.pre = Vec::new();
                this.at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for Rewind<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_of(raw: &str) -> Option<(Plan<'_>, bool)> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(raw.as_bytes()) {
            Ok(httparse::Status::Complete(_)) => plan(&req),
            _ => None,
        }
    }

    #[test]
    fn the_route_indexes_name_the_fast_routes() {
        assert_eq!(ROUTES[LEAF_ROUTE], "/api/snowflake/get/{key}");
        assert_eq!(ROUTES[HEALTHZ_ROUTE], "/healthz");
    }

    #[test]
    fn only_plain_leaf_and_healthz_requests_are_fast() {
        let leaf = |key| Some((Plan::Leaf { key, auth: None }, false));
        assert_eq!(
            plan_of("GET /api/snowflake/get/orders HTTP/1.1\r\nHost: a\r\n\r\n"),
            leaf("orders")
        );
        assert_eq!(
            plan_of("GET /api/snowflake/get/a-b.c_d~?x=%20 HTTP/1.1\r\n\r\n"),
            leaf("a-b.c_d~")
        );
        assert_eq!(
            plan_of("GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n"),
            Some((Plan::Healthz, true))
        );
        assert_eq!(
            plan_of("GET /healthz HTTP/1.1\r\nconnection: Keep-Alive\r\n\r\n"),
            Some((Plan::Healthz, false))
        );
        assert_eq!(
            plan_of("GET /api/snowflake/get/k HTTP/1.1\r\nAuthorization: Bearer t\r\nauthorization: x\r\n\r\n"),
            Some((
                Plan::Leaf {
                    key: "k",
                    auth: Some(&b"Bearer t"[..])
                },
                false
            ))
        );
        for hyper in [
            "POST /api/snowflake/get/k HTTP/1.1\r\n\r\n",
            "HEAD /healthz HTTP/1.1\r\n\r\n",
            "GET /healthz HTTP/1.0\r\n\r\n",
            "GET /healthz/ HTTP/1.1\r\n\r\n",
            "GET /readyz HTTP/1.1\r\n\r\n",
            "GET /api/snowflake/get/ HTTP/1.1\r\n\r\n",
            "GET /api/snowflake/get/a/b HTTP/1.1\r\n\r\n",
            "GET /api/snowflake/get/a%20b HTTP/1.1\r\n\r\n",
            "GET /api/snowflake/get/a\"b HTTP/1.1\r\n\r\n",
            "GET /api/snowflake/get/k#f HTTP/1.1\r\n\r\n",
            "GET http://a/healthz HTTP/1.1\r\n\r\n",
            "GET /api/segment/get/k HTTP/1.1\r\n\r\n",
            "GET /healthz HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
            "GET /healthz HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET /healthz HTTP/1.1\r\nExpect: 100-continue\r\n\r\n",
            "GET /healthz HTTP/1.1\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\n\r\n",
            "GET /healthz HTTP/1.1\r\nConnection: upgrade\r\n\r\n",
            "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        ] {
            assert_eq!(plan_of(hyper), None, "{hyper:?}");
        }
    }
}
