//! The access log (`--access-log`): one line per HTTP request and gRPC call
//! on the HTTP port, once it is answered, in the lifecycle log's format and
//! stream (text or JSON lines on stderr, `log.rs`): the event `request` with
//! the route's pattern (never the raw path or query), the method, the
//! status (and a gRPC call's code), the IDs issued, the duration and the
//! client's address (the TCP peer: behind a proxy, the proxy's). No header
//! is read for it, so no token or `Authorization` value can reach it.
//! Thrift calls are not logged.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;

use crate::log::Log;

/// How many IDs an answer carries: a response extension the ID routes set.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Issued(pub(crate) usize);

/// The client's address: a request extension the listener sets while the
/// access log is on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Peer(pub(crate) SocketAddr);

/// One answered request.
pub(crate) struct Entry<'a> {
    /// The route's pattern (`/v1/ids`), the gRPC method, or `unmatched`.
    pub(crate) route: &'a str,
    pub(crate) method: &'a str,
    pub(crate) status: u16,
    /// A gRPC call's status code's name (`Ok`, `InvalidArgument`, ...).
    pub(crate) code: Option<&'a str>,
    pub(crate) ids: usize,
    pub(crate) took: Duration,
    pub(crate) peer: Option<SocketAddr>,
}

impl Log {
    /// Writes `e` as one `request` line.
    pub(crate) fn access(&self, e: Entry<'_>) {
        // Milliseconds with microseconds: most answers take less than one.
        let ms = e.took.as_micros() as f64 / 1000.0;
        let mut fields: Vec<(&str, Value)> = Vec::with_capacity(7);
        fields.push(("route", e.route.into()));
        fields.push(("method", e.method.into()));
        fields.push(("status", e.status.into()));
        if let Some(code) = e.code {
            fields.push(("code", code.into()));
        }
        fields.push(("ids", e.ids.into()));
        fields.push(("duration_ms", ms.into()));
        fields.push((
            "client",
            e.peer.map_or(Value::Null, |p| p.to_string().into()),
        ));
        self.event("info", "request", &fields);
    }
}
